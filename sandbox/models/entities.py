"""Replies of a model whose server HTML-escapes its prompts, read back as plain text.

llama-cpp-python's ``chatml-function-calling`` format renders every message into the prompt
through a Jinja template with HTML autoescaping on: the model reads ``'`` as ``&#39;`` and ``"``
as ``&#34;`` (in the task, the tool results and its own earlier turns) and writes them back so.
Sent on as they are, its own text is escaped once more in the next prompt (``&amp;#39;``, then
``&amp;amp;#39;``: the corpus shows it). ``UnescapedModel`` unescapes what such a model writes,
its text and the string values of its tool-call arguments, so what the tools get and the next
prompt shows is what the model meant (an alias says ``unescape_html: true``; the arguments are
written again as JSON only when an entity was in them). Other servers do not escape, and their
models' text is kept exactly as written. May import ``agents`` only.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from agents.model import Message, ToolCall, Turn
from agents.models.wrapper import ModelWrapper

__all__ = ["UnescapedModel", "unescape_arguments", "unescape_turn"]

_ENTITY = re.compile(r"&(#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z][a-zA-Z0-9]*);")


def _unescape_value(value: Any) -> Any:
    if isinstance(value, str):
        return html.unescape(value)
    if isinstance(value, list):
        return [_unescape_value(v) for v in value]
    if isinstance(value, dict):
        return {html.unescape(k): _unescape_value(v) for k, v in value.items()}
    return value


def unescape_arguments(arguments: str) -> str:
    """The arguments with entities in their strings unescaped: verbatim when they hold none or
    are not JSON (the loop then says why they cannot be read), else written again as JSON."""
    if not _ENTITY.search(arguments):
        return arguments
    try:
        value = json.loads(arguments, strict=False)
    except ValueError:
        return arguments
    return json.dumps(_unescape_value(value), ensure_ascii=False)


def unescape_turn(turn: Turn) -> Turn:
    """``turn`` with its text and its calls' arguments unescaped."""
    content = html.unescape(turn.content) if turn.content else turn.content
    calls = [
        ToolCall(id=c.id, name=html.unescape(c.name), arguments=unescape_arguments(c.arguments))
        for c in turn.tool_calls
    ]
    return turn.model_copy(update={"content": content, "tool_calls": calls})


class UnescapedModel(ModelWrapper):
    """A model whose replies are unescaped (see the module docstring)."""

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        return unescape_turn(await self.inner.complete(messages, tools, params))
