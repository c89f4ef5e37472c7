"""Running the probe: ask every question, score every answer (``run_probe``), and the whole job
on a suite and a named model (``probe_suite``).

Who answers comes from the model kind (``ModelKind.questions``, ``sandbox.models``): a ``live``
kind's model answers every question; a kind that follows the ``reference`` answers next-step
questions with its own model and plan and review questions through the ``ProbeOracle``, at the
kind's ``mistake_rate``; any other kind cannot be probed. A model call that fails is recorded
as an error and not scored, unless no other question could get past it (``stops_the_probe``:
a refused configuration, or an endpoint whose answers are not JSON, such as a proxy's web page):
then the probe stops there with one line (``EndpointConfigError``, exit 2) instead of asking
every question again, each with its retries. May import ``sandbox.models``, ``sandbox.tool_envs``,
``sandbox.store`` and ``sandbox.probe`` modules.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any, cast

from agents.errors import ModelError
from agents.model import Model
from mock_tools import SuiteError, Task
from mock_tools.names import NameResolver
from mock_tools.validate import load_valid_suite
from sandbox.errors import ConfigError, EndpointConfigError
from sandbox.eval.steps.actions import Apis
from sandbox.eval.steps.reason_score import (
    LexicalSimilarity,
    ThoughtSimilarity,
    similarity_label,
    thought_similarity,
)
from sandbox.models import MODEL_KINDS, ModelProvider, ModelSpec, build_models, resolve_model
from sandbox.probe.oracle import ModelFor, ProbeOracle
from sandbox.probe.questions import ProbeItem, build_probes
from sandbox.probe.reference_scoring import probe_protocols
from sandbox.probe.scoring import ProbeReport, ProbeResult, score_answer, summarise_probe
from sandbox.store.config import RunConfig
from sandbox.store.suite_folder import suite_folder
from sandbox.tool_envs import open_tool_envs

__all__ = [
    "probe_models",
    "probe_suite",
    "run_probe",
    "select_probe_tasks",
    "stops_the_probe",
]


async def run_probe(
    items: Sequence[ProbeItem],
    model_for: ModelFor,
    apis: Apis,
    *,
    model_name: str = "",
    concurrency: int = 4,
    similarity: ThoughtSimilarity | None = None,
    protocols: Sequence[str] = (),
) -> ProbeReport:
    """Ask every question (``model_for(task_id)`` answers it) and score the answers.

    ``similarity`` scores ``reason`` and ``understand`` (lexical when not given); ``protocols``
    are the reference step protocols that score the answers too (``reference_scoring``)."""
    chosen = probe_protocols(protocols)
    resolver = NameResolver.for_apis(apis)
    gate = asyncio.Semaphore(max(1, concurrency))

    stopped: list[ModelError] = []

    async def ask(item: ProbeItem) -> ProbeResult:
        async with gate:
            if stopped:  # a question that was waiting for its turn is not asked
                raise _Stop(stopped[0])
            try:
                turn = await model_for(item.task_id).complete(item.messages, item.tools, None)
            except ModelError as e:
                if stops_the_probe(e):
                    stopped.append(e)
                    raise _Stop(e) from e
                return ProbeResult(
                    task_id=item.task_id, kind=item.kind, index=item.index, scores={}, error=str(e)
                )
        return score_answer(item, turn, apis, resolver, similarity, chosen)

    results = await _all_or_stop([ask(i) for i in items])
    report = summarise_probe(model_name, results, chosen)
    report.similarity = similarity_label(similarity or LexicalSimilarity())
    return report


def stops_the_probe(error: ModelError) -> bool:
    """Whether every other question would fail as this answer did, so the probe stops: the
    endpoint refused the configuration (a key, a model name), or its answer to a chat completion
    was not JSON at all even after the client's retries (a web page: what serves the base URL is
    no OpenAI-compatible API). A body that is JSON but no completion is one question's failure."""
    if error.configuration:
        return True
    return error.kind == "malformed" and isinstance(
        error.__cause__, (json.JSONDecodeError, UnicodeDecodeError)
    )


class _Stop(Exception):
    """A question's answer that stops the probe (``stops_the_probe``)."""

    def __init__(self, error: ModelError) -> None:
        super().__init__(str(error))
        self.error = error


