"""Per-session world state in a server: every session (an episode, a client) has its own.

A session starts at its task's initial state (the scenario it names, else the base state) and
moves with every write; every state it has been in is kept by its hash (``known``), so a client
can go back to any of them (``restore``): DFSDT's backtrack, a fork, a debugger. Keeping them
costs what each write changed (states share structure). Calls of one session are answered one at
a time, in the order they arrive, so two concurrent writes never start from the same state;
sessions never see each other's writes. ``WorldSessions`` holds at most ``max_sessions``
sessions and forgets the least recently used beyond that. Imports the worlds' engine, limits and
state.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mock_tools.worlds.limits import DEFAULT_CALL_SECONDS, CallLimitExceeded, CallRunner
from mock_tools.worlds.state import State
from mock_tools.worlds.task import TaskWorld
from mock_tools.worlds.world import WorldAnswer, WorldEngine

__all__ = ["CallLimitExceeded", "UnknownState", "WorldSession", "WorldSessions"]

MAX_SESSIONS = 10_000


class UnknownState(KeyError):
    """A state this session has never been in."""


@dataclass
class WorldSession:
    id: str
    task: str | None
    initial: State
    now: datetime
    seed: int = 0
    state: State = field(init=False)
    known: dict[str, State] = field(default_factory=dict)
    calls: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def __post_init__(self) -> None:
        self.state = self.initial
        self.known[self.initial.hash] = self.initial

    def move(self, state: State) -> None:
        self.state = state
        self.known.setdefault(state.hash, state)

    def restore(self, state_hash: str) -> State:
        found = self.known.get(state_hash)
        if found is None:
            raise UnknownState(state_hash)
        self.state = found
        return found

    def describe(self) -> dict[str, Any]:
        return {
            "session": self.id,
            "task": self.task,
            "state": self.state.hash,
            "initial": self.initial.hash,
            "states": len(self.known),
            "calls": self.calls,
            "seed": self.seed,
            "now": self.now.isoformat(),
        }


class WorldSessions:
    """The sessions of one world in one server."""

    def __init__(
        self,
        engine: WorldEngine,
        tasks: Mapping[str, TaskWorld | None],
        *,
        call_seconds: float = DEFAULT_CALL_SECONDS,
        max_sessions: int = MAX_SESSIONS,
    ) -> None:
        self.engine = engine
        self.tasks = dict(tasks)
        """The world spec of each task id the suite holds (None: the base state)."""
        self.runner = CallRunner(call_seconds)
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, WorldSession] = OrderedDict()

    @property
    def name(self) -> str:
        return self.engine.name

    def open(
        self, session: str, *, task: str | None = None, seed: int = 0, fresh: bool = True
    ) -> WorldSession:
        """The session named ``session`` at its task's initial state (``fresh``), or as it is
        when it exists and ``fresh`` is false. ``KeyError`` for a task the suite lacks."""
        found = self._sessions.get(session)
        if found is not None and not fresh:
            self._sessions.move_to_end(session)
            return found
        if task is not None and task not in self.tasks:
            raise KeyError(task)
        spec = self.tasks.get(task) if task is not None else None
        made = WorldSession(
            id=session,
            task=task,
            initial=self.engine.initial(task, spec),
            now=self.engine.clock(spec, f"task {task}"),
            seed=seed,
        )
        self._sessions[session] = made
        self._sessions.move_to_end(session)
        while len(self._sessions) > self.max_sessions:
            self._sessions.popitem(last=False)
        return made

    def get(self, session: str) -> WorldSession | None:
        return self._sessions.get(session)

    def drop(self, session: str | None) -> int:
        """Forget one session (all without a name); how many were dropped."""
        if session is None:
            n = len(self._sessions)
            self._sessions.clear()
            return n
        return 1 if self._sessions.pop(session, None) is not None else 0

    def __len__(self) -> int:
        return len(self._sessions)

    async def call(
        self, session: str, scenario: str | None, tool: str, args: dict[str, Any], key: str
    ) -> tuple[WorldSession, WorldAnswer]:
        """Answer one call in ``session`` (opened at ``scenario``'s initial state when new).
        ``CallLimitExceeded`` when the tool runs past the limit (the state stays)."""
        s = self._sessions.get(session)
        if s is None:
            known = scenario if scenario in self.tasks else None
            s = self.open(session, task=known)
        async with s.lock:
            if not self.engine.ready():  # e.g. a worker to start: not the call's time
                await asyncio.to_thread(self.engine.prepare)
            before = s.state
            answer = await self.runner.run(
                lambda: self.engine.execute(
                    before, tool, args, key=key, now=s.now, task=s.task, seed=s.seed
                )
            )
            s.calls += 1
            s.move(answer.state)
        return s, answer

    def close(self) -> None:
        self.runner.close()
