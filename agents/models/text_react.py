"""Text-ReAct adapter: tool use for models without native tool calls.

The functions are rendered into the system prompt and the model answers in the ToolBench-style
text format::

    Thought: <reasoning>
    Action: <function name>
    Action Input: <arguments as a JSON object>

The answer is parsed back into a native ``ToolCall``. Arguments are read with ``json.loads`` and,
failing that, ``ast.literal_eval`` (Python-literal dicts), never ``eval``. A turn that cannot be
parsed comes back as ``Turn(content=<raw text>, format_error=<what was wrong>)`` so the loop records
it and tells the model (saying the reply was cut when the endpoint stopped it at ``max_tokens``).
Unknown function names are parsed as calls: the loop reports them. The text is parsed as the
model wrote it: HTML entities (``&#39;``) are not unescaped (docs/local-endpoints.md says why).
Earlier native tool calls and tool results in the history are rewritten into the same text form.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from pydantic import BaseModel

from agents.model import CUT_AT_TOKEN_LIMIT, Message, Model, ToolCall, Turn
from agents.models.wrapper import ModelWrapper

_ACTION = re.compile(r"^[ \t]*Action[ \t]*:", re.IGNORECASE | re.MULTILINE)
_ACTION_INPUT = re.compile(r"^[ \t]*Action[ \t]*Input[ \t]*:", re.IGNORECASE | re.MULTILINE)
_THOUGHT = re.compile(r"^[ \t]*Thought[ \t]*:", re.IGNORECASE | re.MULTILINE)

FORMAT_HELP = (
    "Answer in exactly this format, one function call per answer:\n"
    "Thought: <your reasoning>\n"
    "Action: <the function name>\n"
    'Action Input: <the arguments as a JSON object, e.g. {"city": "Paris"}>'
)


class ParsedAction(BaseModel):
    thought: str | None
    name: str
    arguments: str
    """The arguments as JSON text (verbatim when the model wrote valid JSON)."""


class TextFormatError(ValueError):
    """The text does not follow the Thought / Action / Action Input format."""


# -- rendering -----------------------------------------------------------------------------


def render_tools(tools: list[dict[str, Any]]) -> str:
    """The system-prompt section that describes the functions and the answer format."""
    lines = ["You can call the following functions:"]
    for i, tool in enumerate(tools, 1):
        fn = tool.get("function", tool)
        params = json.dumps(fn.get("parameters") or {"type": "object"}, ensure_ascii=False)
        lines.append(f"{i}. {fn.get('name')}: {(fn.get('description') or '').strip()}")
        lines.append(f"   Parameters (JSON Schema): {params}")
    lines += [
        "",
        FORMAT_HELP,
        "",
        "After each call you will see its result as 'Observation: ...'. When you can answer, "
        'call Finish with {"return_type": "give_answer", "final_answer": "<your answer>"}; if '
        'you cannot make progress, call Finish with {"return_type": "give_up_and_restart"}.',
    ]
    return "\n".join(lines)


def render_action(thought: str | None, name: str, arguments: str) -> str:
    parts = [f"Thought: {thought.strip()}"] if thought and thought.strip() else []
    parts += [f"Action: {name}", f"Action Input: {arguments}"]
    return "\n".join(parts)


def to_text_messages(messages: list[Message], tools: list[dict[str, Any]]) -> list[Message]:
    """The history for a model that only reads and writes text."""
    section = render_tools(tools)
    out: list[Message] = []
    if not messages or messages[0].get("role") != "system":
        out.append({"role": "system", "content": section})
    for m in messages:
        role = m.get("role")
        if role == "system" and not any(o.get("role") == "system" for o in out):
            out.append({"role": "system", "content": f"{m.get('content') or ''}\n\n{section}"})
        elif role == "assistant" and m.get("tool_calls"):
            actions = [
                render_action(
                    m.get("content") if i == 0 else None,
                    tc["function"]["name"],
                    tc["function"].get("arguments") or "{}",
                )
                for i, tc in enumerate(m["tool_calls"])
            ]
            out.append({"role": "assistant", "content": "\n".join(actions)})
        elif role == "tool":
            text = f"Observation: {m.get('content') or ''}"
            prev = out[-1] if out else None
            if prev is not None and prev.get("_observation"):
                prev["content"] += "\n" + text
            else:
                out.append({"role": "user", "content": text, "_observation": True})
        else:
            out.append({"role": role, "content": m.get("content") or ""})
    for m in out:
        m.pop("_observation", None)
    return out


# -- parsing -------------------------------------------------------------------------------


def _first_object(text: str) -> str | None:
    """The first balanced ``{...}`` in ``text`` (string literals respected), or None."""
    start = text.find("{")
    if start < 0:
        return None
    depth = 0
    quote: str | None = None
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return None


def parse_arguments(text: str) -> str:
    """The Action Input as JSON text: verbatim if it is JSON, converted from a Python literal
    otherwise. Raises ``TextFormatError`` saying what is wrong."""
    stripped = text.strip()
    if not stripped:
        raise TextFormatError("'Action Input:' is empty; give the arguments as a JSON object")
    candidate = _first_object(stripped)
    if candidate is None:
        raise TextFormatError(
            f"'Action Input:' must be a JSON object in braces, got {stripped[:80]!r}"
        )
    try:
        value = json.loads(candidate, strict=False)
        verbatim = True
    except json.JSONDecodeError as json_err:
        try:
            value = ast.literal_eval(candidate)
            verbatim = False
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise TextFormatError(
                f"'Action Input:' is not valid JSON ({json_err.msg} at char {json_err.pos}): "
                f"{candidate[:120]!r}"
            ) from None
    if not isinstance(value, dict):
        raise TextFormatError("'Action Input:' must be a JSON object")
    return candidate if verbatim else json.dumps(value, ensure_ascii=False)


def parse_react(text: str) -> ParsedAction:
    """Parse one Thought / Action / Action Input answer (the first action if there are more)."""
    action = _ACTION.search(text)
    if action is None:
        raise TextFormatError("no 'Action:' line found. " + FORMAT_HELP)
    head = text[: action.start()]
    thought_match = _THOUGHT.search(head)
    thought = head[thought_match.end() :] if thought_match else head
    rest = text[action.end() :]
    action_input = _ACTION_INPUT.search(rest)
    if action_input is None:
        raise TextFormatError("no 'Action Input:' line after 'Action:'. " + FORMAT_HELP)
    name = rest[: action_input.start()].strip().splitlines()
    name_text = name[0].strip().strip("`'\"*").strip() if name else ""
    if not name_text:
        raise TextFormatError("'Action:' names no function. " + FORMAT_HELP)
    arguments = parse_arguments(rest[action_input.end() :])
    return ParsedAction(thought=thought.strip() or None, name=name_text, arguments=arguments)


# -- the adapter ---------------------------------------------------------------------------


class TextReActModel(ModelWrapper):
    """Wraps a text-only ``Model`` (called with no tools) into a tool-calling one."""

    def __init__(self, inner: Model, *, name: str | None = None) -> None:
        super().__init__(inner, name=name or f"text-react:{inner.name}")

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        inner = await self.inner.complete(to_text_messages(messages, tools), [], params)
        text = inner.content or ""
        raw = {"text": text, "inner": inner.raw}
        try:
            parsed = parse_react(text)
        except TextFormatError as e:
            cut = inner.format_error or ""  # the endpoint cut the reply at max_tokens
            return Turn(
                content=text,
                usage=inner.usage,
                latency_ms=inner.latency_ms,
                format_error=f"{CUT_AT_TOKEN_LIMIT}: {e}" if cut else str(e),
                raw=raw,
            )
        previous = sum(len(m.get("tool_calls") or []) for m in messages)
        call = ToolCall(id=f"call_{previous}", name=parsed.name, arguments=parsed.arguments)
        return Turn(
            content=parsed.thought,
            tool_calls=[call],
            usage=inner.usage,
            latency_ms=inner.latency_ms,
            raw=raw,
        )
