"""World tools: ``@read`` and ``@write`` mark them; signature and docstring make their schema.

A tool is a method of a ``World`` (or a plain function listed in its ``functions``) whose first
parameter after ``self`` is the call's ``Context``; every other parameter is an argument the
model gives, and must be annotated. ``tool_def`` reads one into a ``ToolDef``:

- the description is the docstring up to its first section (``Args:``, ``Returns:``,
  ``Raises:``, ``Example:``), whitespace collapsed;
- the parameters' JSON Schema comes from the annotations through pydantic (``str`` -> string,
  ``int`` -> integer, ``Literal[...]`` -> enum, ``list[str]`` -> array of strings, ``X | None``
  -> X, not required...), each described by its line in the docstring's ``Args:`` section
  (Google style: ``name: text``, continued on more-indented lines); a parameter with a default
  is optional; ``additionalProperties`` is false, so an argument the tool does not take is a
  schema violation the server reports (422) before the tool runs.

A tool marked ``user=True`` belongs to the user of a conversation (τ²'s dual control: the
customer's own phone): the user model is offered it and calls it on the episode's session; the
agent is never offered it and cannot call it.

A tool without a docstring, with an unannotated parameter or with a name that is no function name
(``FUNCTION_NAME``: letters, digits, ``_`` and ``-``, at most 64) is a ``WorldDefinitionError``
naming its file and line. Imports nothing of the project but the worlds' errors.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ConfigDict, Field, create_model

from mock_tools.worlds.errors import WorldDefinitionError

__all__ = ["ToolDef", "ToolKind", "is_tool", "read", "tool_def", "write"]

ToolKind = Literal["read", "write"]
_MARK = "__world_tool__"
FUNCTION_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""The names a tool may have: what OpenAI's API accepts as a function's name."""
_SECTION = re.compile(
    r"^\s*(Args|Arguments|Parameters|Returns|Return|Raises|Yields|Example|Examples|Note|Notes):\s*$"
)


@dataclass(frozen=True)
class _Mark:
    kind: ToolKind
    name: str | None
    user: bool = False


@dataclass(frozen=True)
class ToolDef:
    """One tool of a world, ready to offer and to call."""

    name: str
    kind: ToolKind
    description: str
    parameters: dict[str, Any]
    function: Callable[..., Any]
    method: bool
    """A method (called with the world instance first) or a plain function."""
    source: str
    """``file:line`` of its definition."""
    user: bool = False
    """The user's tool (dual control: ``@write(user=True)``): offered to the user of a
    conversation, never to the agent."""

    @property
    def writes(self) -> bool:
        return self.kind == "write"


def _marker(kind: ToolKind) -> Any:
    def decorate(fn: Any = None, *, name: str | None = None, user: bool = False) -> Any:
        def mark(f: Callable[..., Any]) -> Callable[..., Any]:
            setattr(f, _MARK, _Mark(kind, name, user))
            return f

        return mark(fn) if fn is not None else mark

    decorate.__name__ = kind
    decorate.__doc__ = (
        f"Mark a world tool that {'only reads' if kind == 'read' else 'may change'} the state "
        f"(``@{kind}`` or ``@{kind}(name=...)``; ``user=True``: a tool of the user, not "
        "the agent)."
    )
    return decorate


read = _marker("read")
write = _marker("write")


def is_tool(obj: Any) -> bool:
    return isinstance(getattr(obj, _MARK, None), _Mark)


def source_of(fn: Callable[..., Any]) -> str:
    try:
        file = inspect.getsourcefile(fn) or "?"
        line = inspect.getsourcelines(fn)[1]
    except (OSError, TypeError):
        return getattr(fn, "__qualname__", repr(fn))
    return f"{file}:{line}"


