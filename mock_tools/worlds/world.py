"""``World``: a world's tools over its state; ``Context``: what a call may use; ``WorldEngine``:
a loaded world that answers calls atomically.

A world is a subclass of ``World`` whose methods marked ``@read`` / ``@write``
(``mock_tools.worlds.tools``) are its tools::

    class Shop(World):
        name = "shop"
        now = "2026-03-02T09:00:00+00:00"     # the default frozen clock

        @read
        def get_order(self, ctx: Context, order_id: str) -> dict:
            '''Look an order up by its id.

            Args:
                order_id: The order's id, such as "O-1001".
            '''
            order = ctx.db.get("orders", order_id)
            if order is None:
                raise ToolError(f"no order {order_id}")
            return order

Everything impure a tool needs comes from the ``Context``: ``ctx.db`` (the call's transaction
over the state, ``mock_tools.worlds.state.Tx``), ``ctx.now`` (the task's frozen clock),
``ctx.rng`` (a ``random.Random`` seeded from the episode's seed, the state and the call, so the
same state and the same call draw the same numbers under every strategy) and ``ctx.new_id``
(ids from counters kept in the state).

``WorldEngine.execute`` runs one call: a transaction over the given state, the tool, then either
the new state (a ``write`` tool that returned a JSON value) or the old one unchanged with an error
answer (the tool raised ``ToolError`` or anything else, returned something JSON cannot hold or
NaN, or a ``read`` tool tried to write). Imports the worlds' state, tools, task and errors
modules.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any, ClassVar

from mock_tools.canonical import canonical_args, dumps_canonical
from mock_tools.models import ApiSpec, ToolSpec
from mock_tools.worlds.errors import CallTimedOut, ToolError, WorldDefinitionError
from mock_tools.worlds.state import Change, State, StateError, Tx, canonical_record, json_equal
from mock_tools.worlds.task import EnvAssertion, TaskWorld
from mock_tools.worlds.tools import ToolDef, is_tool, source_of, tool_def

__all__ = ["Context", "World", "WorldAnswer", "WorldEngine", "apply_patch", "parse_clock"]

DEFAULT_NOW = "2025-01-01T12:00:00+00:00"


@dataclass
class Context:
    """What a world tool may use besides its arguments (see the module docstring)."""

    db: Tx
    now: datetime
    rng: random.Random
    task: str | None = None

    def new_id(self, collection: str, prefix: str = "", width: int = 0) -> str:
        """A new id for ``collection``: ``prefix`` and the next number (``width``: zero-padded)."""
        return self.db.new_id(collection, prefix, width)


class World:
    """Base class of worlds: set ``name`` and mark tools with ``@read`` / ``@write``."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    now: ClassVar[str] = DEFAULT_NOW
    """The frozen clock of tasks that set none (ISO 8601)."""
    policy: ClassVar[str] = ""
    """Rules the agent is told (its system prompt in a run), empty for none."""
    functions: ClassVar[tuple[Callable[..., Any], ...]] = ()
    """Plain functions marked ``@read`` / ``@write`` that are tools too (``(ctx, ...)``)."""

    @classmethod
    def tool_defs(cls) -> list[ToolDef]:
        """Every tool: the marked methods in definition order (base classes first), then
        ``functions``."""
        seen: dict[str, ToolDef] = {}
        for klass in reversed(cls.__mro__):
            here: set[str] = set()
            for attr, value in vars(klass).items():
                if is_tool(value) and callable(value):
                    d = tool_def(value, method=True)
                    _check_clash(seen.get(d.name), d, same_place=d.name in here)
                    here.add(d.name)
                    seen.pop(d.name, None)
                    seen[d.name] = d
                elif attr in seen and not is_tool(value):
                    seen.pop(attr)  # a subclass replaced the tool with a plain method
        for fn in cls.functions:
            if not is_tool(fn):
                raise WorldDefinitionError(
                    f"{getattr(fn, '__name__', fn)!r} in functions is not marked @read or @write",
                    source_of(fn),
                )
            d = tool_def(fn, method=False)
            _check_clash(seen.get(d.name), d, same_place=True)
            seen[d.name] = d
        return list(seen.values())

    @classmethod
    def make_engine(cls, base: State, source: str) -> WorldEngine:
        """The engine that answers this world's calls over ``base`` (a world whose tools run
        elsewhere, such as ``mock_tools.worlds.tau2``, has its own)."""
        return WorldEngine(cls, base, source=source)


