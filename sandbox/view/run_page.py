"""One run as its page shows it: the header, config and scores, and the table of its episodes.

Episode rows join the labels of ``scores.json`` with the digest of each trajectory line
(``sandbox.store.EpisodeIndex``: status, steps, cost, tokens, answer). A run without scores yet
(still going, or never evaluated) is labelled live by rules and checks (``label_episode``), each
episode once, as it finishes; those labels say so (``label_source``). ``RunState`` keeps the index,
the live labels and the suite's tasks of one run between requests.
May import ``sandbox.store``, ``sandbox.eval``, ``sandbox.view.catalog`` and the libraries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from mock_tools import MockToolsError, Task, load_suite
from sandbox.errors import RunError
from sandbox.eval.pass_rate import EpisodeLabel, label_episode
from sandbox.store import EpisodeDigest, EpisodeIndex, EpisodeKey
from sandbox.view.catalog import RunEntry, RunRecord
from sandbox.view.run_files import run_file

__all__ = ["PLOTS", "EpisodeRow", "RunPage", "RunState", "SuiteTasks", "episode_tags"]

PLOTS = ("pass_rate.png", "step_profile.png", "cost_vs_pass.png")
"""The PNGs ``sandbox eval`` writes into a run folder; the only files of a run served as is (when
regular files inside the run folder: ``run_files``)."""

ANSWER_CHARS = 200


class EpisodeRow(BaseModel):
    task_id: str
    trial: int
    status: str = Field(description="Trajectory status, or pending / missing.")
    label: str | None = None
    method: str | None = None
    reason: str = ""
    steps: int | None = None
    cost: float | None = None
    tokens: int | None = None
    answer: str | None = Field(default=None, description="The final answer, cut for the table.")
    tags: list[str] = Field(
        description="Filters: solved, unsolved, gave_up, budget, context_overflow, infra."
    )


class RunPage(BaseModel):
    entry: RunEntry
    config: dict[str, Any] = Field(default_factory=dict)
    manifest: dict[str, Any] = Field(
        default_factory=dict, description="Suite, agent, model, versions, times (no episodes)."
    )
    scores: dict[str, Any] | None = Field(
        default=None, description="scores.json without the per-episode labels."
    )
    label_source: Literal["scores", "live", "none"] = "none"
    plots: list[str] = Field(default_factory=list)


def episode_tags(label: str | None, status: str, infra: bool) -> list[str]:
    tags = []
    if label == "solved":
        tags.append("solved")
    elif label is not None:
        tags.append("unsolved")
    ended = {
        "gave_up": "gave_up",
        "budget_exhausted": "budget",
        "context_overflow": "context_overflow",  # the history outgrew the model's context
    }
    tags += [ended[status]] if status in ended else []
    if infra:
        tags.append("infra")
    return tags


class SuiteTasks:
    """The tasks of each suite the runs used, loaded once per suite folder and fingerprint
    (loading a suite parses its YAML: many runs of one suite share one load)."""

    def __init__(self) -> None:
        self._loaded: dict[tuple[str, str], dict[str, Task] | None] = {}

    def of(self, record: RunRecord) -> dict[str, Task] | None:
        """The tasks of the run's suite; None when it cannot be found or loaded."""
        try:
            path = record.store().suite_path().resolve()
        except RunError:
            return None
        key = (str(path), record.entry.suite_fingerprint)
        if key not in self._loaded:
            try:
                self._loaded[key] = {t.id: t for t in load_suite(path).tasks}
            except MockToolsError:
                self._loaded[key] = None
        return self._loaded[key]


@dataclass
class RunState:
    """What the viewer keeps of one run between requests."""

    record: RunRecord
    index: EpisodeIndex
    suites: SuiteTasks
    _live: dict[EpisodeKey, tuple[int, EpisodeLabel]] = field(default_factory=dict)

    @classmethod
    def open(cls, record: RunRecord, suites: SuiteTasks | None = None) -> RunState:
        return cls(record, EpisodeIndex.of(record.path), suites or SuiteTasks())

    def update(self, record: RunRecord) -> RunState:
        """The same run, read again: new lines taken in, live labels kept where still valid."""
        self.record = record
        self.index.refresh()
        return self

    def tasks(self) -> dict[str, Task] | None:
        """The run's tasks from its suite (None when the suite cannot be found or loaded)."""
        return self.suites.of(self.record)

    def page(self) -> RunPage:
        rec = self.record
        m = rec.manifest
        manifest: dict[str, Any] = {}
        config: dict[str, Any] = {}
        if m is not None:
            manifest = m.model_dump(mode="json", by_alias=True, exclude={"episodes", "config"})
            config = m.config.model_dump(mode="json")
        scores = None
        if rec.scores is not None:
            scores = rec.scores.model_dump(mode="json", by_alias=True, exclude={"labels"})
        plots = [p for p in PLOTS if run_file(rec.path, p) is not None]
        return RunPage(
            entry=rec.entry,
            config=config,
            manifest=manifest,
            scores=scores,
            label_source=self._label_source(),
            plots=plots,
        )

    def _label_source(self) -> Literal["scores", "live", "none"]:
        if self.record.scores is not None:
            return "scores"
        return "live" if self.tasks() is not None else "none"

    def label(self, key: EpisodeKey) -> EpisodeLabel | None:
        """The episode's label: from scores.json, else by rules and checks now."""
        if self.record.scores is not None:
            return self.record.labels.get(key)
        digest = self.index.get(key)
        tasks = self.tasks()
        if digest is None or tasks is None or key[0] not in tasks:
            return None
        cached = self._live.get(key)
        if cached is not None and cached[0] == digest.offset:
            return cached[1]
        label = label_episode(self.index.trajectory(key), tasks[key[0]])
        self._live[key] = (digest.offset, label)
        return label

    def rows(self) -> list[EpisodeRow]:
        """Every episode of the run, in run order; those not finished yet are pending."""
        rec = self.record
        expected: list[EpisodeKey] = []
        if rec.manifest is not None:
            expected = rec.manifest.episode_keys()
        labels = rec.labels
        digests = {d.key: d for d in self.index.digests}
        keys = list(dict.fromkeys([*expected, *labels, *digests]))
        running = rec.entry.status == "running"
        return [self._row(k, labels.get(k), digests.get(k), running) for k in keys]

    def _row(
        self,
        key: EpisodeKey,
        label: EpisodeLabel | None,
        digest: EpisodeDigest | None,
        running: bool,
    ) -> EpisodeRow:
        if label is None and digest is not None:
            label = self.label(key)
        if digest is None:
            status = label.status if label is not None else ("pending" if running else "missing")
            if status == "missing" and running:
                status = "pending"
            return EpisodeRow(
                task_id=key[0],
                trial=key[1],
                status=status,
                label=label.label if label else None,
                method=label.method if label else None,
                reason=label.reason if label else "",
                tags=episode_tags(label.label if label else None, status, False),
            )
        answer = digest.final_answer
        if answer is not None and len(answer) > ANSWER_CHARS:
            answer = answer[: ANSWER_CHARS - 1] + "…"
        return EpisodeRow(
            task_id=key[0],
            trial=key[1],
            status=digest.status,
            label=label.label if label else None,
            method=label.method if label else None,
            reason=label.reason if label else "",
            steps=digest.steps,
            cost=digest.usage.cost,
            tokens=digest.usage.tokens,
            answer=answer,
            tags=episode_tags(label.label if label else None, digest.status, digest.infra_error),
        )