async def _all_or_stop(asks: list[Coroutine[Any, Any, ProbeResult]]) -> list[ProbeResult]:
    """Every question's result in order; at the first ``_Stop`` the questions not yet answered
    are cancelled (none is asked after it) and ``EndpointConfigError`` says why and how many
    were answered."""
    tasks = [asyncio.ensure_future(a) for a in asks]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        left = [t for t in tasks if not t.done()]
        for task in left:
            task.cancel()
        await asyncio.gather(*left, return_exceptions=True)
    failed: list[BaseException] = []
    for task in tasks:
        error = None if task.cancelled() else task.exception()
        if error is not None and not isinstance(error, _Stop):
            raise error
        failed += [error] if error is not None else []
    if failed:
        stop = cast(_Stop, failed[0]).error
        answered = sum(not t.cancelled() and t.exception() is None for t in tasks)
        why = (
            f"refused the configuration ({stop.kind})"
            if stop.configuration
            else "does not answer as an OpenAI-compatible chat completions API; check the "
            "model's base URL"
        )
        raise EndpointConfigError(
            f"the model endpoint {why}: {stop}; the probe stopped "
            f"({answered} of {len(tasks)} questions answered)"
        ) from stop
    return [t.result() for t in tasks]


def select_probe_tasks(tasks: list[Task], pattern: str | None) -> list[Task]:
    """The tasks whose id matches the glob (all without one); ``ConfigError`` when none does."""
    if pattern is None:
        return tasks
    chosen = [t for t in tasks if fnmatch.fnmatchcase(t.id, pattern)]
    if not chosen:
        raise ConfigError(f"no task id matches {pattern!r}")
    return chosen


async def probe_models(
    spec: ModelSpec, provider: ModelProvider, tasks: Sequence[Task], *, seed: int
) -> dict[str, Model]:
    """The model that answers each task's questions, as the spec's kind says (module doc)."""
    kind = MODEL_KINDS.get(spec.kind)
    if kind.questions == "reference":
        rate = kind.mistake_rate(spec) if kind.mistake_rate is not None else 0.0
        return {
            task.id: ProbeOracle(
                task.reference,
                next_step=provider.for_episode(task, seed=seed, trial=0),
                rate=rate,
                seed=seed,
                task_id=task.id,
            )
            for task in tasks
        }
    if kind.questions == "live":
        await provider.probe()
        return {task.id: provider.for_episode(task, seed=seed, trial=0) for task in tasks}
    raise ConfigError(
        f"model {spec.display_name!r} (kind {spec.kind}) cannot answer new questions (a replay "
        "only repeats a run); probe a live or offline reference model"
    )


async def probe_suite(
    suite_path: str | Path,
    model_name: str,
    *,
    env: dict[str, str] | None = None,
    tasks: str | None = None,
    seed: int = 0,
    concurrency: int = 4,
    similarity: str = "lexical",
    step_protocols: Sequence[str] = (),
) -> ProbeReport:
    """Load the suite, resolve the model, ask every probe question and score the answers.

    ``tasks`` is a glob of task ids; ``similarity`` names the backend of ``reason`` and
    ``understand`` (``thought_similarity``); ``step_protocols`` add reference protocols'
    scores (``reference_scoring``; checked before anything is asked)."""
    protocols = probe_protocols(step_protocols)
    kind, _, model = similarity.partition(":")
    backend = thought_similarity(kind, model or None)
    try:
        suite = load_valid_suite(suite_folder(suite_path))  # what `validate` rejects is not probed
    except SuiteError as e:
        raise ConfigError(f"cannot load suite: {e}") from e
    selected = select_probe_tasks(suite.tasks, tasks)
    async with open_tool_envs(RunConfig(suite=str(suite_path)), suite) as tools:
        items = await build_probes(selected, suite.apis, tools)
    spec = resolve_model(model_name, env=env or {})
    provider = build_models(spec)
    try:
        models = await probe_models(spec, provider, selected, seed=seed)
        return await run_probe(
            items,
            models.__getitem__,
            suite.apis,
            model_name=model_name,
            concurrency=concurrency,
            similarity=backend,
            protocols=protocols,
        )
    finally:
        await provider.aclose()
