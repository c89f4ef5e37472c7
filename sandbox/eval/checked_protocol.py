"""``checked(protocol)``: an evaluation protocol of the user's own, its calls and results checked.

A protocol from outside the project (a ``package.module:Name`` path, an entry point, or one that
code registered) is wrapped in ``CheckedProtocol``; the built-ins are used as they are. Each call
runs inside ``agents.plugin_calls.plugin_code`` (whatever it raises, ``SystemExit`` included,
becomes one line naming the protocol, exit 2), and what it returns must keep the contract, or
nothing is written:

- ``label``: a list of ``EpisodeLabel``, one for each episode it was asked about and no other,
  each score a number in [0, 1] (a protocol that labels 1 of 23 episodes is refused, not read
  as 22 missing ones);
- ``summarise``: a ``PassSummary`` whose pass rate, interval, groups and sample rates are
  numbers in [0, 1] (a pass rate of 7.5 or NaN is refused);
- ``prefer``: a list of ``PairOutcome``; ``summarise_wins``: a ``WinSummary`` whose rates are in
  [0, 1].

May import ``agents`` and ``eval`` modules.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from agents.plugin_calls import broke, is_foreign, plugin_code, returned, unit_rate
from agents.trajectory import Trajectory
from mock_tools.models import Task
from sandbox.errors import PluginFailure
from sandbox.eval.judge import Judge
from sandbox.eval.pass_rate import EpisodeLabel, PassSummary
from sandbox.eval.protocol import EpisodeKey, EvalProtocol, JudgeSettings
from sandbox.eval.stats import Interval
from sandbox.eval.win_rate import PairOutcome, RunSide, WinSummary

__all__ = ["CheckedProtocol", "checked"]


def checked(protocol: EvalProtocol) -> EvalProtocol:
    """``protocol`` itself when it is the project's, else wrapped in ``CheckedProtocol``."""
    if isinstance(protocol, CheckedProtocol) or not is_foreign(protocol):
        return protocol
    return CheckedProtocol(protocol)


class CheckedProtocol:
    """A foreign protocol whose calls and results are checked (module doc). Its other attributes
    (``name``, ``defaults``, ``labels_each_episode``...) are the protocol's own."""

    def __init__(self, inner: EvalProtocol) -> None:
        self.inner = inner
        with plugin_code(self._what(), PluginFailure):
            name = inner.name
        self.what = f"evaluation protocol {name!r} ({type(inner).__module__})"

    def _what(self) -> str:
        return f"evaluation protocol {type(self.inner).__module__}.{type(self.inner).__name__}"

    def __getattr__(self, item: str) -> Any:
        if item == "inner":  # not set yet (copying, unpickling)
            raise AttributeError(item)
        with plugin_code(f"{self.what}'s {item}", PluginFailure, passing=(AttributeError,)):
            return getattr(self.inner, item)

    async def label(
        self,
        trajs: Sequence[Trajectory],
        tasks: Sequence[Task],
        keys: Sequence[EpisodeKey],
        judge: Judge | None,
        settings: JudgeSettings,
    ) -> list[EpisodeLabel]:
        what = f"{self.what}'s label()"
        with plugin_code(what, PluginFailure):
            got = await self.inner.label(trajs, tasks, keys, judge, settings)
        labels = _list_of(what, got, EpisodeLabel, "EpisodeLabel")
        asked = Counter((str(k[0]), int(k[1])) for k in keys)
        given = Counter((lb.task_id, lb.trial) for lb in labels)
        if given != asked:
            missing = sorted((asked - given).elements())
            extra = sorted((given - asked).elements())
            detail = (
                f"none for {_episode(missing[0])}"
                if missing
                else f"one it was not asked for or twice: {_episode(extra[0])}"
            )
            raise broke(
                what,
                f"it gave {len(labels)} label(s) for {len(keys)} episode(s) ({detail}); a "
                "protocol labels each episode it is given once",
                PluginFailure,
            )
        for lb in labels:
            unit_rate(
                what, f"the score of {_episode((lb.task_id, lb.trial))}", lb.score, PluginFailure
            )
        return labels

    def summarise(
        self, labels: Sequence[EpisodeLabel], tasks: Sequence[Task], *, seed: int
    ) -> PassSummary:
        what = f"{self.what}'s summarise()"
        with plugin_code(what, PluginFailure):
            got = self.inner.summarise(labels, tasks, seed=seed)
        summary = returned(what, got, PassSummary, "a PassSummary", PluginFailure)
        _interval(what, "pass_rate", summary.pass_rate)
        for group, rate in summary.groups.items():
            _interval(what, f"the pass rate of group {group!r}", rate.pass_rate)
        for i, sample in enumerate(summary.sample_rates):
            unit_rate(what, f"sample_rates[{i}]", sample, PluginFailure)
        if summary.sample_std is not None:
            unit_rate(what, "sample_std", summary.sample_std, PluginFailure)
        return summary

    async def prefer(
        self,
        candidate: RunSide,
        reference: RunSide,
        tasks: Sequence[Task],
        judge: Judge | None,
        settings: JudgeSettings,
        *,
        seed: int,
    ) -> list[PairOutcome]:
        what = f"{self.what}'s prefer()"
        with plugin_code(what, PluginFailure):
            got = await self.inner.prefer(candidate, reference, tasks, judge, settings, seed=seed)
        return _list_of(what, got, PairOutcome, "PairOutcome")

    def summarise_wins(
        self, outcomes: Sequence[PairOutcome], *, candidate: str, reference: str, seed: int
    ) -> WinSummary:
        what = f"{self.what}'s summarise_wins()"
        with plugin_code(what, PluginFailure):
            got = self.inner.summarise_wins(
                outcomes, candidate=candidate, reference=reference, seed=seed
            )
        wins = returned(what, got, WinSummary, "a WinSummary", PluginFailure)
        _interval(what, "win_rate", wins.win_rate)
        _interval(what, "tooleval_win_rate", wins.tooleval_win_rate)
        unit_rate(what, "tie_rate", wins.tie_rate, PluginFailure)
        return wins


def _list_of(what: str, got: Any, kind: type, described: str) -> list[Any]:
    items: list[Any] = returned(what, got, (list, tuple), f"a list of {described}", PluginFailure)
    for i, item in enumerate(items):
        if not isinstance(item, kind):
            raise broke(
                what, f"item {i} is a {type(item).__name__}, not a {described}", PluginFailure
            )
    return list(items)


def _interval(what: str, name: str, interval: Any) -> None:
    if not isinstance(interval, Interval):
        raise broke(what, f"{name} is a {type(interval).__name__}, not an Interval", PluginFailure)
    for part in ("value", "low", "high"):
        unit_rate(what, f"{name}.{part}", getattr(interval, part), PluginFailure)


def _episode(key: tuple[str, int]) -> str:
    return f"episode {key[0]!r} trial {key[1]}"
