"""The ``recorded`` tool transport: a run's own observations answer the tool calls of its replay.

A run whose tools were live (``--tools-url`` to a server that may be gone, or ``--mcp-server``
without ``--record-into``) cannot be replayed against those tools. Its trajectories hold every
call and what it returned, so its replay is served from them: ``RunConfig.tools_replay`` names the
recorded run, and each episode's env answers a call with the recorded observation of the same
function and the same arguments, the k-th identical call with the k-th recorded one (in node
order, which is the order the calls were made). A call the recording does not hold gets an error
observation with provenance ``unrecorded``: the replay then differs from the recording there,
and replay reports it as a divergence. The functions offered are the trajectory's own (what the
agent was offered when the run was made), in the same order.

Episodes are told apart by task id and trial: the runner's sessions end in ``/<trial>``
(``sandbox.run.episode``). May import ``agents``, ``sandbox.store`` and ``sandbox.errors`` only.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from agents.toolenv import DispatchRule, Observation
from agents.trajectory import Trajectory
from mock_tools import Suite, Task
from sandbox.errors import ConfigError, RunError
from sandbox.store import RunStore, read_trajectories
from sandbox.store.config import RunConfig

__all__ = ["RecordedToolEnv", "RecordedToolEnvs", "open_recorded"]

UNRECORDED = "unrecorded"

CallKey = tuple[str, str]
"""``(function, canonical JSON of the arguments)``."""


def call_key(function: str, args: Mapping[str, Any]) -> CallKey:
    return function, json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)


class RecordedToolEnv:
    """One episode's tools, answered from its recorded trajectory."""

    def __init__(self, traj: Trajectory | None, *, dispatch: DispatchRule) -> None:
        self.dispatch: DispatchRule = dispatch
        self._functions: list[dict[str, Any]] = list(traj.functions) if traj else []
        self._answers: dict[CallKey, deque[Observation]] = defaultdict(deque)
        for node in sorted(traj.nodes if traj else [], key=lambda n: n.id):
            for call in node.calls:
                if call.observation is not None and call.args is not None:
                    key = call_key(call.function or call.name, call.args)
                    self._answers[key].append(call.observation)

    @property
    def functions(self) -> list[dict[str, Any]]:
        return self._functions

    async def call(self, name: str, args: dict[str, Any]) -> Observation:
        answers = self._answers.get(call_key(name, args))
        if answers:
            return answers.popleft().model_copy()
        msg = f"the recorded run has no (further) call of {name} with these arguments"
        content = json.dumps({"error": msg, "response": ""})
        return Observation(ok=False, content=content, provenance=UNRECORDED, error=msg)

    async def reset(self) -> None:
        """Nothing to forget: the env serves one episode."""


class RecordedToolEnvs:
    """Per-episode ``RecordedToolEnv``s over the trajectories of one recorded run."""

    def __init__(self, run: str | Path, suite: Suite, trajectories: Iterable[Trajectory]) -> None:
        self.run = str(run)
        self.dispatch: DispatchRule = suite.meta.dispatch
        self._episodes = {(t.scenario_id, t.trial): t for t in trajectories}

    async def __aenter__(self) -> RecordedToolEnvs:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        return None

    def for_episode(self, task: Task, *, session: str) -> RecordedToolEnv:
        tail = session.rsplit("/", 1)[-1]
        trial = int(tail) if tail.isdigit() else 0
        return RecordedToolEnv(self._episodes.get((task.id, trial)), dispatch=self.dispatch)

    def report(self) -> dict[str, Any]:
        return {"transport": "recorded", "run": self.run}


def open_recorded(config: RunConfig, suite: Suite, env: Mapping[str, str]) -> RecordedToolEnvs:
    """The ``recorded`` transport's opener (``RunConfig.tools_replay``)."""
    assert config.tools_replay is not None
    try:
        store = RunStore.open(config.tools_replay)
    except RunError as e:
        raise ConfigError(f"cannot read the recorded run {config.tools_replay}: {e}") from e
    return RecordedToolEnvs(store.path, suite, read_trajectories(store.path))
