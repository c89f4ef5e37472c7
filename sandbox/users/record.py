"""The record of a model-played user: every answer, keyed by what decides it.

A key is the SHA-256 of the task id, the user model's name, the task's user (its persona and
script, as JSON) and the transcript the user had seen (``agents.user.transcript_key``). The
record is a JSONL file (default ``users.jsonl`` in the suite folder; not part of the suite's
fingerprint, like its tool overlay), appended under a lock and fsynced line by line, so two runs
may share it and a killed run loses at most the answer it was writing. ``RecordedUser`` answers
from it first; a transcript it does not hold is a **user miss**, which the run's ``user.miss``
decides: ``error`` (a user failure: nothing is asked), ``live`` (the user model is asked and its
answer recorded) or ``scripted`` (the task's script answers, not recorded). Failures are never
recorded: a later run asks again. A line that is no JSON (a killed run's torn last line) is
skipped; one that is JSON but no turn (edited by hand) is a miss that names its line and field.

Dual control: a recorded answer whose user called its own tools is served by making the same
calls again, in order, on this episode's state (so the world is where the user left it) and
comparing what they return with the record: every call answered as recorded, the recorded
answer stands; one answered differently is a miss at that call (``error``: a user failure that
names it; ``live``: the user model goes on from the calls made, told what they returned; its
answer is not recorded, the key holding the first; ``scripted``: as ``error``, a script has no
tools). A recorded call without its answer is made again and is a miss. May import the
libraries only.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agents.model import Message
from agents.trajectory import StepCall
from agents.user import User, UserTools, UserTurn, transcript_key
from mock_tools.models import Task

__all__ = ["RecordedUser", "UserRecord", "record_key"]

RECORD_FILE = "users.jsonl"


def record_key(task: Task, user_model: str, transcript: list[Message]) -> str:
    user = task.user.model_dump(mode="json") if task.user is not None else None
    material = json.dumps(
        [task.id, user_model, user, transcript_key(transcript)],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(material.encode()).hexdigest()


class UserRecord:
    """The answers of one record file (loaded once; this process's answers added as made)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._turns: dict[str, dict[str, Any]] = {}
        self._invalid: dict[str, str] = {}
        if self.path.is_file():
            with self.path.open("rb") as fh:
                for n, line in enumerate(fh, 1):
                    try:
                        entry = json.loads(line)
                        key, turn = str(entry["key"]), dict(entry["turn"])
                    except (ValueError, KeyError, TypeError, RecursionError):
                        continue  # a torn last line of a killed run: the answer is asked again
                    if key in self._turns:
                        continue
                    try:
                        UserTurn.model_validate(turn)
                    except ValidationError as e:  # edited by hand: a miss that names it
                        err = e.errors()[0]
                        at = ".".join(map(str, err["loc"])) or "turn"
                        self._invalid.setdefault(
                            key, f"{self.path.name} line {n}: {at}: {err['msg']}"
                        )
                        continue
                    self._turns[key] = turn

    def __len__(self) -> int:
        return len(self._turns)

    def get(self, key: str) -> UserTurn | None:
        found = self._turns.get(key)
        return None if found is None else UserTurn.model_validate(found)

    def invalid(self, key: str) -> str | None:
        """Why the record's answer under ``key`` is no turn (file, line, field), if it holds
        one that is not (a line edited by hand); the answer is then not recorded."""
        return None if key in self._turns else self._invalid.get(key)

    def put(self, key: str, task: str, user_model: str, turn: UserTurn) -> None:
        """Keep ``turn`` under ``key`` (the first answer kept wins)."""
        if key in self._turns:
            return
        data = turn.model_dump(mode="json", exclude={"source"})
        if not data.get("calls"):
            data.pop("calls", None)  # a turn without calls is recorded as it always was
        self._turns[key] = data
        line = json.dumps(
            {"key": key, "task": task, "user_model": user_model, "turn": data}, ensure_ascii=False
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("ab") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                fh.write(line.encode() + b"\n")
                fh.flush()
                os.fsync(fh.fileno())
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)


class RecordedUser:
    """A user model's answers through a record (see the module docstring)."""

    def __init__(
        self,
        inner: User,
        record: UserRecord,
        task: Task,
        *,
        miss: str = "live",
        scripted: User | None = None,
    ) -> None:
        self.inner = inner
        self.record = record
        self.task = task
        self.miss = miss
        self.scripted = scripted
        self.name = inner.name
        self.hidden = list(inner.hidden)

    async def reply(self, transcript: list[Message], tools: UserTools | None = None) -> UserTurn:
        key = record_key(self.task, self.name, transcript)
        found = self.record.get(key)
        if found is not None and found.calls:
            return await self._replay_calls(found, transcript, tools)
        if found is not None:
            return found.model_copy(update={"source": "record"})
        if self.miss == "error":
            invalid = self.record.invalid(key)
            held = (
                "the user record holds no answer to this transcript"
                if invalid is None
                else f"the record's answer to this transcript is no turn ({invalid})"
            )
            return UserTurn(source="record", failure=f"user_miss: {held} (--user-miss error)")
        if self.miss == "scripted":
            if self.scripted is None:
                return UserTurn(
                    source="record",
                    failure="user_miss: no answer recorded and the task has no script",
                )
            return await self.scripted.reply(transcript)
        turn = await self._ask(transcript, tools)
        if turn.failure is None and not _infra(turn.calls):
            self.record.put(key, self.task.id, self.name, turn)
        return turn

    async def _ask(
        self, transcript: list[Message], tools: UserTools | None, made: list[StepCall] | None = None
    ) -> UserTurn:
        if tools is None and not made:
            return await self.inner.reply(transcript)
        return await self.inner.reply(transcript, tools=tools, made=made)  # type: ignore[call-arg]

    async def _replay_calls(
        self, found: UserTurn, transcript: list[Message], tools: UserTools | None
    ) -> UserTurn:
        """A recorded turn whose user called its tools: the calls made again (see the module
        docstring)."""
        if tools is None:
            return UserTurn(
                source="record",
                failure="user_miss: the recorded answer calls the user's tools, and this "
                "episode offers the user none",
            )
        made: list[StepCall] = []
        for call in found.calls:
            recorded = call.observation
            if call.args is None or (recorded is not None and recorded.provenance == "invalid"):
                made.append(call)  # never sent: answered with its error again
                continue
            obs = await tools.call(call.name, call.args)
            made.append(call.model_copy(update={"observation": obs}))
            if obs.infra:
                return UserTurn(source="record", calls=made)  # the step stops: infrastructure
            if recorded is None or obs.content != recorded.content:
                what = (
                    f"user_miss: the user's call {call.name} has no recorded answer (the "
                    "record was edited)"
                    if recorded is None
                    else f"user_miss: the user's call {call.name} answered differently than "
                    "recorded (the world is elsewhere than when the answer was recorded)"
                )
                if self.miss == "live":
                    return await self._ask(transcript, tools, made)
                return UserTurn(source="record", failure=what, calls=made)
        return found.model_copy(update={"source": "record", "calls": made})


def _infra(calls: list[StepCall]) -> bool:
    return any(c.observation is not None and c.observation.infra for c in calls)
