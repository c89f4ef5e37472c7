"""The evaluation settings ``eval``, ``rescore`` and ``compare`` share: the protocol and its judge.

``ScoringConfig`` holds them (its flags, ``--protocol`` with the protocols' summaries, ``--judge``
and the ``--judge-*`` settings, are made from it by ``sandbox.commands.settings_flags``);
``check_protocol`` resolves the protocol and checks it has the judge it needs,
``judge_settings`` makes the ``JudgeSettings``, and ``open_judge`` builds the judge client
(``sandbox.models.remote.openai_client``: the model layer prices it), probes its endpoint once
and closes it, with its SQLite request cache.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mock_tools.models import Task
from sandbox.errors import ConfigError
from sandbox.eval.judge import Judge
from sandbox.eval.judge_open import JUDGE_CACHE_FILE, build_judge_model, open_model_judge
from sandbox.eval.protocol import EvalProtocol, JudgeSettings
from sandbox.eval.protocols import DEFAULT_PROTOCOL, get_protocol
from sandbox.eval.steps.metric import DEFAULT_STEP_PROTOCOL
from sandbox.eval.steps.selection import StepSelection
from sandbox.store.paths import usable_file_path
from sandbox.store.setting import Flag, OptionalSecretText

__all__ = [
    "JUDGE_CACHE_FILE",
    "ScoringConfig",
    "build_judge_model",
    "check_protocol",
    "judge_errors",
    "judge_settings",
    "judge_tasks",
    "open_judge",
    "step_selection",
]


class ScoringConfig(BaseModel):
    """How episodes are labelled and runs compared: the evaluation protocol and its judge."""

    model_config = ConfigDict(extra="forbid")

    protocol: Annotated[str, Flag(metavar="NAME", registry="sandbox.eval.protocols:PROTOCOLS")] = (
        Field(
            default=DEFAULT_PROTOCOL,
            description="How episodes are labelled and compared (docs/evaluation.md); also a "
            "plugin's protocol or package.module:NAME",
        )
    )
    judge: Annotated[OptionalSecretText, Flag(metavar="MODEL")] = Field(
        default=None,
        description="Judge for what the checks and rules cannot decide: an LLM (an alias from "
        "models.yaml or openai:<model>@<base_url>), which also decides world tasks' "
        "natural-language assertions (τ²-bench's), or rules-judge, the offline judge that "
        "answers ToolEval's questions from the task's checks (not an LLM; it skips them).",
    )
    judge_samples: Annotated[int | None, Flag(metavar="K")] = Field(
        default=None,
        ge=1,
        description="Judge samples per episode (default: the protocol's; toolbench 4, default 3).",
    )
    judge_rounds: Annotated[int | None, Flag(metavar="R")] = Field(
        default=None,
        ge=1,
        description="Preference rounds per paired episode (default: toolbench 2, default 1).",
    )
    judge_temperature: Annotated[float | None, Flag(metavar="T")] = Field(
        default=None,
        ge=0,
        description="The judge's sampling temperature (default 0.2, ToolEval's).",
    )
    judge_order: Literal["alternate", "random"] = Field(
        default="alternate",
        description="Answer order per preference round: alternate (seeded start, cancels "
        "position bias) or random (ToolEval's shuffle, seeded).",
    )
    judge_cache: Annotated[str | None, Flag(metavar="PATH")] = Field(
        default=None,
        description="SQLite cache of the judge's answers (default: judge_cache.sqlite in the run "
        "or comparison folder).",
    )

    judge_cached: Annotated[bool, Flag(name="--no-judge-cache", help="always ask the judge")] = (
        Field(
            default=True,
            description="Keep the judge's answers in its cache (--no-judge-cache: "
            "always ask the judge).",
        )
    )

    step_protocols: Annotated[
        list[str],
        Flag(
            name="--step-protocol",
            metavar="NAME",
            registry="sandbox.eval.steps.metric:STEP_PROTOCOLS",
        ),
    ] = Field(
        default_factory=list,
        description="Step protocols the step-level scores are computed under, repeatable or "
        "comma-separated (default: default, docs/evaluation.md); default goes to scores.json's "
        "step_scores, any other to step_protocols.NAME.",
    )
    step_metrics: Annotated[
        list[str],
        Flag(
            name="--step-metric", metavar="NAME", registry="sandbox.eval.steps.metric:STEP_METRICS"
        ),
    ] = Field(
        default_factory=list,
        description="Registered step metrics added to every chosen step protocol, repeatable or "
        "comma-separated; their measures go under metrics.NAME of the protocol's step scores.",
    )
    step_options: Annotated[
        dict[str, dict[str, Any]], Flag(name="--step-option", metavar="METRIC.KEY=VALUE")
    ] = Field(
        default_factory=dict,
        description="Options of step metrics, by metric name (validated by the metric's options "
        "class); a flag's VALUE is JSON, else text; repeatable.",
    )

    @field_validator("judge_cache")
    @classmethod
    def _judge_cache_file(cls, value: str | None) -> str | None:
        return usable_file_path(value)

    @field_validator("step_protocols", "step_metrics", mode="before")
    @classmethod
    def _comma_lists(cls, value: Any) -> Any:
        """``--step-protocol teval,ultratool`` is ``--step-protocol teval --step-protocol
        ultratool``: each item split at its commas, blanks dropped."""
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            return value
        out: list[Any] = []
        for item in value:
            if isinstance(item, str):
                out += [part.strip() for part in item.split(",") if part.strip()]
            else:
                out.append(item)
        return out

    @field_validator("step_options", mode="before")
    @classmethod
    def _nest_step_options(cls, value: Any) -> Any:
        """The flag's ``METRIC.KEY`` keys nested: ``{"plan.threshold": 0.5}`` ->
        ``{"plan": {"threshold": 0.5}}``."""
        if not isinstance(value, dict):
            return value
        nested: dict[str, Any] = {}
        for key, item in value.items():
            metric, dot, option = str(key).rpartition(".")
            if dot and metric and option:
                nested.setdefault(metric, {})[option] = item
            elif isinstance(item, dict):
                nested.setdefault(str(key), {}).update(item)
            else:
                raise ValueError(f"{key!r}: expected METRIC.KEY=VALUE")
        return nested


def step_selection(scoring: ScoringConfig) -> StepSelection | None:
    """The step-level scores the settings ask for (checked: a bad name or option is a
    ``ConfigError``), or None when no step setting was given (the default protocol alone)."""
    if not (scoring.step_protocols or scoring.step_metrics or scoring.step_options):
        return None
    selection = StepSelection(
        protocols=scoring.step_protocols or [DEFAULT_STEP_PROTOCOL],
        metrics=scoring.step_metrics,
        options=scoring.step_options,
    )
    selection.resolve()
    return selection


def check_protocol(scoring: ScoringConfig) -> EvalProtocol:
    """The chosen protocol, checked against the judge settings before any work starts."""
    protocol = get_protocol(scoring.protocol)
    if protocol.judge_required and scoring.judge is None:
        raise ConfigError(
            f"--protocol {protocol.name} needs a judge: add --judge MODEL (an alias from "
            "models.yaml or openai:<model>@<base_url>)"
        )
    return protocol


def judge_settings(scoring: ScoringConfig) -> JudgeSettings:
    return JudgeSettings(
        samples=scoring.judge_samples,
        rounds=scoring.judge_rounds,
        temperature=scoring.judge_temperature,
        order=scoring.judge_order,
    )


@asynccontextmanager
async def open_judge(
    scoring: ScoringConfig,
    protocol: EvalProtocol,
    cache_path: Path,
    tasks: Callable[[], Sequence[Task]] | None = None,
    offline_ok: Callable[[str], bool] | None = None,
) -> AsyncIterator[Judge | None]:
    """The judge of ``--judge`` (None without one), probed once, closed on exit
    (``sandbox.eval.judge_open``, which says what ``offline_ok`` allows). ``tasks`` gives the
    tasks the ``rules-judge`` decides from (read only for it); that judge keeps no cache."""
    if scoring.judge is None:
        yield None
        return
    temperature = scoring.judge_temperature
    if temperature is None:
        temperature = protocol.defaults.temperature or 0.0
    cache = (scoring.judge_cache or cache_path) if scoring.judge_cached else None
    async with open_model_judge(
        scoring.judge,
        cache_path=Path(cache) if cache is not None else None,
        temperature=temperature,
        tasks=tasks,
        offline_ok=offline_ok,
    ) as judge:
        yield judge


def judge_tasks(runs: Sequence[str | Path | None], suite: str | None = None) -> list[Task]:
    """The tasks of the runs' suites (or of ``suite`` when given), once each: what the
    ``rules-judge`` decides from. A suite that does not load is a ``ConfigError``."""
    from mock_tools import SuiteError, load_suite
    from sandbox.store import RunStore

    paths = [Path(suite)] if suite else [RunStore.open(r).suite_path() for r in runs if r]
    tasks: dict[str, Task] = {}
    for path in dict.fromkeys(p.resolve() for p in paths):
        try:
            loaded = load_suite(path)
        except SuiteError as e:
            raise ConfigError(f"rules-judge: cannot load the suite {path}: {e}") from e
        for task in loaded.tasks:
            tasks.setdefault(task.id, task)
    return list(tasks.values())


def judge_errors(labels: list[Any], outcomes: list[Any]) -> list[str]:
    """Episodes the judge could not label or compare (infrastructure errors of the evaluation)."""
    out = [f"label {lb.episode}" for lb in labels if lb.excluded == "judge_error"]
    for o in outcomes:
        if o.judge_error is not None:
            out.append(f"comparison {o.task_id}" + (f"#{o.trial}" if o.trial else ""))
    return out
