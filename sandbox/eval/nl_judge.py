"""Natural-language assertions (``world.checks.nl_assertions``, τ²-bench's ``nl_assertions``)
decided by a judge model, and the record of its judgments.

With a judge (``sandbox eval --judge MODEL``, ``sandbox run --judge MODEL``), every episode of a
task with NL assertions that ended as τ² grades (the user's or the agent's stop: ``answered``,
``gave_up``; one that ended on an error or a spent budget fails or is left out whatever the
judge says, and τ² does not judge it) is judged once: the judge is sent the episode's
conversation as τ²'s judge gets it (every message of the chosen path in order, as ``role:
content`` lines: the user's, the agent's, and the tools' answers; the agent's tool calls are
written out too) and the numbered assertions, at temperature 0 (τ²'s), and answers one JSON
object with a verdict per assertion (``verdicts: [{assertion: N, met: true|false, reason}]``).
The prompt is ours, not τ²'s. τ²'s rule decides: the episode's NL result is met only if every
assertion is, and the episode passes only if that and every other check do (τ² multiplies the
NL reward into the task's). The verdicts are the episode's check results of kind
``nl_assertion``, beside the state checks.

Every judgment is appended to ``nl_judgments.jsonl`` in the run folder (one JSON line, written
and synced before the next: a killed evaluation keeps what it had judged), keyed by task, trial,
judge model and a digest of the conversation, the assertions and the prompt's version. An
evaluation first looks there: ``sandbox eval`` again asks nothing it has asked, and re-scores
the same way offline (``judged_by``: an unreachable judge whose judgments the run records is
no error; what the record lacks is then unjudged). A conversation or assertion that changed is
judged again (another digest).

A judge that cannot answer (the endpoint down after the model layer's retries, a reply that
is no valid verdict list after ``Judge.attempts`` asks) leaves the episode ``unjudged``: an
infrastructure failure of the evaluation, never the agent's; nothing is recorded for it (the
next evaluation asks again). Without a judge (or with ``rules-judge``, which answers ToolEval's
questions only), NL assertions are skipped and counted; the labels leave them out. May import
``eval`` modules, ``sandbox.interop`` (τ²'s message layout), ``sandbox.store`` and ``agents``
records.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agents.model import Message
from agents.trajectory import Status, Trajectory
from mock_tools.models import Task
from sandbox.eval.judge import Judge, JudgeError
from sandbox.interop.export_tau2 import simulation
from sandbox.store.redact import redact

__all__ = [
    "JUDGMENTS_FILE",
    "NL_TEMPERATURE",
    "PROMPT_VERSION",
    "EpisodeNL",
    "JudgmentLog",
    "NLJudging",
    "NLSummary",
    "NLVerdict",
    "conversation",
    "judged_by",
    "judgment_digest",
    "nl_messages",
    "parse_verdicts",
]

JUDGMENTS_FILE = "nl_judgments.jsonl"
NL_TEMPERATURE = 0.0
"""τ²'s ``DEFAULT_LLM_NL_ASSERTIONS_TEMPERATURE``."""
PROMPT_VERSION = "nl-assertions@1"
"""Part of every judgment's digest: a new prompt is a new question."""
GRADED = frozenset({Status.answered, Status.gave_up})
"""The ends τ² grades (a user's or an agent's stop): an episode that ended otherwise (an error,
a spent budget) is unsolved or left out whatever the judge says, and τ² does not judge it."""
WORLD_KEY = "nl_assertions"
"""Where an episode's NL result goes in ``Trajectory.world`` (the state checks' record)."""

_SYSTEM = """You grade a recorded customer-service conversation between an AI agent and a \
customer (lines "user: ..." are the customer, "assistant: ..." the agent, "tool: ..." what \
the agent's tools returned).

You are given numbered assertions about what the agent should have done or said. Decide each \
one separately from the conversation alone: it is met only if the conversation shows it.

Answer with one JSON object and nothing else, in this form, one entry per assertion:
{"verdicts": [{"assertion": 1, "reason": "<one short sentence>", "met": true}]}
"met" is true or false."""


class NLVerdict(BaseModel):
    """The judge's answer on one assertion (τ²'s ``NLAssertionCheck``: nl_assertion, met,
    justification)."""

    assertion: str
    met: bool
    justification: str = ""


class EpisodeNL(BaseModel):
    """One judged episode's verdicts."""

    task_id: str
    trial: int = 0
    verdicts: list[NLVerdict]