def _check_clash(before: ToolDef | None, d: ToolDef, *, same_place: bool) -> None:
    """Two tools of one name: a ``WorldDefinitionError`` naming both, unless a subclass
    redefines its base's tool for the same side (the agent's or the user's). Tools named
    alike in one class or in ``functions``, or a tool of the user's and one of the agent's,
    would leave one of them silently unreachable."""
    if before is None or (not same_place and before.user == d.user):
        return
    whose = {False: "the agent's", True: "the user's"}
    raise WorldDefinitionError(
        f"two tools named {d.name!r}: {whose[before.user]} at {before.source} and "
        f"{whose[d.user]} here (a tool's name, given or its function's, must be unique)",
        d.source,
    )


@dataclass(frozen=True)
class WorldAnswer:
    """What one call did: its answer and the state after it (the same state on an error)."""

    ok: bool
    body: Any
    error: str
    state: State
    changes: list[Change] = field(default_factory=list)
    text: str | None = None
    """The answer as text, when the world defines it (BFCL's execution result); None: the
    canonical JSON of the body, or the error (``answer_text``)."""

    def answer_text(self) -> str:
        """The text an answer is compared by (``turn_answers`` checks)."""
        if self.text is not None:
            return self.text
        return canonical_record(self.body) if self.ok else self.error


def parse_clock(text: str, where: str) -> datetime:
    """An ISO 8601 time, UTC when it names no zone."""
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise WorldDefinitionError(f"not an ISO 8601 time: {text!r}", where) from None
    return t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)


def apply_patch(base: State, patch: Mapping[str, Mapping[str, Any]]) -> State:
    """``base`` with a task's patch merged in: each record merged field by field (JSON merge
    patch, RFC 7386: a null removes), a null record removed, a new one added."""
    if not patch:
        return base
    tx = base.begin()
    for collection, records in patch.items():
        for rid, change in records.items():
            if change is None:
                tx.delete(collection, rid)
                continue
            current = tx.get(collection, rid)
            tx.put(collection, rid, _merge(current, change))
    return tx.commit()[0]


def _merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = _merge(out.get(k), v)
    return out


def call_seed(seed: int, task: str | None, state: State, tool: str, key: str) -> int:
    """The seed of a call's ``ctx.rng``: the same for the same episode seed, task, state and
    call, whatever came before."""
    text = f"{seed}\x1f{task or ''}\x1f{state.hash}\x1f{tool}\x1f{key}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


