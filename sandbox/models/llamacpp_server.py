"""llama-cpp-python's server, its chat handler held to the request's ``max_tokens`` and ``seed``.

``python -m sandbox.models.llamacpp_server ARGS`` is ``python -m llama_cpp.server ARGS`` (the
same arguments, the same server) with one change: the completions that the chat format named by
``--chat_format`` makes for a request each get the request's ``max_tokens`` and ``seed`` when
they set none themselves. llama-cpp-python's ``chatml-function-calling`` (the tool-calling
format, under ``tool_choice: auto``) answers a request with two to four completions of its own:
which of "message:" or "functions.<name>:" comes first, then the message or each call's
arguments, then whether another call follows. All but the first are made with
``max_tokens=None``, which llama.cpp reads as "until the context is full", and none with the
request's seed. So a 135M model that wrote a run-on argument string generated for minutes
(2,745 tokens at 5 a second for a request asking for 192), the arguments were appended to the
prompt of the next completion, and the server refused that as a context overflow of the
request: "you requested 4281 tokens" for a prompt of about 1,350 (issue 38, item 12). And a
seed the client sent was dropped, so sampling followed the server's history of requests, not
the request. And each request's prompt is evaluated afresh (``RequestBound``), so a seeded
request gets the same reply whatever the server answered before. ``sandbox.models.launch``
starts llama.cpp's server through this module.

Imports ``llama_cpp`` (the ``local`` extra) when run, nothing of the project.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

__all__ = ["RequestBound", "bounded_handler", "chat_format_of", "main"]


class RequestBound:
    """A ``Llama`` whose ``create_completion`` fills in the request's ``max_tokens`` and
    ``seed`` where the chat handler passed none; everything else is the ``Llama``'s.

    ``free_first``: the first completion keeps the handler's ``max_tokens`` (under
    ``tool_choice: auto``, the choice between "message" and "functions.<name>", which the
    handler's grammar ends within a few tokens; cut at a small ``max_tokens`` it would name no
    function at all).

    Before its first completion the ``Llama`` is reset, so the request's prompt is evaluated
    from its first token, in the same batches whatever the server answered before; its later
    completions reuse what the first evaluated, as the handler left it. llama.cpp otherwise
    reuses the cached prefix the previous request shares with this one, computed in other
    batches, whose sums round differently: the first request of the same run, sent twice to one
    server with the same seed, was answered with two different functions, chosen greedily
    (temperature 0) from logits that differed."""

    def __init__(
        self, llama: Any, *, max_tokens: int | None, seed: int | None, free_first: bool = False
    ) -> None:
        self._llama = llama
        self._max_tokens = max_tokens
        self._seed = seed
        self._free = 1 if free_first else 0
        self._fresh = True

    def create_completion(self, *args: Any, **kwargs: Any) -> Any:
        if self._fresh:
            self._fresh = False
            self._llama.reset()
        free, self._free = self._free > 0, max(0, self._free - 1)
        if kwargs.get("max_tokens") is None and self._max_tokens is not None and not free:
            kwargs["max_tokens"] = self._max_tokens
        if kwargs.get("seed") is None and self._seed is not None:
            kwargs["seed"] = self._seed
        return self._llama.create_completion(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llama, name)


def bounded_handler(handler: Callable[..., Any]) -> Callable[..., Any]:
    """``handler`` (a llama-cpp-python chat completion handler) with every completion it makes
    held to the request's ``max_tokens`` and ``seed`` (see the module docstring)."""

    def handle(
        *, llama: Any, max_tokens: int | None = None, seed: int | None = None, **kw: Any
    ) -> Any:
        routed = bool(kw.get("tools")) and kw.get("tool_choice") == "auto"
        bound = RequestBound(llama, max_tokens=max_tokens, seed=seed, free_first=routed)
        return handler(llama=bound, max_tokens=max_tokens, seed=seed, **kw)

    return handle


def chat_format_of(argv: list[str]) -> str | None:
    """The value of ``--chat_format`` in the server's arguments (None: not given)."""
    for i, arg in enumerate(argv):
        if arg == "--chat_format" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--chat_format="):
            return arg.split("=", 1)[1]
    return None


def main(argv: list[str] | None = None) -> None:
    """Bound the chat format's handler, then run llama-cpp-python's server on ``argv``."""
    from llama_cpp import llama_chat_format
    from llama_cpp.server.__main__ import main as serve

    args = sys.argv[1:] if argv is None else argv
    name = chat_format_of(args)
    registry = llama_chat_format.LlamaChatCompletionHandlerRegistry()
    if name is not None:
        try:
            handler = registry.get_chat_completion_handler_by_name(name)
        except llama_chat_format.LlamaChatCompletionHandlerNotFoundException:
            handler = None  # the server says what is wrong with the name
        if handler is not None:
            registry.register_chat_completion_handler(
                name, bounded_handler(handler), overwrite=True
            )
    sys.argv = [sys.argv[0], *args]
    serve()


if __name__ == "__main__":
    main()