def tool_def(fn: Callable[..., Any], *, method: bool) -> ToolDef:
    """The ``ToolDef`` of a marked function (see the module docstring)."""
    mark: _Mark = getattr(fn, _MARK)
    where = source_of(fn)
    name = mark.name or fn.__name__
    if not FUNCTION_NAME.fullmatch(name):
        raise WorldDefinitionError(
            f"tool {name!r}: a tool's name is a function name the model calls it by: letters, "
            "digits, _ and - only, at most 64 (what OpenAI-compatible APIs accept)",
            where,
        )
    doc = inspect.getdoc(fn)
    if not doc or not doc.strip():
        raise WorldDefinitionError(f"tool {name!r} has no docstring (its description)", where)
    description, arg_docs = _parse_doc(doc)
    params = list(inspect.signature(fn).parameters.values())
    skip = 2 if method else 1  # self and the context, or the context
    if len(params) < skip:
        first = "self, ctx" if method else "ctx"
        raise WorldDefinitionError(f"tool {name!r} must take ({first}, ...)", where)
    try:
        hints = typing.get_type_hints(fn)
    except Exception as e:  # an annotation that does not resolve
        raise WorldDefinitionError(
            f"tool {name!r}: cannot read its annotations: {e}", where
        ) from None
    fields: dict[str, Any] = {}
    for p in params[skip:]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            raise WorldDefinitionError(
                f"tool {name!r}: parameter {p.name!r} must be a plain named parameter", where
            )
        if p.name not in hints:
            raise WorldDefinitionError(
                f"tool {name!r}: parameter {p.name!r} has no type annotation", where
            )
        default = ... if p.default is p.empty else p.default
        fields[p.name] = (hints[p.name], Field(default, description=arg_docs.get(p.name)))
    try:
        model = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
        schema = model.model_json_schema()
    except Exception as e:  # a type pydantic cannot describe
        raise WorldDefinitionError(
            f"tool {name!r}: cannot make its JSON schema: {e}", where
        ) from None
    return ToolDef(
        name=name,
        kind=mark.kind,
        description=description,
        parameters=_clean(schema),
        function=fn,
        method=method,
        source=where,
        user=mark.user,
    )


def _parse_doc(doc: str) -> tuple[str, dict[str, str]]:
    """The description (text before the first section) and ``Args:`` lines by name."""
    lines = doc.splitlines()
    description: list[str] = []
    args: dict[str, list[str]] = {}
    section: str | None = None
    current: str | None = None
    indent = 0
    for line in lines:
        heading = _SECTION.match(line)
        if heading:
            section = heading.group(1)
            current = None
            continue
        if section is None:
            description.append(line)
            continue
        if section not in ("Args", "Arguments", "Parameters") or not line.strip():
            continue
        width = len(line) - len(line.lstrip())
        m = re.match(r"^\s*(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$", line)
        if m and (current is None or width <= indent):
            current, indent = m.group(1).lstrip("*"), width
            args[current] = [m.group(2)]
        elif current is not None:
            args[current].append(line.strip())
    text = " ".join(" ".join(description).split())
    return text, {k: " ".join(" ".join(v).split()) for k, v in args.items()}


_NAME_MAPS = ("properties", "$defs", "definitions", "patternProperties")
"""Schema keywords whose value maps names to schemas: the names are kept as they are."""
_VALUES = ("default", "enum", "const", "examples")
"""Schema keywords whose value is data, not a schema."""


def _clean(schema: dict[str, Any]) -> dict[str, Any]:
    """pydantic's schema as a function-calling schema: no titles, ``X | None`` as X (optional),
    a null default dropped (the server drops null arguments before a call). A parameter or a
    field may be called ``title``: only the keyword is dropped, never a name."""

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for k, v in node.items():
            if k == "title":
                continue
            if k in _NAME_MAPS and isinstance(v, dict):
                out[k] = {name: walk(sub) for name, sub in v.items()}
            else:
                out[k] = v if k in _VALUES else walk(v)
        any_of = out.get("anyOf")
        if isinstance(any_of, list):
            rest = [s for s in any_of if s != {"type": "null"}]
            if len(rest) == 1 and len(rest) < len(any_of):
                out.pop("anyOf")
                out = {**rest[0], **out}
        if "default" in out and out["default"] is None:
            out.pop("default")
        return out

    cleaned = walk(schema)
    result: dict[str, Any] = {
        "type": "object",
        "properties": cleaned.get("properties", {}),
        "required": list(cleaned.get("required", [])),
        "additionalProperties": False,
    }
    if "$defs" in cleaned:
        result["$defs"] = cleaned["$defs"]
    return result
