"""The record of a model-played user: every answer, keyed by what decides it.

A key is the SHA-256 of the task id, the user model's name, the task's user (its persona and
script, as JSON) and the transcript the user had seen (``agents.user.transcript_key``). The
record is a JSONL file (default ``users.jsonl`` in the suite folder; not part of the suite's
fingerprint, like its tool overlay), appended under a lock and fsynced line by line, so two runs
may share it and a killed run loses at most the answer it was writing. ``RecordedUser`` answers
from it first; a transcript it does not hold is a **user miss**, which the run's ``user.miss``
decides: ``error`` (a user failure: nothing is asked), ``live`` (the user model is asked and its
answer recorded) or ``scripted`` (the task's script answers, not recorded). Failures are never
recorded: a later run asks again. May import the libraries only.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from agents.model import Message
from agents.user import User, UserTurn, transcript_key
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
        if self.path.is_file():
            with self.path.open("rb") as fh:
                for line in fh:
                    try:
                        entry = json.loads(line)
                        self._turns.setdefault(str(entry["key"]), dict(entry["turn"]))
                    except (ValueError, KeyError, TypeError):
                        continue  # a torn last line of a killed run: the answer is asked again

    def __len__(self) -> int:
        return len(self._turns)

    def get(self, key: str) -> UserTurn | None:
        found = self._turns.get(key)
        return None if found is None else UserTurn.model_validate(found)

    def put(self, key: str, task: str, user_model: str, turn: UserTurn) -> None:
        """Keep ``turn`` under ``key`` (the first answer kept wins)."""
        if key in self._turns:
            return
        data = turn.model_dump(mode="json", exclude={"source"})
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

    async def reply(self, transcript: list[Message]) -> UserTurn:
        key = record_key(self.task, self.name, transcript)
        found = self.record.get(key)
        if found is not None:
            return found.model_copy(update={"source": "record"})
        if self.miss == "error":
            return UserTurn(
                source="record",
                failure="user_miss: the user record holds no answer to this transcript "
                "(--user-miss error)",
            )
        if self.miss == "scripted":
            if self.scripted is None:
                return UserTurn(
                    source="record",
                    failure="user_miss: no answer recorded and the task has no script",
                )
            return await self.scripted.reply(transcript)
        turn = await self.inner.reply(transcript)
        if turn.failure is None:
            self.record.put(key, self.task.id, self.name, turn)
        return turn
