"""The trajectory record: one JSON object per episode, complete enough to replay without a model.

An episode is a tree of steps. A *step* (``Node``) is one assistant turn together with the tool
calls it made and their observations: that is the unit an agent decides at once, the unit DFSDT
branches on, and the unit a replay re-issues. (DESIGN.md sketches separate model/tool/finish
nodes; one node per turn keeps every consumer simpler and loses nothing, see docs/design-notes.md.)
A ReAct trajectory is a tree with one branch. The conversation of any node is rebuilt from
``prompt`` plus the turns on the path from the root to that node (``messages_for``).
Imports ``agents.model`` and ``agents.toolenv`` only: every reader of runs depends on it.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from enum import Enum
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from agents.model import Message, Usage
from agents.toolenv import HALLUCINATED_NAME, Observation

SCHEMA = "agent-sandbox/trajectory@1"


class Status(str, Enum):
    """How an episode ended. ``context_overflow``: the history outgrew the model's context (the
    endpoint refused the request as too long), an outcome of the agent's, counted unsolved;
    ``error``: the infrastructure or the harness failed (left out of the pass rate, run again
    by ``--resume``)."""

    answered = "answered"
    gave_up = "gave_up"
    budget_exhausted = "budget_exhausted"
    context_overflow = "context_overflow"
    error = "error"


NodeKind = Literal["action", "finish", "give_up", "thought", "invalid", "error", "user"]
"""action: called at least one offered function; finish: Finish(give_answer); give_up:
Finish(give_up_and_restart); thought: text and no call (ToolBench keeps it as a Thought node: no
observation, the next turn follows it); invalid: no usable call (only invented function names or
unusable Finish calls, each answered with an error observation; or a format error or an empty
turn, answered with a feedback message); error: the model call failed; user: in a conversation,
the user's answer to the reply before it (a thought's text or a Finish's final answer:
``agents.user``)."""


class StepCall(BaseModel):
    """One tool call of a step, with what it returned."""

    id: str
    name: str = Field(description="The function name as called (e.g. ``search_for_flights``).")
    arguments: str = Field(description="Raw argument text as the model wrote it.")
    function: str | None = Field(
        default=None,
        description="The offered function the name dispatched to (it differs from ``name`` "
        "under ToolBench's suffix rule); None when not dispatched.",
    )
    hallucinated: bool = Field(
        default=False,
        description="The name matched no offered function: the call was answered with "
        'ToolBench\'s "No such function name" observation and the history shows it as '
        f"``{HALLUCINATED_NAME}``, as ToolBench's does.",
    )
    args: dict[str, Any] | None = Field(default=None, description="Parsed arguments, if valid.")
    tool: str | None = Field(default=None, description="Resolved tool, when the name is known.")
    api: str | None = None
    observation: Observation | None = None


class FinishCall(BaseModel):
    return_type: str
    final_answer: str = ""
    arguments: str | None = Field(
        default=None,
        description="The Finish arguments as the model wrote them, when the record has them "
        "(imported ToolBench trees); left out of the record when unknown.",
    )
    position: int | None = Field(
        default=None,
        description="How many of the node's calls the turn made before this Finish, when some "
        "came after it; left out of the record when it was the turn's last.",
    )
    late_answer: str | None = Field(
        default=None,
        description="ToolBench's finish rule (presets): the argument text of the turn's last call "
        "after this Finish(give_answer), which ToolBench records as the final answer; left out of "
        "the record when no call followed or the rule is the default.",
    )

    @property
    def answer(self) -> str:
        """The episode's final answer this Finish gives (``late_answer`` when set)."""
        return self.late_answer if self.late_answer is not None else self.final_answer

    @model_serializer(mode="wrap")
    def _without_unknown_arguments(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for key in ("arguments", "position", "late_answer"):
                if data.get(key) is None:
                    data.pop(key, None)
        return data


class Node(BaseModel):
    id: int
    parent: int | None = None
    depth: int = Field(
        default=0,
        description="Steps (turns) from the root, this one included; every turn counts "
        "(action, finish, invalid...), see docs/agents.md.",
    )
    kind: NodeKind
    content: str | None = Field(default=None, description="Assistant text (the thought).")
    calls: list[StepCall] = Field(default_factory=list)
    finish: FinishCall | None = None
    format_error: str | None = Field(default=None, description="Why the turn was not usable.")
    feedback: str | None = Field(
        default=None, description="Message sent back to the model after an invalid turn."
    )
    diversity_prompt: str | None = Field(
        default=None, description="DFSDT: the prompt that asked for a different action."
    )
    usage: Usage = Field(default_factory=Usage)
    latency_ms: float = 0.0
    error: str | None = None
    user: dict[str, Any] | None = Field(
        default=None,
        description="A user node: how the user answered (signal, reveal, source, failure; its "
        "text is ``content``). Left out of the record when None.",
    )

    @model_serializer(mode="wrap")
    def _without_user(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and data.get("user") is None:
            data.pop("user", None)
        return data

    @property
    def reply(self) -> str | None:
        """In a conversation, what this node said to the user: a thought's text, a Finish's
        final answer (None for other kinds)."""
        if self.kind == "thought":
            return self.content or ""
        if self.kind == "finish" and self.finish is not None:
            return self.finish.final_answer
        return None


class EpisodeUsage(BaseModel):
    """What an episode consumed. The one usage record: a run's totals add these up."""

    model_calls: int = 0
    tool_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    wall_seconds: float = 0.0
    model_retries: int = Field(
        default=0, description="Model calls retried by the client (429, 5xx, timeouts...)."
    )

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: EpisodeUsage) -> None:
        """Add ``other``'s counts to these."""
        for name in EpisodeUsage.model_fields:
            setattr(self, name, getattr(self, name) + getattr(other, name))


class ErrorRecord(BaseModel):
    kind: Literal["infra", "agent", "internal", "user"] = Field(
        description="infra: endpoint/timeouts (not the agent's fault); agent: its own mistake; "
        "user: the user of a conversation failed (not the agent's fault either)."
    )
    message: str
    node: int | None = None


class Component(BaseModel):
    name: str
    params: dict[str, Any] = Field(default_factory=dict)


def _now() -> datetime:
    return datetime.now(timezone.utc)


class Trajectory(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    schema_: str = Field(default=SCHEMA, alias="schema")
    run_id: str = ""
    scenario_id: str
    trial: int = 0
    agent: Component
    model: Component
    seed: int = 0
    status: Status
    end_reason: str = Field(
        default="",
        description="Why it ended: answered, gave_up, budget:<name>, tree_exhausted, "
        "context_overflow, model_error:<kind>, ...",
    )
    final_answer: str | None = None
    prompt: list[Message] = Field(
        default_factory=list, description="The system and user messages the episode started with."
    )
    functions: list[dict[str, Any]] = Field(
        default_factory=list, description="The function schemas offered (Finish included)."
    )
    nodes: list[Node] = Field(default_factory=list)
    chosen_path: list[int] = Field(default_factory=list)
    usage: EpisodeUsage = Field(default_factory=EpisodeUsage)
    errors: list[ErrorRecord] = Field(default_factory=list)
    tree: dict[str, Any] = Field(
        default_factory=dict,
        description="What the strategy records of its episode as a whole: DFSDT's search "
        "statistics (backtracks, max depth); an external agent's process (``external``: exit "
        "code, stderr tail).",
    )
    exchanges: list[dict[str, Any]] = Field(
        default_factory=list,
        description="External agents only: every model request the agent sent through the "
        "sandbox's proxy and the answer it got, in order (``agents.models.exchange``); a "
        "replay serves these answers. Left out of the record when empty.",
    )
    world: dict[str, Any] | None = Field(
        default=None,
        description="Episodes in a world: the state checks of its chosen path (initial, final "
        "and gold state hashes, each check's result, the diff from the gold state; "
        "``sandbox.eval.world_verdict``), as the run found them; evaluation computes them "
        "again. Left out of the record when None.",
    )
    started_at: datetime = Field(default_factory=_now)
    ended_at: datetime | None = None

    @model_serializer(mode="wrap")
    def _without_empty_exchanges(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            if not data.get("exchanges"):
                data.pop("exchanges", None)
            if data.get("world") is None:
                data.pop("world", None)
        return data

    @model_validator(mode="after")
    def _tree_refers_to_its_own_nodes(self) -> Trajectory:
        """A node's id is its place in ``nodes`` and its parent comes before it; the chosen path
        and the errors name nodes the trajectory has. Every reader indexes ``nodes`` by these,
        so a record that breaks them (a line edited or cut by hand) is refused where it is read,
        never half-read."""
        count = len(self.nodes)
        for place, node in enumerate(self.nodes):
            if node.id != place:
                raise ValueError(f"nodes[{place}] has id {node.id}: a node's id is its place")
            if node.parent is not None and not 0 <= node.parent < place:
                raise ValueError(f"node {place}'s parent {node.parent} is not an earlier node")
        for name, ids in (
            ("chosen_path", self.chosen_path),
            ("errors", [e.node for e in self.errors if e.node is not None]),
        ):
            wrong = [i for i in ids if not 0 <= i < count]
            if wrong:
                raise ValueError(f"{name} names node {wrong[0]}, but there are {count} nodes")
        return self

    # -- navigation -------------------------------------------------------------------------

    def node(self, node_id: int) -> Node:
        return self.nodes[node_id]

    def path_to(self, node_id: int) -> list[Node]:
        path: list[Node] = []
        cur: int | None = node_id
        while cur is not None:
            n = self.nodes[cur]
            path.append(n)
            cur = n.parent
        return list(reversed(path))

    def chosen(self) -> list[Node]:
        return [self.nodes[i] for i in self.chosen_path]

    def children(self, node_id: int | None) -> list[Node]:
        return [n for n in self.nodes if n.parent == node_id]

    @property
    def infra_error(self) -> bool:
        return self.status is Status.error and any(e.kind == "infra" for e in self.errors)

    @property
    def user_error(self) -> bool:
        """The episode was ended by a failure of its user (``ErrorRecord`` kind ``user``)."""
        return self.status is Status.error and any(e.kind == "user" for e in self.errors)

    @classmethod
    def from_json_line(cls, line: str | bytes) -> Trajectory:
        """A line ``to_json_line`` wrote. pydantic's JSON reader refuses the escape of an
        unpaired surrogate that such a line may hold; that line is read through ``json``."""
        try:
            return cls.model_validate_json(line)
        except ValidationError as e:
            if not any("surrogate" in str(err["msg"]) for err in e.errors()):
                raise
        return cls.model_validate(json.loads(line))

    def to_json_line(self) -> str:
        """One line of JSON. UTF-8 text as is; should a model have written text with an unpaired
        surrogate (no UTF-8 file can hold it), the line escapes it instead, losing nothing."""
        data = self.model_dump(mode="json", by_alias=True)
        text = json.dumps(data, ensure_ascii=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(data, ensure_ascii=True)
        return text + "\n"


def messages_for(prompt: list[Message], path: list[Node]) -> list[Message]:
    """The chat history after the given steps: the prompt, then each step's turn and results.
    In a conversation, a ``Finish`` the user answered is the reply it was: the assistant's
    message with the final answer as its text."""
    messages: list[Message] = [dict(m) for m in prompt]
    for i, node in enumerate(path):
        answered = i + 1 < len(path) and path[i + 1].kind == "user"
        if answered and node.kind == "finish" and node.finish is not None:
            if node.calls:  # the turn's other calls ran first: they stay in the history
                messages.extend(node_messages(node))
            messages.append({"role": "assistant", "content": node.finish.final_answer})
            continue
        messages.extend(node_messages(node))
    return messages


def transcript_for(prompt: list[Message], path: list[Node]) -> list[Message]:
    """What the user of a conversation has seen at the end of ``path``: its first message, then
    each reply of the agent (a thought's text, a ``Finish``'s final answer, when the user answered
    it or it ends the path) and each of its own answers, in order; before an answer, the calls
    of its own tools it made first (dual control, ``user_call_messages``)."""
    out: list[Message] = [m for m in prompt if m.get("role") == "user"][:1]
    for i, n in enumerate(path):
        if n.kind == "user":
            out.extend(user_call_messages(n.calls))
            out.append({"role": "user", "content": n.content or ""})
        elif n.reply is not None and (i + 1 == len(path) or path[i + 1].kind == "user"):
            out.append({"role": "assistant", "content": n.reply})
    return out


def user_call_messages(calls: list[StepCall], content: str = "") -> list[Message]:
    """The user's calls of its own tools as its transcript shows them: its message with the
    calls (role ``user``, as its messages are in a transcript), then one result per call."""
    if not calls:
        return []
    out: list[Message] = [
        {
            "role": "user",
            "content": content,
            "tool_calls": [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in calls
            ],
        }
    ]
    for c in calls:
        content_of = c.observation.content if c.observation is not None else ""
        out.append({"role": "tool", "tool_call_id": c.id, "name": c.name, "content": content_of})
    return out


def user_answers(trajectory: Trajectory) -> list[tuple[list[Message], Node]]:
    """Every answer of the user in a trajectory with the transcript it answered (a replay's
    user serves them by transcript)."""
    out = []
    for node in trajectory.nodes:
        if node.kind == "user" and node.parent is not None:
            seen = transcript_for(trajectory.prompt, trajectory.path_to(node.parent))
            out.append((seen, node))
    return out


def node_messages(node: Node) -> list[Message]:
    """The messages one step adds to the history.

    A turn with calls: the assistant message with its calls (an invented function name shown as
    ``invalid_hallucination_function_name``, as ToolBench shows it), then one tool result per
    call. A thought (text, no call): the assistant message alone, nothing answers it. An invalid
    turn that got a feedback message (format error, empty turn): its text, then the feedback.
    A model error adds nothing.
    """
    if node.kind == "error":
        return []
    if node.kind == "user":
        return [{"role": "user", "content": node.content or ""}]
    if node.kind == "thought" or (
        node.kind == "invalid" and (node.feedback is not None or not node.calls)
    ):
        out: list[Message] = [{"role": "assistant", "content": node.content or ""}]
        if node.feedback:
            out.append({"role": "user", "content": node.feedback})
        return out
    if not (node.calls or node.finish):
        return []
    names = [HALLUCINATED_NAME if c.hallucinated else c.name for c in node.calls]
    tool_calls = [
        {"id": c.id, "type": "function", "function": {"name": name, "arguments": c.arguments}}
        for c, name in zip(node.calls, names, strict=True)
    ]
    out = [{"role": "assistant", "content": node.content or "", "tool_calls": tool_calls}]
    for c, name in zip(node.calls, names, strict=True):
        obs = c.observation
        out.append(
            {
                "role": "tool",
                "tool_call_id": c.id,
                "name": name,
                "content": obs.content if obs else "",
            }
        )
    return out
