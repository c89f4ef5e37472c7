"""The mock tool service: lookup, occurrences, faults, miss policy and provenance; no protocol.

``MockToolService.handle(tool, api, args, ctx)`` is the whole call path every transport shares
(the HTTP routes of ``mock_tools.http_app``, the MCP tools of ``mock_tools.mcp_server``): resolve
the names, canonicalise and validate the arguments, decide an injected fault, count the occurrence,
look the call up (in the caller's recordings scope first, then in the overlay of answers made at run
time), and on a miss ask the miss policy (``mock_tools.miss``), keeping what it produced when it
says so. A recorded call is served as recorded even when its arguments fail the schema (ToolBench
sent them to the API as they were): schema violations reject new calls only, and in a suite of
ToolBench origin only on strict routes (the typed ones): StableToolBench's server validates
nothing, so ``/virtual`` and the native route answer such a call as an unrecorded one.
Bad input is a ``Rejected`` error carrying the status, code and message a transport answers with.
Every outcome is counted in ``stats``. ``create_service(suite, ...)`` builds one from settings
(the miss policy by name, faults, a recording file). Identical misses in flight make one call
of the miss policy, a failed one answering identical calls for ``failure_hold`` seconds more
(``mock_tools.single_flight``; across the processes sharing an overlay, the overlay's claims);
what a miss policy answers is kept and served with numbers JSON cannot hold in one canonical
form (``mock_tools.json_numbers``). In a suite with writes (``SuiteMeta.writes``/``reads``, an
API's ``read_only``) each session's write history is kept (``mock_tools.history``): a call is
looked up, counted, asked of the miss policy and kept under the history its session had made
before it, and a write call moves that history on. May import the suite, store, canonical,
faults, history, names, miss, json_numbers and single_flight modules; never FastAPI or a
transport.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, get_args

import anyio.to_thread
from jsonschema import SchemaError
from jsonschema.validators import validator_for

from mock_tools.canonical import canonical_args, dumps_canonical
from mock_tools.errors import MockToolsError, SuiteError
from mock_tools.faults import FaultPlan, decide_fault, fault_reply, parse_fault_header
from mock_tools.history import WriteHistories, write_apis
from mock_tools.json_numbers import finite_json
from mock_tools.miss import ErrorPolicy, Miss, MissAnswer, MissPolicy, build_miss_policy
from mock_tools.models import FaultConfig, Provenance, Recording, Response, Source
from mock_tools.names import NAME_MAX, RAW_ARGUMENTS, NameResolver
from mock_tools.overlay import OverlayStore
from mock_tools.plugins import PluginFailed, plugin_code
from mock_tools.single_flight import DEFAULT_FAILURE_HOLD, SingleFlight
from mock_tools.store import (
    MAX_COUNTED_CALLS,
    OccurrenceCounter,
    Place,
    RecordingStore,
    RecordingWriter,
)
from mock_tools.suite import Suite

if TYPE_CHECKING:
    from mock_tools.worlds.sessions import WorldSessions

__all__ = [
    "Call",
    "CallContext",
    "MockToolService",
    "Outcome",
    "Rejected",
    "Stats",
    "create_service",
    "remember",
]

_MAX_VIOLATIONS = 50
_AFTER = "\x1e"  # between a canonical key and the history it is counted after
log = logging.getLogger(__name__)
_VALID_MEMO_SIZE = 100_000

K = TypeVar("K")
V = TypeVar("V")


def remember(memo: dict[K, V], key: K, value: V, limit: int) -> V:
    """Keep ``value`` under ``key`` in a memo of at most ``limit`` entries (emptied when full:
    what a memo holds can always be made again) and return it."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value
    return value


class Rejected(MockToolsError):
    """Bad input: a transport answers it with ``status`` and a structured body."""

    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.extra = status, code, message, extra

    @property
    def provenance(self) -> str:
        return {404: "unknown", 422: "invalid"}.get(self.status, "bad_request")


