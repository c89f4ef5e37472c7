"""``Viewer``: every page's data for the runs under one folder, without any HTTP.

The web app (``sandbox.view.app``) and the static export (``sandbox.view.export``) both ask
it. Unknown runs, episodes and files raise ``NotFound`` with a message; nothing here builds a
path from a request: runs are looked up by key among the runs the catalog found, episodes by
``(task, trial)`` in the run's index, plots in a fixed list of names; and a run's file is read
only when it is a regular file inside the run's folder (``run_files``).
May import the view modules below it, ``sandbox.store`` and ``sandbox.eval``.
"""

from __future__ import annotations

from pathlib import Path

from sandbox.errors import SandboxError
from sandbox.view.catalog import Catalog, RunEntry
from sandbox.view.chat import chat
from sandbox.view.episode_page import EpisodePage, divergence, node_marks
from sandbox.view.leaderboard import Leaderboard, build_leaderboard
from sandbox.view.run_files import read_run_file
from sandbox.view.run_page import PLOTS, EpisodeRow, RunPage, RunState, SuiteTasks
from sandbox.view.side_by_side import ComparePage, compare_page
from sandbox.view.state_diff import world_calls

__all__ = ["BadRequest", "NotFound", "Viewer"]

MAX_COMPARED = 8


class NotFound(SandboxError):
    """A run, episode or file the viewer does not have; the message says which."""


class BadRequest(SandboxError):
    """A request the viewer cannot answer as asked (e.g. a comparison of one run)."""


class Viewer:
    """The runs under ``root`` and the state kept of each between requests."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.catalog = Catalog(self.root)
        self._states: dict[str, RunState] = {}
        self._suites = SuiteTasks()

    def runs(self) -> list[RunEntry]:
        return self.catalog.runs()

    def state(self, key: str) -> RunState:
        record = self.catalog.record(key)
        if record is None:
            self._states.pop(key, None)
            raise NotFound(f"no run {key!r} under {self.root}")
        if record.manifest is None:
            raise NotFound(f"run {key!r} cannot be read: {record.entry.error}")
        state = self._states.get(key)
        if state is None or state.record.path != record.path:
            state = self._states[key] = RunState.open(record, self._suites)
        return state.update(record)

    def run(self, key: str) -> RunPage:
        return self.state(key).page()

    def episodes(self, key: str) -> list[EpisodeRow]:
        return self.state(key).rows()

    def plot(self, key: str, name: str) -> bytes:
        """The PNG's bytes: one of ``PLOTS``, a regular file inside the run's folder
        (``run_files``; a plot linked out of the folder is not there)."""
        state = self.state(key)
        data = read_run_file(state.record.path, name) if name in PLOTS else None
        if data is None:
            raise NotFound(f"run {key!r} has no plot {name!r} (plots: {', '.join(PLOTS)})")
        return data

    def episode(self, key: str, task: str, trial: str | int) -> EpisodePage:
        state = self.state(key)
        try:
            number = int(trial)
        except ValueError:
            raise NotFound(f"no episode {task!r} trial {trial!r}: a trial is a number") from None
        traj = state.index.trajectory((task, number))
        if traj is None:
            raise NotFound(f"run {key!r} has no episode {task!r} trial {number}")
        keys = state.index.keys
        at = keys.index((task, number))
        tasks = state.tasks() or {}
        label = state.label((task, number))
        replay_of = state.record.entry.replay_of
        return EpisodePage(
            run=state.record.entry,
            task=tasks[task].model_dump(mode="json") if task in tasks else None,
            label=label.model_dump(mode="json") if label else None,
            trajectory=traj.model_dump(mode="json", by_alias=True),
            marks=node_marks(traj),
            divergence=divergence(replay_of, state.record.path, self.root, traj)
            if replay_of
            else None,
            world_calls=world_calls(traj),
            conversation=chat(traj, tasks[task].query if task in tasks else None),
            previous=keys[at - 1] if at > 0 else None,
            next=keys[at + 1] if at + 1 < len(keys) else None,
        )

    def compare(self, keys: list[str]) -> ComparePage:
        keys = [k for k in dict.fromkeys(k.strip() for k in keys) if k]
        if len(keys) < 2:
            raise BadRequest("compare needs two runs or more: /compare?runs=A,B")
        if len(keys) > MAX_COMPARED:
            raise BadRequest(f"compare takes at most {MAX_COMPARED} runs, got {len(keys)}")
        return compare_page([self.state(k) for k in keys])

    def leaderboard(self, reference: str | None = None) -> Leaderboard:
        records = self.catalog.records()
        ref = None
        if reference:
            ref = self.catalog.record(reference)
            if ref is None:
                raise NotFound(f"no run {reference!r} under {self.root} to use as the reference")
        return build_leaderboard(records, ref)
