"""Opening a judge by name: the model client built through the model registry, its endpoint
probed once, its request cache opened, all closed on exit.

``open_model_judge`` serves ``sandbox eval`` / ``rescore`` / ``compare`` (through
``sandbox.commands.judge_options.open_judge``) and ``sandbox run --judge``, which scores the run
at its end with the judge. ``rules-judge`` is the offline rules endpoint (no cache). May import
``sandbox.models`` and ``eval`` modules.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from agents.errors import ModelError
from agents.model import Message, Turn
from mock_tools.models import Task
from sandbox.errors import ConfigError, ModelUnreachableError
from sandbox.eval.judge import RULES_JUDGE, Judge
from sandbox.models import RequestCache, resolve_model
from sandbox.models.first_call import FirstCallGate
from sandbox.models.remote import openai_client

__all__ = ["JUDGE_CACHE_FILE", "Unreachable", "build_judge_model", "open_model_judge"]

JUDGE_CACHE_FILE = "judge_cache.sqlite"
"""The judge's request cache in a run (or comparison) folder, by default."""


class Unreachable:
    """A judge model whose endpoint did not answer its probe: every call fails (an
    infrastructure failure, ``ModelError`` of kind ``connection``)."""

    def __init__(self, name: str, why: str) -> None:
        self.name = name
        self.why = why

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        raise ModelError(f"unreachable, and not in the record: {self.why}", kind="connection")


def build_judge_model(name: str, tasks: Callable[[], Sequence[Task]] | None = None) -> Any:
    """An OpenAI-compatible client for the judge, resolved through the model registry; the
    built-in ``rules-judge`` is the offline rules endpoint over ``tasks()`` (the suites'
    tasks the evaluation asks about)."""
    if name == RULES_JUDGE:
        from sandbox.eval.tooleval.rules_judge import rules_judge

        return rules_judge(tasks() if tasks is not None else ())
    spec = resolve_model(name, env=os.environ)
    if not spec.remote or not spec.model or not spec.base_url:
        raise ConfigError(
            f"the judge must be an OpenAI-compatible model (got {name!r}, kind {spec.kind}); "
            "use an alias such as gpt-4o-mini or openai:<model>@<base_url>"
        )
    return openai_client(spec)


@asynccontextmanager
async def open_model_judge(
    name: str,
    *,
    cache_path: Path | None,
    temperature: float,
    tasks: Callable[[], Sequence[Task]] | None = None,
    offline_ok: Callable[[str], bool] | None = None,
) -> AsyncIterator[Judge]:
    """The judge ``name``, probed once (unreachable: ``ModelUnreachableError``, exit 2), with
    the request cache at ``cache_path`` (None: no cache; ``rules-judge`` never has one: it
    answers at once, and a cache would outlive a change of the checks).

    ``offline_ok(model name)``: whether what the evaluation asks may already be recorded
    (``nl_judge``'s record of this judge): then an unreachable judge is no error; the judge
    answers from its record and cache, and a question they do not hold fails as a judge
    failure (``JudgeError``: unjudged, exit 1), so a re-score needs no endpoint."""
    rules = name == RULES_JUDGE
    model = build_judge_model(name, tasks)
    cache = RequestCache(cache_path) if cache_path is not None and not rules else None
    try:
        try:
            await model.probe()
        except ModelError as e:
            if offline_ok is not None and offline_ok(model.name):
                yield Judge(Unreachable(model.name, str(e)), cache=cache, temperature=temperature)
                return
            raise ModelUnreachableError(
                f"judge {name!r} is unreachable: {e}\n  start an OpenAI-compatible "
                "server or point --judge at another one (openai:<model>@<base_url>)"
            ) from e
        gated = FirstCallGate(model)  # a refused key or model costs one call
        yield Judge(gated, cache=cache, temperature=temperature, kind="rules" if rules else "llm")
    finally:
        await model.aclose()
        if cache is not None:
            cache.close()