@dataclass(frozen=True)
class CallContext:
    """Who calls: the scenario (per-scenario faults, fault hash), the occurrence scope (one per
    episode or session), a fault config sent with the call, if any, and the recordings scope
    whose scoped recordings answer first (``Recording.scope``)."""

    scenario: str | None = None
    scope: str = ""
    faults: FaultConfig | None = None
    recordings: str | None = None

    @classmethod
    def parse(
        cls,
        scenario: str | None,
        scope: str,
        faults: str | Mapping[str, Any] | None,
        recordings: str | None = None,
    ) -> CallContext:
        """A context from what a transport received; ``faults`` is a ``FaultConfig`` as JSON
        text or an object. A bad fault config is ``Rejected`` (400, ``bad_fault_header``)."""
        config = None
        if faults is not None:
            try:
                text = faults if isinstance(faults, str) else _json_text(faults)
                config = parse_fault_header(text)
            except MockToolsError as e:
                raise Rejected(400, "bad_fault_header", str(e)) from None
        return cls(scenario, scope, config, recordings)


@dataclass
class Outcome:
    """How a call was answered."""

    provenance: str
    response: Response
    occurrence: int
    code: str | None = None
    status: int = 200
    headers: Mapping[str, str] | None = None
    raw: bytes | None = None
    """Bytes to send as they are (an injected malformed or empty body)."""
    origin: dict[str, Any] | None = None
    """Where a response made at run time came from: source, simulator model, time."""
    infra: bool = False
    """An infrastructure failure (simulator or upstream down): not the tool's behaviour."""
    slot: Place | None = None
    """For a recorded hit, where it is recorded (``RecordingStore.locate``): that place always
    holds the same response, so a transport may keep the answer it encoded under it."""
    state: str | None = None
    """A world's call: the hash of the session's state after it."""
    changes: list[dict[str, Any]] | None = None
    """A world's call: the records it changed (collection, id, before, after)."""


@dataclass(frozen=True)
class Call:
    """A call ready to answer: the suite's names and the canonical arguments with their key."""

    tool: str
    api: str
    canon: dict[str, Any]
    key: str


class Stats:
    """Answers counted by provenance, overall and per API."""

    def __init__(self) -> None:
        self.totals: Counter[str] = Counter()
        self._apis: dict[tuple[str, str], Counter[str]] = {}

    def count(self, provenance: str, tool: str | None = None, api: str | None = None) -> None:
        self.totals[provenance] += 1
        if tool is not None and api is not None:
            per_api = self._apis.get((tool, api))
            if per_api is None:
                per_api = self._apis[tool, api] = Counter()
            per_api[provenance] += 1

    @property
    def apis(self) -> dict[str, Counter[str]]:
        """The counts per API, by ``tool/api``."""
        return {f"{tool}/{api}": counts for (tool, api), counts in self._apis.items()}

    def to_json(self) -> dict[str, Any]:
        return {
            "totals": dict(sorted(self.totals.items())),
            "apis": {k: dict(sorted(v.items())) for k, v in sorted(self.apis.items())},
        }