class WorldEngine:
    """A loaded world: its tools, its base state, each task's initial state, and calls.

    ``tools`` are the agent's; ``user_tools`` the user's (dual control, ``@write(user=True)``):
    never in the catalog the agent is offered, called on a session only through its user
    route (``mock_tools.session_routes``). Their names are distinct."""

    user_tools: Mapping[str, ToolDef] = MappingProxyType({})

    def __init__(self, world: type[World], base: State, *, source: str) -> None:
        if not isinstance(world, type) or not issubclass(world, World):
            raise WorldDefinitionError(f"{world!r} is not a World subclass", source)
        self.cls = world
        self.name = world.name or world.__name__.lower()
        self.source = source
        try:
            self.instance = world()
        except Exception as e:
            raise WorldDefinitionError(
                f"cannot make the world: {type(e).__name__}: {e}", source
            ) from None
        defs = world.tool_defs()
        self.tools: dict[str, ToolDef] = {d.name: d for d in defs if not d.user}
        self.user_tools = {d.name: d for d in defs if d.user}
        if not self.tools:
            mine = f" of the agent's (its {len(self.user_tools)} are the user's)"
            raise WorldDefinitionError(
                f"world {self.name!r} has no tools{mine if self.user_tools else ''}", source
            )
        self.base = base
        self.default_now = parse_clock(world.now, source)
        self._initial: dict[str, State] = {}

    def ready(self) -> bool:
        """Whether a call can start at once (``prepare`` has nothing to do): always, here."""
        return True

    def prepare(self) -> None:
        """Get ready for calls; run before a call when ``ready()`` is false, outside the call's
        time limit, so a one-off cost (an engine's worker process starting) is never charged
        to an agent's call. Nothing to do here."""

    @property
    def policy(self) -> str:
        return self.cls.policy

    def tool_spec(self) -> ToolSpec:
        """The world's tools as a tool of the suite's catalog (offered by their own names)."""
        doc = self.cls.description or " ".join((self.cls.__doc__ or "").split())
        apis = [
            ApiSpec(
                name=d.name,
                description=d.description,
                parameters=d.parameters,
                function=d.name,
                returns=None,
                read_only=not d.writes,
            )
            for d in self.tools.values()
        ]
        return ToolSpec(name=self.name, description=doc, category="World", apis=apis)

    def kind(self, tool: str) -> str | None:
        """``read`` or ``write`` for a tool of this world, None for another name."""
        d = self.find_tool(tool)
        return None if d is None else d.kind

    def find_tool(self, name: str) -> ToolDef | None:
        """The agent's or the user's tool of that name."""
        return self.tools.get(name) or self.user_tools.get(name)

    def env_assertion(
        self, state: State, assertion: EnvAssertion, *, now: datetime, task: str | None, seed: int
    ) -> tuple[bool, str]:
        """Whether ``assertion`` holds on ``state`` (the call run on it, its effect discarded)
        and what the call answered. An assertion this world cannot run
        (``env_assertion_problem``) is a ``WorldDefinitionError``."""
        problem = self.env_assertion_problem(assertion)
        d = self.find_tool(assertion.call)
        if problem is not None or d is None:
            raise WorldDefinitionError(
                f"task {task!r}: env assertion {assertion.call!r}: {problem}", self.source
            )
        answer = self.call(state, d.name, assertion.args, now=now, task=task, seed=seed)
        if not answer.ok:
            return False, f"the call failed: {answer.error}"
        got = answer.body
        return _same_value(got, assertion.value), f"answered {got!r}"

    def call(
        self,
        state: State,
        tool: str,
        args: Mapping[str, Any],
        *,
        now: datetime,
        task: str | None = None,
        seed: int = 0,
    ) -> WorldAnswer:
        """One call as the server makes it: the arguments canonical under the tool's schema
        (its key the rng's seed material), then ``execute``."""
        d = self.find_tool(tool)
        canon = canonical_args(dict(args), d.parameters if d is not None else {})
        key = dumps_canonical(canon)
        return self.execute(state, tool, canon, key=key, now=now, task=task, seed=seed)

    def env_assertion_problem(self, assertion: EnvAssertion) -> str | None:
        """Why this world cannot run ``assertion`` (None: it can): its call is no tool of the
        world, or a tool of the other side than its ``side`` (the agent's or the user's)."""
        d = self.find_tool(assertion.call)
        if d is None:
            return f"no tool of world {self.name!r}"
        side = "user" if d.user else "agent"
        if side != assertion.side:
            return f"on the {assertion.side}'s side, but {d.name} is the {side}'s tool"
        return None

    def user_functions(self) -> list[dict[str, Any]]:
        """The user's tools as functions a user model is offered (OpenAI's shape)."""
        return [
            {
                "type": "function",
                "function": {
                    "name": d.name,
                    "description": d.description,
                    "parameters": d.parameters,
                },
            }
            for d in self.user_tools.values()
        ]

    def initial(self, task_id: str | None, spec: TaskWorld | None) -> State:
        """The initial state of a task (the base state with its patch), kept per task."""
        if spec is None or not spec.state:
            return self.base
        found = self._initial.get(task_id or "")
        if found is None:
            try:
                found = apply_patch(self.base, spec.state)
            except StateError as e:
                raise WorldDefinitionError(f"task {task_id!r}: its state patch: {e}") from None
            self._initial[task_id or ""] = found
        return found

    def clock(self, spec: TaskWorld | None, where: str = "task") -> datetime:
        if spec is None or spec.now is None:
            return self.default_now
        return parse_clock(spec.now, where)

    def execute(
        self,
        state: State,
        tool: str,
        args: Mapping[str, Any],
        *,
        key: str,
        now: datetime,
        task: str | None = None,
        seed: int = 0,
    ) -> WorldAnswer:
        """Run one call atomically (see the module docstring). ``key`` is the canonical text of
        the arguments (the rng's seed material). The agent's tools and the user's are called
        alike: who may call which is the routes' to decide."""
        d = self.find_tool(tool)
        if d is None:
            return WorldAnswer(False, None, f"world {self.name!r} has no tool {tool!r}", state)
        tx = state.begin(writable=d.writes)
        ctx = Context(
            db=tx, now=now, rng=random.Random(call_seed(seed, task, state, tool, key)), task=task
        )
        try:
            result = d.function(self.instance, ctx, **args) if d.method else d.function(ctx, **args)
            try:
                body = json.loads(canonical_record(result)) if result is not None else None
            except StateError as e:
                return WorldAnswer(False, None, f"the tool answered {e}", state)
            new, changes = tx.commit()
        except CallTimedOut:
            raise
        except ToolError as e:
            return WorldAnswer(False, None, str(e) or type(e).__name__, state)
        except StateError as e:
            return WorldAnswer(False, None, str(e), state)
        except (Exception, SystemExit, KeyboardInterrupt) as e:
            return WorldAnswer(False, None, f"{type(e).__name__}: {e}", state)
        return WorldAnswer(True, body, "", new, changes)


def _same_value(got: Any, want: Any) -> bool:
    """Equal as canonical JSON values (``1`` and ``1.0`` alike, as records compare; ``true``
    and ``1`` not, as Python's ``True == 1`` would have them)."""
    try:
        return json_equal(json.loads(canonical_record(got)), json.loads(canonical_record(want)))
    except StateError:
        return False
