"""An LLM judge with ToolEval's semantics, through the model layer, with a request cache.

- ``check_answer_status(query, answer)``: Solved / Unsolved / Unsure from the query and the final
  answer alone, K samples (default 3), majority vote (no strict majority -> Unsure).
- On Unsure, a second look: the same question with the whole chosen path of the trajectory
  (thoughts, calls, observations), again K samples and a majority.
- ``select_better_answer(query, a, b)``: 0 if ``a`` is better, 1 if ``b``, None for no
  preference. Asked in both answer orders in each of K rounds, so a judge that always picks the
  first position cancels out into a tie.

Samples differ by a ``seed`` request parameter (and the configured temperature); every request,
sample index included, is a cache key, so a re-run with the same judge makes no model call. The
judge's usage (calls, cache hits, tokens, cost) is kept apart from the agents'.
May import ``sandbox.models`` (its cache) and ``eval`` modules.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel

from agents.errors import ModelError
from agents.model import Message, Model
from agents.trajectory import Trajectory
from mock_tools.models import Task
from sandbox.errors import SandboxError
from sandbox.eval.pass_rate import SCORES, EpisodeLabel, Label
from sandbox.models.cache import RequestCache, request_key

AnswerStatus = Literal["Solved", "Unsolved", "Unsure"]
_STATUS: dict[str, AnswerStatus] = {"solved": "Solved", "unsolved": "Unsolved", "unsure": "Unsure"}
_TO_LABEL: dict[AnswerStatus, Label] = {
    "Solved": "solved",
    "Unsolved": "unsolved",
    "Unsure": "unsure",
}
OBSERVATION_CHARS = 1500

STATUS_SYSTEM = """You grade whether an AI assistant solved a user's query with tools.
Decide from what you are shown:
- "Solved": the final answer fully provides what the query asks for (every sub-request), \
or, for a query that cannot be done with the available tools, clearly says so and why.
- "Unsolved": the answer is missing, refuses without reason, is wrong, or answers only part \
of the query.
- "Unsure": you cannot tell from what you are shown whether the answer is right.
Reply with one JSON object only: {"reason": "<one sentence>", "answer_status": \
"Solved" | "Unsolved" | "Unsure"}"""

BETTER_SYSTEM = """You compare two final answers of AI assistants to the same user query.
Pick the answer that better solves the query: correct, complete, and specific beats vague or \
partial; an honest "cannot be done" beats a made-up answer.
Reply with one JSON object only: {"reason": "<one sentence>", "index": 0 | 1} where 0 means \
Answer 0 and 1 means Answer 1."""


class JudgeError(SandboxError):
    """The judge model failed (after the model layer's retries)."""


class JudgeUsage(BaseModel):
    """The judge's own consumption, reported apart from the agents'."""

    model: str
    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0


class StatusVerdict(BaseModel):
    status: AnswerStatus
    votes: dict[str, int]
    second_look: bool = False


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in a reply, tolerating code fences and prose around it."""
    text = (text or "").strip()
    text = re.sub(r"^```(?:json)?\s*|\s*```$", "", text, flags=re.IGNORECASE)
    start = text.find("{")
    while start != -1:
        depth = 0
        for i in range(start, len(text)):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    try:
                        value = json.loads(text[start : i + 1])
                    except json.JSONDecodeError:
                        break
                    return value if isinstance(value, dict) else None
        start = text.find("{", start + 1)
    return None


def parse_status(text: str) -> AnswerStatus:
    """Solved / Unsolved / Unsure from a reply; anything unreadable is Unsure."""
    obj = parse_json_object(text)
    if obj is not None:
        for key in ("answer_status", "status", "label", "verdict"):
            value = obj.get(key)
            if isinstance(value, str) and value.strip().lower() in _STATUS:
                return _STATUS[value.strip().lower()]
    m = re.search(r"\b(unsolved|solved|unsure)\b", text or "", re.IGNORECASE)
    return _STATUS[m.group(1).lower()] if m else "Unsure"


def parse_index(text: str) -> int | None:
    """0 or 1 from a reply; None when unreadable."""
    obj = parse_json_object(text)
    if obj is not None:
        for key in ("index", "better", "choice", "answer"):
            value = obj.get(key)
            if value in (0, 1, "0", "1"):
                return int(value)
    m = re.search(r"\b([01])\b", text or "")
    return int(m.group(1)) if m else None


def majority(statuses: list[AnswerStatus]) -> AnswerStatus:
    """The status with a strict plurality; a tie at the top is Unsure."""
    counts = Counter(statuses).most_common()
    if not counts:
        return "Unsure"
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return "Unsure"
    return counts[0][0]


def render_trajectory(traj: Trajectory, limit: int = OBSERVATION_CHARS) -> str:
    """The chosen path as plain text for the judge's second look."""
    lines: list[str] = []
    path = traj.chosen() if traj.chosen_path else traj.nodes
    for i, node in enumerate(path, 1):
        if node.content:
            lines.append(f"Step {i} thought: {node.content.strip()}")
        for c in node.calls:
            lines.append(f"Step {i} call: {c.name}({c.arguments})")
            if c.observation is not None:
                obs = c.observation.content
                if len(obs) > limit:
                    obs = obs[:limit] + " ...[cut]"
                lines.append(f"Step {i} observation: {obs}")
        if node.finish is not None:
            lines.append(f"Step {i} finish ({node.finish.return_type}): {node.finish.final_answer}")
        if node.format_error:
            lines.append(f"Step {i} invalid turn: {node.format_error}")
    return "\n".join(lines) or "(no steps)"


class Judge:
    """The judge: a ``Model`` plus an optional ``RequestCache``."""

    def __init__(
        self,
        model: Model,
        *,
        cache: RequestCache | None = None,
        samples: int = 3,
        rounds: int = 1,
        temperature: float = 0.7,
        concurrency: int = 4,
    ) -> None:
        if samples < 1 or rounds < 1:
            raise ValueError("samples and rounds must be at least 1")
        self.model = model
        self.cache = cache
        self.samples = samples
        self.rounds = rounds
        self.temperature = temperature
        self.usage = JudgeUsage(model=model.name)
        self._limit = asyncio.Semaphore(concurrency)

    async def ask(self, messages: list[Message], sample: int) -> str:
        """One request, answered from the cache when possible."""
        params: dict[str, Any] = {"temperature": self.temperature, "seed": sample}
        key = request_key(self.model.name, messages, [], params)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.usage.cache_hits += 1
                return str(hit.get("content") or "")
        async with self._limit:
            try:
                turn = await self.model.complete(messages, [], params)
            except ModelError as e:
                raise JudgeError(f"judge model {self.model.name!r} failed: {e}") from e
        self.usage.calls += 1
        self.usage.prompt_tokens += turn.usage.prompt_tokens
        self.usage.completion_tokens += turn.usage.completion_tokens
        self.usage.cost += turn.usage.cost
        content = turn.content or ""
        if self.cache is not None:
            self.cache.put(key, self.model.name, {"content": content})
        return content

    async def _vote(self, messages: list[Message]) -> list[AnswerStatus]:
        replies = await asyncio.gather(*(self.ask(messages, i) for i in range(self.samples)))
        return [parse_status(r) for r in replies]

    @staticmethod
    def _status_messages(query: str, answer: str, solvable: bool, trajectory: str | None) -> list:
        parts = [f"Query:\n{query}"]
        if not solvable:
            parts.append(
                "Note: this query cannot be done with the available tools; it counts as Solved "
                "only if the answer says it cannot be done and why."
            )
        if trajectory is not None:
            parts.append(f"Trajectory (the assistant's steps and tool results):\n{trajectory}")
        parts.append(f"Final answer:\n{answer or '(empty)'}")
        return [
            {"role": "system", "content": STATUS_SYSTEM},
            {"role": "user", "content": "\n\n".join(parts)},
        ]

    async def check_answer_status(
        self, query: str, answer: str, *, solvable: bool = True, trajectory: str | None = None
    ) -> StatusVerdict:
        """K samples, majority. With ``trajectory``, the second look's question."""
        votes = await self._vote(self._status_messages(query, answer, solvable, trajectory))
        return StatusVerdict(
            status=majority(votes),
            votes=dict(sorted(Counter(votes).items())),
            second_look=trajectory is not None,
        )

    async def judge_episode(self, traj: Trajectory, task: Task) -> StatusVerdict:
        """Answer alone first; on Unsure, a second look with the whole trajectory."""
        answer = (traj.final_answer or "").strip()
        first = await self.check_answer_status(task.query, answer, solvable=task.solvable)
        if first.status != "Unsure":
            return first
        return await self.check_answer_status(
            task.query, answer, solvable=task.solvable, trajectory=render_trajectory(traj)
        )

    async def label(self, traj: Trajectory, task: Task, base: EpisodeLabel) -> EpisodeLabel:
        """The judged version of an undecided label."""
        verdict = await self.judge_episode(traj, task)
        label = _TO_LABEL[verdict.status]
        votes = ", ".join(f"{k} {v}" for k, v in verdict.votes.items())
        look = "second look with the trajectory" if verdict.second_look else "answer only"
        return base.model_copy(
            update={
                "label": label,
                "score": SCORES[label],
                "method": "judge",
                "reason": f"judge {self.model.name}: {verdict.status} ({votes}; {look})",
            }
        )

    async def select_better_answer(self, query: str, a: str, b: str) -> int | None:
        """0 if ``a`` is better, 1 if ``b``; None when the votes tie. Both orders, K rounds."""
        asks = []
        for r in range(self.rounds):
            asks.append(self.ask(_better_messages(query, a, b), r))
            asks.append(self.ask(_better_messages(query, b, a), r))
        replies = await asyncio.gather(*asks)
        votes_a = votes_b = 0
        for i, reply in enumerate(replies):
            idx = parse_index(reply)
            if idx is None:
                continue
            a_first = i % 2 == 0
            if (idx == 0) == a_first:
                votes_a += 1
            else:
                votes_b += 1
        if votes_a == votes_b:
            return None
        return 0 if votes_a > votes_b else 1


def _better_messages(query: str, first: str, second: str) -> list[Message]:
    return [
        {"role": "system", "content": BETTER_SYSTEM},
        {
            "role": "user",
            "content": f"Query:\n{query}\n\nAnswer 0:\n{first}\n\nAnswer 1:\n{second}",
        },
    ]