class NLSummary(BaseModel):
    """The NL assertions of a run's evaluation (``scores.json``'s ``nl_assertions``)."""

    judge: str | None = Field(default=None, description="The judge model; None: none given.")
    episodes: int = Field(default=0, description="Episodes of tasks with NL assertions.")
    judged: int = Field(default=0, description="Episodes the judge (or its record) judged.")
    met: int = Field(default=0, description="Judged episodes with every assertion met.")
    unjudged: int = Field(
        default=0, description="Episodes the judge failed on (infrastructure; left out, listed)."
    )
    skipped: int = Field(default=0, description="Episodes not judged: no --judge was given.")
    not_graded: int = Field(
        default=0,
        description="Episodes not judged because they ended on an error or a spent budget: "
        "their label does not depend on the judge (τ² does not judge them either).",
    )
    from_record: int = Field(default=0, description="Judgments read from nl_judgments.jsonl.")
    asked: int = Field(default=0, description="Judgments asked of the judge in this evaluation.")
    seconds: float = Field(default=0.0, description="Time spent asking (wall, all asks).")
    results: list[EpisodeNL] = Field(default_factory=list, description="Every judged episode.")

    def note(self) -> str:
        """The summary's line about them."""
        if self.judge is None:
            return (
                f"nl_assertions skipped: {self.skipped} episodes (no --judge; their labels "
                "leave the assertions out)"
            )
        line = (
            f"nl_assertions judged by {self.judge}: {self.judged} of {self.episodes} episodes, "
            f"{self.met} with every assertion met ({self.asked} asked, {self.from_record} from "
            f"the record)"
        )
        if self.unjudged:
            line += f"; {self.unjudged} unjudged (judge failures, left out of the pass rate)"
        if self.not_graded:
            line += f"; {self.not_graded} not asked (ended on an error or a spent budget)"
        return line


def conversation(traj: Trajectory) -> str:
    """The episode's chosen path as the judge reads it: τ²'s messages (``export_tau2``), one
    ``role: content`` line each, the agent's tool calls written after its text."""
    lines = []
    for m in simulation(traj, None)["messages"]:
        text = m.get("content") or ""
        calls = m.get("tool_calls") or []
        called = "; ".join(
            f"{c['name']}({json.dumps(c['arguments'], ensure_ascii=False, sort_keys=True)})"
            for c in calls
        )
        if called:
            text = f"{text} [calls {called}]".strip()
        lines.append(f"{m['role']}: {text}")
    return "\n".join(lines)


def nl_messages(text: str, assertions: Sequence[str]) -> list[Message]:
    """The question: our prompt, the conversation and the numbered assertions."""
    numbered = "\n".join(f"{i}. {a}" for i, a in enumerate(assertions, 1))
    user = f"Conversation:\n{text}\n\nAssertions:\n{numbered}"
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def judgment_digest(text: str, assertions: Sequence[str]) -> str:
    """What a judgment answered: the conversation, the assertions and the prompt's version."""
    doc = json.dumps(
        {"prompt": PROMPT_VERSION, "conversation": text, "assertions": list(assertions)},
        ensure_ascii=False,
        sort_keys=True,
    )
    return "sha256:" + hashlib.sha256(doc.encode("utf-8")).hexdigest()


_TRUE = {"true", "yes", "met"}
_FALSE = {"false", "no", "not met", "unmet"}


