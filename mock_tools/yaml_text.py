"""YAML as the project reads and writes it: libyaml's C loader and dumper when PyYAML was built
with them (several times faster), else PyYAML's pure-Python safe ones. Every YAML file of the
project (suites, ``models.yaml``, recorded MCP suites) goes through here.

Reading is stricter than YAML itself, so a careless or hostile file is a clear error instead of
a silent change or a stall:

- a key written twice in one mapping is an error naming both lines (YAML's "last one wins" would
  silently rename a task or drop a field); merge keys (``<<: *base``) may still be overridden;
- a text over ``MAX_YAML_BYTES`` (64 MiB) is refused before it is parsed (``yaml_size``; a file
  by its size on disk, before it is read; a text by its characters, each at least a byte);
- aliases may add at most ``MAX_YAML_EXPANSION`` values to a document once expanded
  (``yaml_expansion``): an "alias bomb" of a few lines that expands to millions of values is
  refused at the line where it grows past the limit, before anything walks it; an alias inside
  the node it names (a recursive document) is refused too.

Both limits raise ``YamlLimitExceeded`` (a ``yaml.YAMLError``) carrying the limit's name.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, SequenceNode

__all__ = [
    "MAX_YAML_BYTES",
    "MAX_YAML_EXPANSION",
    "SafeDumper",
    "SafeLoader",
    "YamlLimitExceeded",
    "dump_yaml_text",
    "load_yaml",
    "yaml_error_line",
]

SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
SafeDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

MAX_YAML_BYTES = 64 * 1024 * 1024
"""The largest YAML file read (64 MiB), the ``yaml_size`` limit."""

MAX_YAML_EXPANSION = 100_000
"""How many values aliases may add to one document once expanded, the ``yaml_expansion``
limit (a document without aliases adds none, whatever its size)."""

_MERGE_TAG = "tag:yaml.org,2002:merge"
_MAY_ALIAS = re.compile(r"(?:^|[\s\[{,:])\*[^\s\[\]{},]", re.MULTILINE)
"""Text that may hold an alias (``*name``); a few false alarms (``*bold*`` in a string) only
cost the walk."""


class YamlLimitExceeded(yaml.YAMLError):
    """A YAML text over one of this module's limits; ``limit`` names it, ``line`` (1-based) is
    where, when known."""

    def __init__(self, limit: str, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.limit = limit
        self.message = message
        self.problem = message  # as PyYAML's own errors name it
        self.line = line


def yaml_error_line(e: yaml.YAMLError) -> str:
    """A YAML error in one line: what, and at which line when known (PyYAML's own messages
    span several lines)."""
    if isinstance(e, YamlLimitExceeded):
        return e.message + (f" at line {e.line}" if e.line else "")
    problem = getattr(e, "problem", None) or getattr(e, "reason", None)
    mark = getattr(e, "problem_mark", None)
    text = str(problem) if problem else (str(e).strip().splitlines() or [type(e).__name__])[0]
    return text + (f" at line {mark.line + 1}" if mark is not None else "")


class _StrictLoader(SafeLoader):  # type: ignore[misc,valid-type]
    """The safe loader, refusing a key written twice in one mapping."""

    def construct_mapping(self, node: Node, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, MappingNode):
            seen: dict[Any, Node] = {}
            for key_node, _ in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.setdefault(key, key_node)
                except TypeError:  # an unhashable key: the base class reports it
                    continue
                if first is not key_node:
                    raise ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"found duplicate key {key!r} (first on line {first.start_mark.line + 1})",
                        key_node.start_mark,
                    )
        result: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return result


def load_yaml(text: str) -> Any:
    """The data of one YAML document (safe tags only); ``yaml.YAMLError`` when it is not one,
    ``YamlLimitExceeded`` (a ``yaml.YAMLError``) over a limit (see the module docstring)."""
    if len(text) > MAX_YAML_BYTES:
        raise YamlLimitExceeded(
            "yaml_size", f"YAML text over {MAX_YAML_BYTES:,} bytes (limit yaml_size)"
        )
    loader = _StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _MAY_ALIAS.search(text):  # no alias token, no expansion: skip the walk
            _check_expansion(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


def _check_expansion(root: Node) -> None:
    """``YamlLimitExceeded`` when aliases make the document more than ``MAX_YAML_EXPANSION``
    values larger than what is written, or an alias sits inside the node it names.

    One pass over the distinct nodes (an alias is the very node it names, shared): the expanded
    size of a node is one plus its children's, kept per node, so a bomb is measured without
    being expanded. The first node (innermost) whose expansion alone is over the limit names
    the line."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    order: list[Node] = []
    while stack:  # iterative depth-first walk: any depth, no recursion limit
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in _children(node))
            order.append(node)
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise YamlLimitExceeded(
                "yaml_expansion",
                "an alias refers to a node that holds it (a recursive document)",
                node.start_mark.line + 1,
            )
        on_path.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(_children(node)) if id(c) not in sizes)
    written = len(sizes)
    if sizes[id(root)] - written <= MAX_YAML_EXPANSION:
        return
    where = next(n for n in order if sizes[id(n)] - written > MAX_YAML_EXPANSION)
    raise YamlLimitExceeded(
        "yaml_expansion",
        f"aliases expand this document by more than {MAX_YAML_EXPANSION:,} values "
        "(limit yaml_expansion)",
        where.start_mark.line + 1,
    )


def dump_yaml_text(data: Any, **options: Any) -> str:
    """``data`` as YAML text as the project writes it (safe tags only, keys in their order,
    Unicode as is, lines of 100 columns); ``options`` as for ``yaml.dump`` override those."""
    chosen = {"sort_keys": False, "allow_unicode": True, "width": 100, **options}
    return yaml.dump(data, Dumper=SafeDumper, **chosen)