class MockToolService:
    """One suite's deterministic tools; one instance per server."""

    def __init__(
        self,
        suite: Suite,
        *,
        miss_policy: MissPolicy | None = None,
        faults: FaultPlan | None = None,
        writer: RecordingWriter | None = None,
        overlay: OverlayStore | None = None,
        occurrence_limit: int = MAX_COUNTED_CALLS,
        failure_hold: float = DEFAULT_FAILURE_HOLD,
    ) -> None:
        self.suite = suite
        self.store = RecordingStore.from_suite(suite)
        categories = {t.name: t.category for t in suite.tools.values()}
        self.resolver = NameResolver.for_apis(suite.apis, categories)
        self.toolbench = suite.meta.origin == "toolbench"
        """Of ToolBench origin: only strict routes reject arguments that fail the schema."""
        self.miss_policy: MissPolicy = miss_policy or ErrorPolicy()
        self.faults = faults or FaultPlan()
        self.writer = writer
        self.overlay = overlay
        self.misses: SingleFlight[Outcome] = SingleFlight(failure_hold)
        self._records = bool(getattr(self.miss_policy, "records", False))
        self.attempts = OccurrenceCounter(occurrence_limit)  # both capped: misses are endless
        self.deliveries = OccurrenceCounter(occurrence_limit)
        self.stats = Stats()
        self._validators: dict[tuple[str, str], Any] = {}
        self._valid: dict[tuple[str, str, str], None] = {}  # canonical calls known valid
        # calls known admissible in a recordings scope: recorded there, or valid (both for good)
        self._admitted: dict[tuple[str | None, str, str, str, str | None], None] = {}
        try:
            writes = write_apis(suite.meta, suite.apis)
        except ValueError as e:
            raise SuiteError(str(e)) from None
        world = suite.world.name if suite.world is not None else None
        self.writes = frozenset(pair for pair in writes if pair[0] != world)
        """The APIs whose calls move their session's write history (a world's own tools keep
        their state themselves)."""
        self.histories = WriteHistories() if self.writes else None
        """Each session's write history, in a suite with writes."""
        self.worlds: WorldSessions | None = None
        """Per-session state of the suite's world, when it has one."""
        if suite.world is not None:
            from mock_tools.worlds.sessions import WorldSessions

            self.worlds = WorldSessions(
                suite.world,
                {t.id: t.world for t in suite.tasks},
                call_seconds=suite.meta.world_call_seconds,
            )

    # -- the call path ----------------------------------------------------------------------------

    async def handle(
        self, tool: str, api: str, args: Any, ctx: CallContext
    ) -> tuple[str, str, Outcome]:
        """Resolve, validate and answer one call; returns the suite's ``(tool, api)`` and the
        outcome. ``Rejected`` for bad input (counted in ``stats`` like every outcome).

        The same three steps a transport may take one by one: ``prepare`` (pure, so its result
        may be kept for identical requests), ``admit`` and ``answer``."""
        call = self.prepare(tool, api, args)
        self.admit(call, ctx)
        return call.tool, call.api, await self.answer(call, ctx)

    def prepare(self, tool: str, api: str, args: Any) -> Call:
        """The resolved names and canonical arguments of a call; ``Rejected`` (counted) for an
        unknown API or arguments that are not an object. Depends on the suite only."""
        try:
            tool, api = self.resolve(tool, api)
        except Rejected as e:
            self.stats.count(e.provenance)
            raise
        if not isinstance(args, dict):
            self.stats.count("invalid", tool, api)
            raise Rejected(422, "not_an_object", "arguments must be a JSON object")
        canon, key = self.canonical(tool, api, args)
        return Call(tool, api, canon, key)

    def admit(self, call: Call, ctx: CallContext, *, strict: bool = True) -> None:
        """Check a call that has no recording against its API's schema (a recorded call is
        served as recorded); ``Rejected`` (counted) listing the violations. A call once admitted
        in a recordings scope is admitted again without a second look (recordings are only ever
        added), so a repeated hit probes the store once, when it is answered. ``strict=False``
        (``/virtual``, the native route): in a suite of ToolBench origin a call that fails the
        schema is admitted too, and the miss policy answers it."""
        history = self.history(ctx.scope)
        memo = (ctx.recordings, call.tool, call.api, call.key, history)
        if memo in self._admitted:
            return
        if not self.store.has(call.tool, call.api, call.key, scope=ctx.recordings, history=history):
            if self.toolbench and not strict:
                return  # not kept: a strict route must still check the same call
            try:
                self.validate(call.tool, call.api, call.canon, call.key)
            except Rejected as e:
                self.stats.count(e.provenance, call.tool, call.api)
                raise
        remember(self._admitted, memo, None, _VALID_MEMO_SIZE)

    async def answer(self, call: Call, ctx: CallContext) -> Outcome:
        """Answer an admitted call (``call``) and count the outcome."""
        outcome = await self.call(call.tool, call.api, call.canon, call.key, ctx)
        self.stats.count(outcome.provenance, call.tool, call.api)
        return outcome

    def history(self, scope: str) -> str | None:
        """The write history a call of the session ``scope`` is made after (None: the empty
        one, and always in a suite without writes)."""
        return None if self.histories is None else self.histories.current(scope)

    def resolve(self, tool: str, api: str, category: str | None = None) -> tuple[str, str]:
        """The suite's ``(tool, api)`` for names in any spelling; with ``category`` (a
        StableToolBench ``/virtual`` call), also ``<tool>_for_<category>`` and the tool of that
        category among tools that share their ToolBench names. ``Rejected`` (404) otherwise."""
        if len(tool) > NAME_MAX or len(api) > NAME_MAX:
            raise Rejected(
                422, "name_too_long", f"tool and API names are at most {NAME_MAX} characters"
            )
        if category is None:
            pair = self.resolver.resolve(tool, api)
        else:
            pair = self.resolver.resolve_call(tool, api, category[:NAME_MAX])
        if pair is None:
            known_tool = self.resolver.tool(tool) is not None
            what = f"API {api!r} of tool {tool!r}" if known_tool else f"tool {tool!r}"
            raise Rejected(
                404,
                "unknown_api",
                f"unknown {what}",
                suggestions=self.resolver.suggest(tool, api),
            )
        return pair

    def _validator(self, tool: str, api: str) -> Any:
        if (tool, api) not in self._validators:
            schema = self.suite.apis[(tool, api)].parameters
            if schema.get(RAW_ARGUMENTS) is True:  # the tool takes its arguments as given
                self._validators[(tool, api)] = None
                return None
            cls = validator_for(schema)
            try:
                cls.check_schema(schema)
                self._validators[(tool, api)] = cls(schema)
            except SchemaError:
                self._validators[(tool, api)] = None  # `validate` reports it; serve unchecked
        return self._validators[(tool, api)]

    def canonical(self, tool: str, api: str, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """Canonical arguments and their key."""
        canon = canonical_args(args, self.suite.apis[(tool, api)].parameters)
        return canon, dumps_canonical(canon)

    def canonicalise(self, tool: str, api: str, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """Canonical arguments and their key, or a 422 listing every schema violation."""
        canon, key = self.canonical(tool, api, args)
        self.validate(tool, api, canon, key)
        return canon, key

    def validate(self, tool: str, api: str, canon: dict[str, Any], key: str) -> None:
        """A 422 listing every schema violation of canonical arguments, if any."""
        memo = (tool, api, key)
        if memo in self._valid:
            return
        validator = self._validator(tool, api)
        if validator is not None:
            _refuse_violations(validator, canon, f"arguments of {tool}/{api}")
        remember(self._valid, memo, None, _VALID_MEMO_SIZE)

    async def call(
        self, tool: str, api: str, canon: dict[str, Any], key: str, ctx: CallContext
    ) -> Outcome:
        """Answer a resolved, canonical call: fault, recording, or the miss policy."""
        attempt = self.attempts.next(ctx.scope, tool, api, key)
        config = self.faults.config_for(ctx.scenario, ctx.faults)
        kind = decide_fault(config, ctx.scenario, tool, api, key, attempt)
        if kind is not None:
            reply = fault_reply(kind)
            resp = Response(ok=False, error=reply.message)
            return Outcome(
                f"fault:{kind}", resp, attempt, "fault", reply.status, reply.headers, reply.body
            )
        history = self.history(ctx.scope)
        if self.histories is not None and (tool, api) in self.writes:
            self.histories.advance(ctx.scope, tool, api, key)
        # the nth identical call after the same writes (a write never repeats a history)
        counted = key if history is None else f"{key}{_AFTER}{history}"
        occurrence = self.deliveries.next(ctx.scope, tool, api, counted)
        if self.worlds is not None and tool == self.worlds.name:
            return await self._world_call(api, canon, key, occurrence, ctx)
        try:
            return await self._deliver(tool, api, canon, key, occurrence, ctx, history)
        except SuiteError as e:
            # A recording is decoded when served: one broken (or changed on disk since the
            # suite was loaded) is the suite's defect, reported as such and never as the tool's
            # answer; a run counts it as an infrastructure error, not the agent's.
            log.error("cannot serve %s/%s: %s", tool, api, e)
            msg = f"a recording of this suite cannot be served: {e}"
            return Outcome(
                "miss", Response(ok=False, error=msg), occurrence, "bad_recording", 500, infra=True
            )

    async def user_call(self, session: str, api: str, args: dict[str, Any]) -> Outcome:
        """A call of one of the world's user tools (dual control) in ``session``, which must
        be open: an unknown tool is a 404, arguments its schema refuses a 422 (``Rejected``);
        otherwise answered as an agent's world call is. The agent's routes never reach these
        tools: they are not in the catalog."""
        if self.worlds is None:
            raise Rejected(404, "unknown_api", "this suite has no world, so no user tools")
        tool = self.worlds.engine.user_tools.get(api)  # a function name: no "/" (tools.py)
        if tool is None:
            known = ", ".join(self.worlds.engine.user_tools) or "none"
            raise Rejected(
                404, "unknown_api", f"the user has no tool {api!r}; the user's tools: {known}"
            )
        found = self.worlds.get(session)
        if found is None:
            raise Rejected(404, "unknown_session", f"no session {session!r}")
        canon = canonical_args(args, tool.parameters)
        validator = validator_for(tool.parameters)(tool.parameters)
        _refuse_violations(validator, canon, f"arguments of the user's tool {tool.name}")
        ctx = CallContext(scenario=found.task, scope=session)
        return await self._world_call(
            tool.name, canon, dumps_canonical(canon), found.calls + 1, ctx
        )

    async def _world_call(
        self, api: str, canon: dict[str, Any], key: str, occurrence: int, ctx: CallContext
    ) -> Outcome:
        """A call of the world's tool in the caller's session: its answer and the state after
        it; past the call limit, an infrastructure failure (the state stays as it was)."""
        from mock_tools.worlds.limits import CallLimitExceeded

        assert self.worlds is not None
        try:
            session, answer = await self.worlds.call(
                ctx.scope, ctx.scenario, api, copy.deepcopy(canon), key
            )
        except CallLimitExceeded as e:
            msg = f"{e}: the world's tool {api!r} did not answer in time"
            return Outcome(
                "world_timeout",
                Response(ok=False, error=msg),
                occurrence,
                "call_timeout",
                500,
                infra=True,
            )
        response = Response(ok=answer.ok, body=answer.body, error=answer.error)
        return Outcome(
            "world",
            response,
            occurrence,
            code=None if answer.ok else "tool_error",
            state=session.state.hash,
            changes=[c.to_json() for c in answer.changes],
        )

    async def _deliver(
        self,
        tool: str,
        api: str,
        canon: dict[str, Any],
        key: str,
        occurrence: int,
        ctx: CallContext,
        history: str | None = None,
    ) -> Outcome:
        """The recorded answer of the ``occurrence``-th identical call after ``history``, or
        the miss policy's."""
        found = self.store.locate(tool, api, key, occurrence, scope=ctx.recordings, history=history)
        if found is not None:
            return Outcome("hit", found[0], occurrence, slot=found[1])
        if self.overlay is not None:
            made = self.overlay.get(tool, api, key, history=history)
            if made is not None:
                return _made(made[0], made[1], occurrence)
        # Identical misses in flight share one answer: one simulator (or upstream) call, whether
        # it succeeds or fails; a failure also answers them for ``failure_hold`` seconds after.
        # A policy whose answers are recorded answers every occurrence alike, so its misses are
        # shared across occurrences too. In a suite with writes a miss is its session's own: a
        # live system keeps state per session, and one session's write is not another's.
        alone = ctx.scope if self.histories is not None else None
        flight = (tool, api, key, history, alone, None if self._records else occurrence)
        outcome = await self.misses.run(
            flight, lambda: self._miss(tool, api, key, canon, occurrence, ctx, history), _failed
        )
        if outcome.occurrence != occurrence:
            outcome = dataclasses.replace(outcome, occurrence=occurrence)
        return outcome

    async def _miss(
        self,
        tool: str,
        api: str,
        key: str,
        canon: dict[str, Any],
        occurrence: int,
        ctx: CallContext,
        history: str | None,
    ) -> Outcome:
        """The miss policy's answer; with an overlay shared by several processes (servers on
        one overlay), only the process that claims the miss asks the policy, and the others
        serve the answer it stores."""
        if self.overlay is None or not self._records:
            return await self._ask_policy(tool, api, key, canon, occurrence, ctx, history)
        made = await self._wait_for_claim(tool, api, key, history)
        if made is not None:
            return _made(made[0], made[1], occurrence)
        try:
            return await self._ask_policy(tool, api, key, canon, occurrence, ctx, history)
        finally:
            self.overlay.release(tool, api, key, history=history)

    async def _wait_for_claim(
        self, tool: str, api: str, key: str, history: str | None
    ) -> tuple[Response, Provenance] | None:
        """Claim the miss (None), or the answer another process claimed it for and stored. A
        claim given up without an answer (its policy failed) lets the next claim through."""
        assert self.overlay is not None
        pause = 0.005
        while not self.overlay.claim(tool, api, key, history=history):
            await anyio.sleep(pause)
            pause = min(pause * 2, 0.1)
            made = self.overlay.get(tool, api, key, history=history)
            if made is not None:
                return made
        # stored just before the claim was given up
        return self.overlay.get(tool, api, key, history=history)

    async def _ask_policy(
        self,
        tool: str,
        api: str,
        key: str,
        canon: dict[str, Any],
        occurrence: int,
        ctx: CallContext,
        history: str | None,
    ) -> Outcome:
        canon = copy.deepcopy(canon)  # a policy may keep or change it; a transport may reuse it
        miss = Miss(
            tool=tool,
            api=api,
            key=key,
            args=canon,
            occurrence=occurrence,
            store=self.store,
            tool_spec=self.suite.tools.get(tool),
            scenario=ctx.scenario,
            scope=ctx.scope,
            history=history,
        )
        try:
            answer = await self._policy_answer(miss)
        except PluginFailed as e:
            # The policy's defect, never the tool's answer: an infrastructure error of the call
            # (a run leaves the episode out of its pass rate and runs it again on resume).
            log.error("%s", e)
            msg = f"the miss policy failed: {e}"
            return Outcome(
                "miss",
                Response(ok=False, error=msg),
                occurrence,
                "miss_policy_error",
                500,
                infra=True,
            )
        if answer is None:
            msg = f"no recording for {tool}/{api} with arguments {key}"
            return Outcome("miss", Response(ok=False, error=msg), occurrence, "no_recording")
        answer = _canonical_numbers(answer)
        if answer.record_as is None:
            return Outcome(
                answer.provenance,
                answer.response,
                occurrence,
                answer.code,
                answer.status,
                infra=answer.infra,
            )
        provenance = Provenance(
            source=answer.record_as, recorded_at=datetime.now(timezone.utc), model=answer.model
        )
        response, provenance = await self._record(
            tool, api, key, canon, answer.response, provenance, history
        )
        return _made(response, provenance, occurrence)

    async def _policy_answer(self, miss: Miss) -> MissAnswer | None:
        """The miss policy's answer, called as plugin code (``mock_tools.plugins.plugin_code``)
        and checked: None, or a ``MissAnswer`` whose response is a ``Response``; else
        ``PluginFailed`` naming the policy and the rule."""
        what = f"miss policy {self.miss_policy.name!r}"
        with plugin_code(what):
            answer = await self.miss_policy.answer(miss)
        if answer is None:
            return None
        if not isinstance(answer, MissAnswer):
            raise PluginFailed(f"{what} returned {type(answer).__name__}, not a MissAnswer or None")
        if not isinstance(answer.response, Response) or not isinstance(answer.provenance, str):
            raise PluginFailed(
                f"{what} returned a MissAnswer whose response is a "
                f"{type(answer.response).__name__} (a Response and a provenance text are needed)"
            )
        if answer.record_as not in (None, *get_args(Source)) or not 100 <= answer.status < 600:
            raise PluginFailed(
                f"{what} returned a MissAnswer with record_as {answer.record_as!r} and status "
                f"{answer.status!r} (a recording source or None, an HTTP status)"
            )
        return answer

    async def _record(
        self,
        tool: str,
        api: str,
        key: str,
        canon: dict[str, Any],
        resp: Response,
        provenance: Provenance,
        history: str | None = None,
    ) -> tuple[Response, Provenance]:
        """Keep a response made at run time after ``history`` (the first one stored wins): in
        the overlay when there is one, else in memory and the writer's JSONL file."""
        if self.overlay is not None:
            put = functools.partial(self.overlay.put, history=history)
            return await anyio.to_thread.run_sync(put, tool, api, key, resp, provenance)
        if self.store.add_keyed(tool, api, key, resp, history=history) and self.writer is not None:
            rec = Recording(
                tool=tool,
                api=api,
                args=canon,
                response=resp,
                provenance=provenance,
                history=history,
            )
            await anyio.to_thread.run_sync(self.writer.append, rec)
        stored = self.store.get(tool, api, key, history=history)
        return (stored if stored is not None else resp), provenance

    # -- bookkeeping ------------------------------------------------------------------------------

    def reset(self, scope: str | None) -> int:
        """Forget occurrence counts of one scope (all without one); returns scopes dropped."""
        n = self.deliveries.reset(scope)
        self.attempts.reset(scope)
        if self.histories is not None:
            n = max(n, self.histories.reset(scope))
        if self.worlds is not None:
            n = max(n, self.worlds.drop(scope))
        return n

    def health(self) -> dict[str, Any]:
        out = {
            "status": "ok",
            "suite": self.suite.name,
            "fingerprint": self.suite.fingerprint,
            "apis": len(self.suite.apis),
            "recordings": len(self.store),
            "miss_policy": self.miss_policy.name,
        }
        if self.overlay is not None:
            out["overlay"] = {"path": str(self.overlay.path), "entries": len(self.overlay)}
        return out

    async def aclose(self) -> None:
        if self.worlds is not None:
            self.worlds.close()
        try:
            with plugin_code(f"miss policy {self.miss_policy.name!r} (closing)"):
                await self.miss_policy.aclose()
        except PluginFailed as e:  # what it answered is kept; the rest closes all the same
            log.error("%s", e)
        if self.writer is not None:
            self.writer.close()
        if self.overlay is not None:
            self.overlay.close()


def create_service(
    suite: Suite,
    *,
    miss_policy: str | MissPolicy = "error",
    fault: FaultConfig | None = None,
    scenario_faults: Mapping[str, FaultConfig] | None = None,
    record_to: str | Path | None = None,
    overlay: str | Path | OverlayStore | None = None,
    **policy_settings: Any,
) -> MockToolService:
    """The service of ``suite``.

    ``miss_policy`` is a policy object or a name built with the options ``policy_settings``
    (``simulator``, ``upstream`` / ``upstream_url``, ``threshold``...; those given as None are
    not given; ``mock_tools.miss.build_miss_policy``).
    ``fault`` applies to every call; a task's own ``faults`` to calls that name the task;
    ``scenario_faults`` overrides both per scenario id. Responses made at run time (simulated,
    upstream) go to ``overlay`` (a path or an ``OverlayStore``), else to memory and the JSONL file
    ``record_to``.
    """
    if "nearest_threshold" in policy_settings:  # the keyword create_app has always taken
        policy_settings["threshold"] = policy_settings.pop("nearest_threshold")
    given = {k: v for k, v in policy_settings.items() if v is not None}
    policy = build_miss_policy(miss_policy, given) if isinstance(miss_policy, str) else miss_policy
    per_scenario = {t.id: t.faults for t in suite.tasks if t.faults is not None}
    per_scenario.update(scenario_faults or {})
    return MockToolService(
        suite,
        miss_policy=policy,
        faults=FaultPlan(fault, per_scenario),
        writer=RecordingWriter(record_to) if record_to is not None else None,
        overlay=OverlayStore(overlay) if isinstance(overlay, (str, Path)) else overlay,
    )


def _canonical_numbers(answer: MissAnswer) -> MissAnswer:
    """The answer with numbers JSON cannot hold (a simulator's or an upstream API's ``NaN``)
    in their one canonical form, the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``, so what
    is served now and what is recorded and served later are the same (``json_numbers``)."""
    body = finite_json(answer.response.body)
    if body is answer.response.body:
        return answer
    return dataclasses.replace(answer, response=answer.response.model_copy(update={"body": body}))


def _failed(outcome: Outcome) -> bool:
    """An answer the miss policy could not give (simulator or upstream down): held a moment."""
    return outcome.infra


def _made(response: Response, provenance: Provenance, occurrence: int) -> Outcome:
    """The outcome of a response made at run time: provenance ``simulated`` or ``upstream``."""
    origin = provenance.model_dump(mode="json", exclude_defaults=True)
    name = "upstream" if provenance.source == "upstream" else "simulated"
    return Outcome(name, response, occurrence, origin=origin)


def _json_text(value: Mapping[str, Any]) -> str:
    return json.dumps(dict(value))


def _refuse_violations(validator: Any, canon: dict[str, Any], what: str) -> None:
    """A 422 (``invalid_arguments``) listing the first violations of ``canon`` (sorted by
    path), if it has any."""
    errors = sorted(validator.iter_errors(canon), key=lambda e: list(map(str, e.path)))
    if errors:
        violations = [
            {"path": "/".join(map(str, e.path)) or "(root)", "message": e.message}
            for e in errors[:_MAX_VIOLATIONS]
        ]
        raise Rejected(
            422, "invalid_arguments", f"{what} do not match its schema", violations=violations
        )