def _met(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().casefold() in _TRUE | _FALSE:
        return value.strip().casefold() in _TRUE
    return None


def parse_verdicts(reply: dict[str, Any], assertions: Sequence[str]) -> list[NLVerdict] | None:
    """The reply's verdicts in the assertions' order, or None unless it gives exactly one
    yes/no verdict for each numbered assertion (a missing, repeated, unknown or undecided
    one makes the reply invalid: τ²'s evaluator would take an empty list as all met)."""
    items = reply.get("verdicts")
    if not isinstance(items, list) or len(items) != len(assertions):
        return None
    found: dict[int, NLVerdict] = {}
    for item in items:
        if not isinstance(item, dict):
            return None
        number, met = item.get("assertion"), _met(item.get("met"))
        if isinstance(number, str) and number.strip().isdigit():
            number = int(number)
        if not isinstance(number, int) or isinstance(number, bool) or met is None:
            return None
        if not 1 <= number <= len(assertions) or number in found:
            return None
        reason = item.get("reason")
        found[number] = NLVerdict(
            assertion=assertions[number - 1],
            met=met,
            justification=reason if isinstance(reason, str) else "",
        )
    return [found[i] for i in range(1, len(assertions) + 1)]


class JudgmentLog:
    """``nl_judgments.jsonl``: every judgment, appended; read back by key."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._known: dict[tuple[str, int, str, str], list[NLVerdict]] | None = None

    def known(self) -> dict[tuple[str, int, str, str], list[NLVerdict]]:
        """The recorded judgments by (task, trial, judge, digest); the last of a key wins. A
        line that does not read (the end of a write a kill cut short) is passed over."""
        if self._known is None:
            self._known = {}
            if self.path.is_file():
                with self.path.open(encoding="utf-8", errors="replace") as fh:
                    for line in fh:
                        self._read(line)
        return self._known

    def _read(self, line: str) -> None:
        try:
            doc = json.loads(line)
            key = (str(doc["task"]), int(doc["trial"]), str(doc["judge"]), str(doc["digest"]))
            verdicts = [NLVerdict.model_validate(v) for v in doc["verdicts"]]
        except (ValueError, KeyError, TypeError):
            return
        assert self._known is not None
        self._known[key] = verdicts

    def append(
        self, key: tuple[str, int, str, str], verdicts: list[NLVerdict], seconds: float
    ) -> None:
        """Record one judgment (synced to disk before returning)."""
        task, trial, judge, digest = key
        doc = {
            "task": task,
            "trial": trial,
            "judge": judge,
            "digest": digest,
            "verdicts": [v.model_dump() for v in verdicts],
            "seconds": round(seconds, 3),
        }
        line = json.dumps(doc, ensure_ascii=False, sort_keys=True) + "\n"
        with self.path.open("a", encoding="utf-8") as fh:
            if fh.tell() > 0 and not self._ends_with_newline():
                fh.write("\n")  # after a line a kill cut short: start a line of our own
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
        self.known()[key] = verdicts

    def _ends_with_newline(self) -> bool:
        with self.path.open("rb") as fh:
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) == b"\n"


def judged_by(run: Path, judge: str) -> bool:
    """Whether the run's record holds a judgment of the judge model ``judge``."""
    name = redact(judge)
    return any(key[2] == name for key in JudgmentLog(run / JUDGMENTS_FILE).known())


class NLJudging:
    """The NL assertions of one evaluation: ``judge_all`` puts each episode's result into its
    ``Trajectory.world`` (under ``nl_assertions``: ``{"judge", "verdicts"}`` or ``{"judge",
    "error"}``), where the labelling reads it (``pass_rate.nl_results``); ``summary`` counts."""

    def __init__(self, judge: Judge | None, run: Path, tasks: Sequence[Task]) -> None:
        self.log = JudgmentLog(run / JUDGMENTS_FILE)
        self.assertions = {
            t.id: list(t.world.checks.nl_assertions)
            for t in tasks
            if t.world is not None and t.world.checks.nl_assertions
        }
        if judge is not None and judge.usage.kind == "rules":
            judge = None  # rules-judge answers ToolEval's questions only: no natural language
        self.judge = judge
        self.summary = NLSummary(judge=redact(judge.model.name) if judge is not None else None)

    async def judge_all(self, trajs: Sequence[Trajectory]) -> None:
        """Judge every episode of ``trajs`` whose task has NL assertions and that ended as τ²
        grades (``GRADED``), concurrently, as the judge's own limit allows."""
        mine = [t for t in trajs if t.scenario_id in self.assertions and t.world is not None]
        todo = [t for t in mine if t.status in GRADED]
        self.summary.episodes += len(mine)
        self.summary.not_graded += len(mine) - len(todo)
        if self.judge is None:
            self.summary.skipped += len(todo)
            return
        await asyncio.gather(*(self._one(self.judge, t) for t in todo))
        self.summary.results.sort(key=lambda e: (e.task_id, e.trial))

    async def _one(self, judge: Judge, traj: Trajectory) -> None:
        assertions = self.assertions[traj.scenario_id]
        text = conversation(traj)
        name = redact(judge.model.name)  # a URL's credentials never reach the record
        key = (traj.scenario_id, traj.trial, name, judgment_digest(text, assertions))
        verdicts = self.log.known().get(key)
        assert traj.world is not None
        if verdicts is not None:
            self.summary.from_record += 1
        else:
            started = time.monotonic()
            try:
                verdicts = await judge.ask_json(
                    nl_messages(text, assertions),
                    lambda reply: parse_verdicts(reply, assertions),
                    what="NL-assertion verdicts",
                    temperature=NL_TEMPERATURE,
                )
            except JudgeError as e:
                self.summary.unjudged += 1
                traj.world[WORLD_KEY] = {"judge": key[2], "error": str(e)}
                return
            seconds = time.monotonic() - started
            self.summary.asked += 1
            self.summary.seconds = round(self.summary.seconds + seconds, 3)
            self.log.append(key, verdicts, seconds)
        self.summary.judged += 1
        self.summary.met += all(v.met for v in verdicts)
        self.summary.results.append(
            EpisodeNL(task_id=traj.scenario_id, trial=traj.trial, verdicts=verdicts)
        )
        traj.world[WORLD_KEY] = {
            "judge": key[2],
            "verdicts": [v.model_dump() for v in verdicts],
        }
