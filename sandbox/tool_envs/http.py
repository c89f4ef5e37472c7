"""``HttpToolEnv``: the agents' ``ToolEnv`` over HTTP to a mock tool server.

The same class serves a run in process (an ``httpx.AsyncClient`` on ``httpx.ASGITransport`` to
``mock_tools.create_app``) and against a server elsewhere (``--tools-url``). Every answer, a server
error, a schema violation or an injected fault included, becomes an ``Observation``; nothing the
server does raises into the agent loop.

Scoping: each env sends ``X-Sandbox-Scenario`` (the task id: per-scenario faults, fault hash) and
``X-Sandbox-Session`` (one per episode, so identical calls count occurrences from 1 in every
episode). A run-wide fault config, when given, goes in ``X-Sandbox-Faults`` unless the task has
its own; a recordings scope, when given, in ``X-Sandbox-Recordings``.

The suite decides two things about the env (``SuiteMeta``): its dispatch rule (``dispatch``,
which the agents read to map a called name to an offered function, ``agents.toolenv.dispatch``)
and whether observations escape non-ASCII characters as ToolBench's ``json.dumps`` does
(``ascii_observations``); a run's preset may set both instead. An API whose schema is ToolBench's
(``TOOLBENCH_NAMES``, every ToolBench import) is offered as ToolBench offers it: its function
name, description and parameters, without the marker; ``name_lists="stabletoolbench"`` starts
its ``required`` and ``optional`` lists with an empty name, as StableToolBench's client does.
A preset may also set ``function_names`` (how APIs whose names collide are offered,
``tool_functions``) and the finish rule the env declares (``finish_rule``, read by the agents'
step: ``agents.toolenv.FinishRule``). An answer over ``tools.max_reply_bytes`` is not read
(``reply_cap``): the call observes ``fault:reply_too_large``; a call to a remote server is
bounded in time as a whole (``call_timeout``, the transport's ``timeout``).
May import ``agents``, ``mock_tools``, ``sandbox.errors`` and ``sandbox.tool_envs.reply_cap``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Mapping
from typing import Any, Literal, TypeVar
from urllib.parse import quote, unquote

import httpx

from agents.errors import ToolEnvError
from agents.toolenv import DispatchRule, FinishRule, Observation
from mock_tools import (
    FAULTS_HEADER,
    PROVENANCE_HEADER,
    RECORDINGS_HEADER,
    SCENARIO_HEADER,
    SESSION_HEADER,
    ApiSpec,
    FaultConfig,
    Task,
    header_value,
    standardize,
    unique_function_names,
)
from mock_tools.names import RAW_ARGUMENTS, TOOLBENCH_NAMES, function_name
from sandbox.errors import ConfigError
from sandbox.tool_envs.reply_cap import TOO_LARGE, ToolReplyTooLarge

__all__ = [
    "HttpToolEnv",
    "WorldToolEnv",
    "offered_parameters",
    "observation_text",
    "to_observation",
    "too_large_observation",
    "tool_functions",
    "toolbench_targets",
    "within_call_time",
]

T = TypeVar("T")

_FAULT_STATUS = {500: "http_500", 429: "rate_limit_429", 504: "timeout"}


def observation_text(error: str, response: Any, *, ascii_only: bool = False) -> str:
    """ToolBench's observation shape: JSON ``{"error": ..., "response": ...}`` (non-ASCII
    escaped with ``ascii_only``, as ToolBench writes it)."""
    return json.dumps({"error": error, "response": response}, ensure_ascii=ascii_only)


def tool_functions(
    task: Task,
    apis: Mapping[tuple[str, str], ApiSpec],
    *,
    name_lists: NameLists = "toolbench",
    function_names: FunctionNames = "unique",
) -> tuple[list[dict[str, Any]], dict[str, tuple[str, str]]]:
    """The task's offered APIs as OpenAI tool schemas, and function name -> ``(tool, api)``.

    Names are ``ApiSpec.function`` or ``<api>_for_<tool>``. When two APIs' names collide (after
    ToolBench's 64-character cut), ``function_names`` says what is offered: ``unique`` (the
    default) gives the later ones ``_2``, ``_3``... (``mock_tools.names.unique_function_names``),
    so each stays reachable; ``toolbench`` offers every API under its own name, the name repeated,
    as ToolBench's client does, and routes the name as its ``_step`` does (``toolbench_targets``).
    A ToolBench schema is offered as ToolBench offers it (see the module docstring).
    """
    entries = []
    for ref in task.tools:
        spec = apis.get((ref.tool, ref.api))
        if spec is None:
            raise ConfigError(
                f"task {task.id!r} offers {ref.tool}/{ref.api}, which the suite does not define"
            )
        entries.append((ref.tool, ref.api, spec.function))
    if function_names == "toolbench":
        offered = [(explicit or function_name(t, a), (t, a)) for t, a, explicit in entries]
        targets = toolbench_targets(offered, apis)
    else:
        targets = unique_function_names(entries)
        offered = list(targets.items())
    functions: list[dict[str, Any]] = []
    for name, (tool, api) in offered:
        spec = apis[(tool, api)]
        functions.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": spec.description or f"{api} of the tool {tool}",
                    "parameters": offered_parameters(spec.parameters, name_lists),
                },
            }
        )
    return functions, targets


NameLists = Literal["toolbench", "stabletoolbench"]
FunctionNames = Literal["unique", "toolbench"]


def toolbench_targets(
    offered: list[tuple[str, tuple[str, str]]], apis: Mapping[tuple[str, str], ApiSpec]
) -> dict[str, tuple[str, str]]:
    """Function name -> ``(tool, api)`` a call of that name reaches in ToolBench's client
    (``rapidapi_wrapper``): its request names the tool of the first API offered under the name
    (``_step`` sends ``tool_names[k]`` of the first function that matches) and the API last
    offered under it (``api_name_reflect``, written once per API, keeps the last). Every
    collision in StableToolBench's test set is within one tool, so the call reaches the last
    API; were the two tools different and the pair unknown, the last API is reached whole."""
    first_tool: dict[str, str] = {}
    last: dict[str, tuple[str, str]] = {}
    for name, (tool, api) in offered:
        first_tool.setdefault(name, tool)
        last[name] = (tool, api)
    targets: dict[str, tuple[str, str]] = {}
    for name, _ in offered:
        pair = (first_tool[name], last[name][1])
        targets.setdefault(name, pair if pair in apis else last[name])
    return targets


def offered_parameters(params: dict[str, Any], name_lists: NameLists) -> dict[str, Any]:
    """An API's parameters as a model is offered them: a ToolBench schema without its marker
    (its name lists led by ``""`` under ``stabletoolbench``), a schema taking raw arguments
    (BFCL's) without its marker; any other schema as it is."""
    if params.get(RAW_ARGUMENTS) is True:
        return {k: v for k, v in params.items() if k != RAW_ARGUMENTS}
    if params.get(TOOLBENCH_NAMES) is not True:
        return params
    out = {k: v for k, v in params.items() if k != TOOLBENCH_NAMES}
    if name_lists == "stabletoolbench":
        for kind in ("required", "optional"):
            if isinstance(out.get(kind), list):
                out[kind] = ["", *out[kind]]
    return out


class HttpToolEnv:
    """One episode's tool environment. ``client`` is owned by the caller (shared by episodes)."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        task: Task,
        apis: Mapping[tuple[str, str], ApiSpec],
        *,
        session: str,
        faults: FaultConfig | None = None,
        dispatch: DispatchRule = "exact",
        ascii_observations: bool = False,
        recordings: str | None = None,
        name_lists: NameLists = "toolbench",
        function_names: FunctionNames = "unique",
        finish_rule: FinishRule = "first_finish",
        call_timeout: float | None = None,
    ) -> None:
        self._client = client
        self.call_timeout = call_timeout
        """Seconds a call may take as a whole (a remote server's; None: no bound)."""
        self.task = task
        self.apis = apis
        self.dispatch: DispatchRule = dispatch
        self.finish_rule: FinishRule = finish_rule
        self.ascii_observations = ascii_observations
        self._functions, self._targets = tool_functions(
            task, apis, name_lists=name_lists, function_names=function_names
        )
        self._headers = {
            SCENARIO_HEADER: header_value(task.id),
            SESSION_HEADER: header_value(session),
        }
        config = task.faults or faults
        if config is not None:
            self._headers[FAULTS_HEADER] = config.model_dump_json()
        if recordings is not None:
            self._headers[RECORDINGS_HEADER] = header_value(recordings)

    @property
    def functions(self) -> list[dict[str, Any]]:
        return self._functions

    def target(self, name: str) -> tuple[str, str] | None:
        """The ``(tool, api)`` behind a function name, or None."""
        return self._targets.get(name)

    @property
    def targets(self) -> dict[str, tuple[str, str]]:
        """Every offered function name and its ``(tool, api)``, in the order offered."""
        return dict(self._targets)

    @property
    def client(self) -> httpx.AsyncClient:
        """The client of the tool server (shared by the run's episodes)."""
        return self._client

    @property
    def scope_headers(self) -> dict[str, str]:
        """The ``X-Sandbox-*`` headers that put a request in this episode's scope (scenario,
        session, faults, recordings): ``sandbox.tool_envs.forward`` sends a client's own
        requests with them."""
        return dict(self._headers)

    async def call(self, name: str, args: dict[str, Any]) -> Observation:
        pair = self._targets.get(name)
        if pair is None:
            known = ", ".join(self._targets) or "(none)"
            msg = f"no such function {name!r}; the functions offered are: {known}"
            return Observation(
                ok=False, content=self._text(msg, ""), provenance="unknown", error=msg
            )
        tool, api = pair
        url = f"/tools/{_segment(tool)}/{_segment(api)}"
        return await self._post(url, args, self._headers, time.perf_counter())

    async def _post(
        self, url: str, args: dict[str, Any], headers: dict[str, str] | None, started: float
    ) -> Observation:
        """One call route's answer as an observation: a transport failure (a timeout, a server
        out of reach) as an infrastructure one, an answer over the cap as ``reply_too_large``."""
        try:
            resp = await within_call_time(
                self.call_timeout, self._client.post(url, json=args, headers=headers)
            )
        except ToolReplyTooLarge as e:
            latency = (time.perf_counter() - started) * 1000
            return too_large_observation(e, latency, ascii_only=self.ascii_observations)
        except (httpx.TimeoutException, asyncio.TimeoutError) as e:
            return self._transport_error("timeout", f"the tool server timed out: {e}", started)
        except httpx.HTTPError as e:
            msg = f"cannot reach the tool server: {type(e).__name__}: {e}"
            return self._transport_error("connection", msg, started)
        latency = (time.perf_counter() - started) * 1000
        return to_observation(resp, latency, self.ascii_observations)

    def _text(self, error: str, response: Any) -> str:
        return observation_text(error, response, ascii_only=self.ascii_observations)

    async def reset(self) -> None:
        """Forget this episode's occurrence counts on the server (best effort)."""
        with contextlib.suppress(httpx.HTTPError):
            session = {SESSION_HEADER: self._headers[SESSION_HEADER]}
            await self._client.post("/reset", headers=session)

    def _transport_error(self, kind: str, msg: str, started: float) -> Observation:
        return Observation(
            ok=False,
            content=self._text(msg, ""),
            provenance=f"transport:{kind}",
            error=msg,
            infra=True,
            latency_ms=(time.perf_counter() - started) * 1000,
        )


class WorldToolEnv(HttpToolEnv):
    """An episode's tools of a suite with a world: its own session on the server, opened at the
    task's initial state with the run's seed, and ``restore_state`` to go back to any state the
    session has been in (``agents.toolenv.StatefulToolEnv``)."""

    def __init__(
        self,
        *args: Any,
        seed: int = 0,
        policy: str = "",
        user_functions: list[dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.seed = seed
        self.policy = policy
        """The world's rules for the agent (``World.policy``): the end of its system prompt."""
        self.user_functions: list[dict[str, Any]] = list(user_functions or [])
        """The user's own tools (dual control), offered to the user of a conversation, never
        to the agent; ``call_as_user`` calls them."""
        self.initial_state: str | None = None
        """The hash of the task's initial state, once the session is open."""
        self.position: str | None = None
        """The hash of the state the session is in."""

    @property
    def session(self) -> str:
        return unquote(self._headers[SESSION_HEADER])

    async def _open(self) -> None:
        body = {"session": self.session, "task": self.task.id, "seed": self.seed}
        data = await self._session_request("POST", "/sessions", body)
        self.initial_state = self.position = str(data["initial"])

    async def _session_request(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        try:
            resp = await self._client.request(method, path, json=body)
        except httpx.TimeoutException as e:
            raise ToolEnvError(f"the tool server timed out: {e}", kind="timeout") from e
        except httpx.HTTPError as e:
            raise ToolEnvError(
                f"cannot reach the tool server: {type(e).__name__}: {e}", kind="connection"
            ) from e
        try:
            data = resp.json()
        except ValueError:
            data = None
        if resp.status_code >= 400 or not isinstance(data, dict):
            detail = data.get("detail") if isinstance(data, dict) else resp.text[:200]
            raise ToolEnvError(
                f"{method} {path} answered HTTP {resp.status_code}: {detail}", kind="protocol"
            )
        return data

    async def open_session(self) -> None:
        """Open the episode's session unless it is open (``ToolEnvError`` when the server
        cannot): a client's own request (``sandbox.tool_envs.forward``) goes there first, so
        it lands in the task's initial state with the run's seed."""
        if self.position is None:
            await self._open()

    def observe(self, obs: Observation) -> None:
        """Follow a call's observation: the session is now in the state it names."""
        if obs.state is not None:
            self.position = obs.state

    async def call(self, name: str, args: dict[str, Any]) -> Observation:
        try:
            await self.open_session()
        except ToolEnvError as e:
            return self._transport_error(e.kind, str(e), time.perf_counter())
        obs = await super().call(name, args)
        self.observe(obs)
        return obs

    async def call_as_user(self, name: str, args: dict[str, Any]) -> Observation:
        """The user's call of its own tool ``name`` on this episode's session (the route
        ``POST /sessions/{session}/user/{tool}``), observed as an agent's call is."""
        started = time.perf_counter()
        try:
            await self.open_session()
        except ToolEnvError as e:
            return self._transport_error(e.kind, str(e), started)
        url = f"/sessions/{quote(self.session, safe='')}/user/{_segment(name)}"
        obs = await self._post(url, args, None, started)
        self.observe(obs)
        return obs

    async def restore_state(self, state: str | None) -> None:
        if self.position is None:
            await self._open()
        target = state if state is not None else self.initial_state
        if target is None or target == self.position:
            return
        path = f"/sessions/{quote(self.session, safe='')}/restore"
        await self._session_request("POST", path, {"state": target})
        self.position = target


def too_large_observation(
    error: ToolReplyTooLarge, latency_ms: float, *, ascii_only: bool = False
) -> Observation:
    """What the agent observes of a call whose answer was over the cap (``reply_cap``)."""
    message = str(error)
    return Observation(
        ok=False,
        content=observation_text(message, "", ascii_only=ascii_only),
        provenance=f"fault:{TOO_LARGE}",
        error=message,
        latency_ms=latency_ms,
    )


def _segment(name: str) -> str:
    # A "/" inside a name would split the route: the server also accepts the standardised form.
    return quote(standardize(name) if "/" in name else name, safe="")


async def within_call_time(seconds: float | None, request: Awaitable[T]) -> T:
    """``request`` within ``seconds`` as a whole (httpx bounds each read, so an answer of a
    remote server trickling a byte at a time would otherwise never end); ``asyncio.TimeoutError``.
    None: no bound (the in-process server, whose answers are the suite's own)."""
    if seconds is None:
        return await request
    return await asyncio.wait_for(request, seconds)


def to_observation(resp: httpx.Response, latency_ms: float, ascii_only: bool) -> Observation:
    """A native (or typed) route's answer as the observation an agent sees."""
    provenance = resp.headers.get(PROVENANCE_HEADER, "")
    status = resp.status_code
    try:
        payload = resp.json()
    except (ValueError, UnicodeDecodeError):
        payload = None
    if not isinstance(payload, dict):
        kind = "empty_body" if not resp.content.strip() else "malformed_body"
        what = "an empty body" if kind == "empty_body" else "a malformed body (not JSON)"
        msg = f"the tool answered HTTP {status} with {what}"
        return Observation(
            ok=False,
            content=observation_text(msg, resp.text[:200], ascii_only=ascii_only),
            status=status,
            provenance=provenance or f"fault:{kind}",
            error=msg,
            latency_ms=latency_ms,
        )
    if not provenance:
        provenance = str(payload.get("provenance") or _guess_provenance(status))
    ok = bool(payload.get("ok", status < 400)) and status < 400
    error = str(payload.get("error") or "")
    if not ok and not error:
        error = f"HTTP {status}"
    if status in (404, 422) or payload.get("violations") or payload.get("suggestions"):
        detail = {k: payload[k] for k in ("code", "violations", "suggestions") if k in payload}
        response: Any = detail
    else:
        response = payload.get("body", payload.get("response", ""))
        if response is None:
            response = ""
    origin = payload.get("origin")
    state = payload.get("state")
    changes = payload.get("changes")
    return Observation(
        ok=ok,
        content=observation_text("" if ok else error, response, ascii_only=ascii_only),
        status=status,
        provenance=provenance,
        error="" if ok else error,
        origin=origin if isinstance(origin, dict) else None,
        infra=payload.get("infra") is True,
        latency_ms=latency_ms,
        state=state if isinstance(state, str) else None,
        changes=changes if isinstance(state, str) and isinstance(changes, list) else None,
    )


def _guess_provenance(status: int) -> str:
    if status in _FAULT_STATUS:
        return f"fault:{_FAULT_STATUS[status]}"
    return {404: "unknown", 422: "invalid", 400: "bad_request"}.get(status, "hit")
