"""What the server does when a call has no recording: the miss policies, one class each.

Every policy answers a ``Miss`` (the call, its canonical key, the occurrence, the recordings) with
a ``MissAnswer`` or ``None`` (nothing to offer: the service answers with its deterministic
structured "no recording" error):

- ``error`` (default, ``ErrorPolicy``): nothing, always;
- ``nearest`` (``NearestPolicy``): the recording of the same API whose canonical key is most
  similar (rapidfuzz ratio, 0-100) at or above a threshold; ties go to the smallest key, so the
  choice is deterministic. The ratio is over the whole canonical JSON, whose shared punctuation and
  keys inflate it, so the default threshold is high (90: "Pariz" finds "Paris", "Rome" does not
  find "Oslo");
- ``simulate`` (``SimulatePolicy``): an injected callable ``(tool, api, args) -> Response`` (sync
  or async) writes the answer, which the service then records so the next identical call is a hit;
- ``upstream`` (``UpstreamPolicy``): forward the call to a real base URL with httpx and record the
  answer, like a cassette recorder.

Each policy declares its options as a pydantic class (``Options``: ``nearest``'s ``threshold``,
``simulate``'s ``simulator``, ``upstream``'s ``upstream_url`` and ``timeout``) and is built as
``cls(options)``; its ``records`` says whether its answers are kept (in the overlay) so the next
identical call is a hit, which is what both the server and the harness read. The names live in
``MISS_POLICIES`` (``mock_tools.plugins.PluginRegistry``: registered names, ``package.module:Name``
paths and the ``agent_sandbox.miss_policies`` entry points); ``build_miss_policy(name, options)``
makes one, or a one-line error naming the known policies or the options it takes. A new policy
is a class with ``name``, ``records``, ``Options``, ``answer`` and ``aclose`` plus one
``register_miss_policy`` call (or nothing, from a plugin). Imports nothing of the service or of
HTTP routing.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote, urlsplit

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field, field_validator
from rapidfuzz import fuzz, process

from mock_tools.canonical import dumps_canonical
from mock_tools.errors import MockToolsError
from mock_tools.headers import PROVENANCE_HEADER
from mock_tools.models import Response, Source, ToolSpec
from mock_tools.plugins import PluginRegistry, plugin_code, validate_options
from mock_tools.simulation import ToolSimulator, named_simulator, simulation_request
from mock_tools.store import RecordingStore

if TYPE_CHECKING:  # httpx is imported by the upstream policy only when it forwards a call
    import httpx

__all__ = [
    "DEFAULT_NEAREST_THRESHOLD",
    "MISS_POLICIES",
    "ErrorPolicy",
    "Miss",
    "MissAnswer",
    "MissPolicy",
    "MissPolicyKind",
    "MissPolicyOptions",
    "NearestOptions",
    "NearestPolicy",
    "SimulateOptions",
    "SimulatePolicy",
    "Simulator",
    "Upstream",
    "UpstreamAnswer",
    "UpstreamOptions",
    "UpstreamPolicy",
    "build_miss_policy",
    "miss_policy_kind",
    "miss_policy_options",
    "nearest_key",
    "policy_kind",
    "register_miss_policy",
    "run_simulator",
]

DEFAULT_NEAREST_THRESHOLD = 90.0

Simulator = Callable[[str, str, dict[str, Any]], "Response | dict[str, Any] | Awaitable[Any]"]


@dataclass(frozen=True)
class Miss:
    """A call without a recording, as a policy sees it."""

    tool: str
    api: str
    key: str
    """Canonical key of the arguments."""
    args: dict[str, Any]
    """Canonical arguments."""
    occurrence: int
    store: RecordingStore
    tool_spec: ToolSpec | None = None
    """The tool's documentation (for a simulator)."""
    scenario: str | None = None
    """The caller's scenario (task id), when it named one."""
    scope: str = ""
    """The caller's occurrence scope (an episode or session)."""
    history: str | None = None
    """The write history the call is made after, in a suite with writes (None: no write before
    it in its session, or a suite without writes; ``mock_tools.history``)."""


@dataclass(frozen=True)
class MissAnswer:
    """A policy's answer to a miss."""

    response: Response
    provenance: str
    record_as: Source | None = None
    """Record the response with this source, so that the next identical call is a hit."""
    code: str | None = None
    status: int = 200
    infra: bool = False
    """The answer is an infrastructure failure (simulator or upstream down), not the tool's."""
    model: str | None = None
    """The simulator model that wrote the response, if one did."""


class MissPolicy(Protocol):
    name: str
    records: bool
    """Its answers are kept (in the overlay) so the next identical call is served from there."""

    async def answer(self, miss: Miss) -> MissAnswer | None: ...

    async def aclose(self) -> None: ...


def nearest_key(keys: Sequence[str], key: str, threshold: float) -> tuple[str, float] | None:
    """The recorded key most similar to ``key`` with a score >= ``threshold`` (0-100), or None.

    Ties on the score go to the lexicographically smallest key.
    """
    if not keys:
        return None
    matches = process.extract(key, keys, scorer=fuzz.ratio, score_cutoff=threshold, limit=None)
    if not matches:
        return None
    best, score, _ = min(matches, key=lambda m: (-m[1], m[0]))
    return best, float(score)


async def run_simulator(
    simulator: Simulator, tool: str, api: str, args: dict[str, Any]
) -> Response:
    """Call a sync or async simulator (a sync one in a worker thread) and return a Response."""
    if inspect.iscoroutinefunction(simulator) or inspect.iscoroutinefunction(
        getattr(simulator, "__call__", None)  # noqa: B004 - callable objects with async __call__
    ):
        result: Any = await simulator(tool, api, dict(args))  # type: ignore[misc]
    else:
        result = await anyio.to_thread.run_sync(simulator, tool, api, dict(args))
        if inspect.isawaitable(result):
            result = await result
    return result if isinstance(result, Response) else Response.model_validate(result)


class UpstreamAnswer:
    """An upstream response and whether it is worth recording (not a transport failure/5xx)."""

    __slots__ = ("recordable", "response")

    def __init__(self, response: Response, recordable: bool) -> None:
        self.response = response
        self.recordable = recordable


class Upstream:
    """Forwards calls to a real API.

    ``base_url`` may hold ``{tool}`` and ``{api}`` placeholders; otherwise ``/{tool}/{api}`` is
    appended. The arguments are POSTed as a JSON object. A 2xx JSON answer becomes the body; an
    answer of another mock_tools server (it carries ``X-Sandbox-Provenance``) is unwrapped.
    """

    def __init__(
        self, base_url: str, *, client: httpx.AsyncClient | None = None, timeout: float = 30.0
    ) -> None:
        self.base_url = base_url
        self._client = client
        self._own_client = client is None
        self._timeout = timeout

    def url(self, tool: str, api: str) -> str:
        t, a = quote(tool, safe=""), quote(api, safe="")
        if "{tool}" in self.base_url or "{api}" in self.base_url:
            return self.base_url.replace("{tool}", t).replace("{api}", a)
        return f"{self.base_url.rstrip('/')}/{t}/{a}"

    async def fetch(self, tool: str, api: str, args: dict[str, Any]) -> UpstreamAnswer:
        import httpx

        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self._timeout)
        started = time.perf_counter()
        try:
            r = await self._client.post(
                self.url(tool, api),
                content=dumps_canonical(args).encode("utf-8"),
                headers={"Content-Type": "application/json"},
            )
        except httpx.HTTPError as e:
            msg = f"upstream unreachable: {type(e).__name__}: {e}"
            return UpstreamAnswer(Response(ok=False, error=msg), recordable=False)
        latency = int((time.perf_counter() - started) * 1000)
        try:
            body: Any = r.json()
        except ValueError:
            body = r.text
        if PROVENANCE_HEADER in r.headers and isinstance(body, dict) and "ok" in body:
            resp = Response(
                ok=bool(body.get("ok")),
                body=body.get("body"),
                error=str(body.get("error") or ""),
                latency_ms=latency,
            )
            return UpstreamAnswer(resp, recordable=r.status_code < 500)
        if r.is_success:
            return UpstreamAnswer(Response(ok=True, body=body, latency_ms=latency), True)
        error = f"upstream HTTP {r.status_code}"
        resp = Response(ok=False, body=body, error=error, latency_ms=latency)
        return UpstreamAnswer(resp, recordable=r.status_code < 500)

    async def aclose(self) -> None:
        if self._client is not None and self._own_client:
            await self._client.aclose()
            self._client = None


# -- the policies ---------------------------------------------------------------------------------


class MissPolicyOptions(BaseModel):
    """The options of a policy that takes none; a policy's ``Options`` subclasses it."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ErrorPolicy:
    """Nothing is offered: every miss gets the structured "no recording" error."""

    summary = "every miss gets the structured no-recording error"
    name = "error"
    records = False
    Options = MissPolicyOptions

    def __init__(self, options: MissPolicyOptions | None = None) -> None:
        self.options = options or MissPolicyOptions()

    async def answer(self, miss: Miss) -> MissAnswer | None:
        return None

    async def aclose(self) -> None:
        return None


class NearestOptions(MissPolicyOptions):
    threshold: float = Field(
        default=DEFAULT_NEAREST_THRESHOLD,
        ge=0,
        le=100,
        description="Least similarity (0-100) of the recorded arguments to the call's "
        "(--nearest-threshold on serve)",
    )


class NearestPolicy:
    """The closest recorded arguments of the same API, at or above ``threshold`` (0-100)."""

    summary = "the closest recorded arguments, at or above threshold"
    name = "nearest"
    records = False
    Options = NearestOptions

    def __init__(self, options: NearestOptions | None = None) -> None:
        self.options = options or NearestOptions()
        self.threshold = self.options.threshold

    async def answer(self, miss: Miss) -> MissAnswer | None:
        found = nearest_key(miss.store.keys(miss.tool, miss.api), miss.key, self.threshold)
        if found is None:
            return None
        response = miss.store.get(miss.tool, miss.api, found[0], miss.occurrence)
        assert response is not None  # a recorded key always has a response
        return MissAnswer(response, "nearest")

    async def aclose(self) -> None:
        return None


class SimulateOptions(MissPolicyOptions):
    simulator: Any = Field(
        default=None,
        description="The simulator (--simulator): schema-sim offline, or a model name; from "
        "code, a ToolSimulator or a (tool, api, args) callable",
    )


class SimulatePolicy:
    """A simulator writes the answer; the service records it.

    The ``simulator`` option is a ``ToolSimulator`` (``simulate(SimulationRequest)``: the
    documentation, examples and arguments), a plain ``(tool, api, args)`` callable, sync or
    async, or a name (``schema-sim``, or one an installed ``mock_tools.simulators`` entry point
    resolves).
    """

    summary = "a simulator writes the answer, kept in the overlay"
    name = "simulate"
    records = True
    Options = SimulateOptions

    def __init__(self, options: SimulateOptions) -> None:
        simulator = options.simulator
        if simulator is None:
            raise MockToolsError(
                "--miss-policy simulate needs --simulator (schema-sim offline, or a model name)"
            )
        self.options = options
        self.simulator: ToolSimulator | Simulator = (
            named_simulator(simulator) if isinstance(simulator, str) else simulator
        )

    async def answer(self, miss: Miss) -> MissAnswer | None:
        model = getattr(self.simulator, "name", None)
        simulate = getattr(self.simulator, "simulate", None)
        try:
            if simulate is not None:
                request = simulation_request(miss.tool_spec, miss.api, miss.args, miss.store)
                response = await simulate(request)
            else:
                simulator: Any = self.simulator
                response = await run_simulator(simulator, miss.tool, miss.api, miss.args)
        except Exception as e:  # the simulator is user code or an endpoint: report, never crash
            msg = f"simulator failed: {type(e).__name__}: {e}"
            return MissAnswer(
                Response(ok=False, error=msg), "miss", code="sim_failed", status=502, infra=True
            )
        name = model if isinstance(model, str) and model else None
        return MissAnswer(response, "simulated", record_as="simulated", model=name)

    async def aclose(self) -> None:
        close = getattr(self.simulator, "aclose", None)
        if close is not None:
            await close()


class UpstreamOptions(MissPolicyOptions):
    upstream_url: str | None = Field(
        default=None,
        description="Base URL of the real API (--upstream-url); may hold {tool} and {api}",
    )
    timeout: float = Field(default=30.0, gt=0, description="Seconds a forwarded call may take")
    upstream: Any = Field(
        default=None, description="From code: an Upstream (with its own client) instead of a URL"
    )

    @field_validator("upstream_url")
    @classmethod
    def _an_http_url(cls, value: str | None) -> str | None:
        if value is None:
            return value
        parts = urlsplit(value.replace("{tool}", "t").replace("{api}", "a"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{value!r} is not an http(s) URL (e.g. https://api.example.com/v1)")
        return value


class UpstreamPolicy:
    """Forward the call to a real API and record what it answered."""

    summary = "the real API answers, kept in the overlay"
    name = "upstream"
    records = True
    Options = UpstreamOptions

    def __init__(self, options: UpstreamOptions) -> None:
        upstream = options.upstream
        if upstream is None and options.upstream_url:
            upstream = Upstream(options.upstream_url, timeout=options.timeout)
        if not isinstance(upstream, Upstream):
            raise MockToolsError(
                "--miss-policy upstream needs --upstream-url (the option upstream_url)"
            )
        self.options = options
        self.upstream = upstream

    async def answer(self, miss: Miss) -> MissAnswer | None:
        fetched = await self.upstream.fetch(miss.tool, miss.api, miss.args)
        if not fetched.recordable:
            return MissAnswer(
                fetched.response, "miss", code="upstream_failed", status=502, infra=True
            )
        return MissAnswer(fetched.response, "upstream", record_as="upstream")

    async def aclose(self) -> None:
        await self.upstream.aclose()


# -- names ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MissPolicyKind:
    """A registered policy: its name, what builds it from its validated options, the options."""

    name: str
    build: Callable[[Any], MissPolicy]
    options: type[BaseModel]
    summary: str = ""
    """What it does, in a line: the class's ``summary``, else its docstring's first paragraph."""


def policy_kind(
    cls: Any, *, name: str | None = None, options: type[BaseModel] | None = None
) -> MissPolicyKind:
    """The registry entry of a policy class: ``name`` defaults to ``cls.name``, the options class
    to ``cls.Options``; the class is built as ``cls(options)``."""
    kind_name = (name or cls.name).strip().lower()
    opts = options or getattr(cls, "Options", None)
    if not (isinstance(opts, type) and issubclass(opts, BaseModel)):
        raise TypeError(f"the Options of miss policy {kind_name!r} must be a pydantic model")
    for method in ("answer", "aclose"):
        if not callable(getattr(cls, method, None)):
            raise TypeError(f"miss policy {kind_name!r} has no {method}()")
    doc = " ".join((inspect.getdoc(cls) or "").split("\n\n")[0].split())
    summary = getattr(cls, "summary", None) or doc
    return MissPolicyKind(kind_name, cls, opts, summary)


def _adapt(obj: Any, name: str | None) -> MissPolicyKind:
    if isinstance(obj, MissPolicyKind):
        return obj
    if not isinstance(obj, type):
        raise TypeError(f"got {type(obj).__name__}, not a class")
    return policy_kind(obj, name=name)


MISS_POLICIES: PluginRegistry[MissPolicyKind] = PluginRegistry(
    "miss policy",
    group="agent_sandbox.miss_policies",
    adapt=_adapt,
    expected="a miss policy class (with name, records, Options, answer and aclose)",
)
"""Miss policy name -> ``MissPolicyKind`` (the only list of the names; plugins resolve here)."""


def register_miss_policy(
    cls: Any,
    *,
    name: str | None = None,
    options: type[BaseModel] | None = None,
    replace: bool = False,
) -> MissPolicyKind:
    """Make the policy class ``cls`` nameable (see ``policy_kind``)."""
    kind = policy_kind(cls, name=name, options=options)
    return MISS_POLICIES.register(kind.name, kind, replace=replace)


def miss_policy_kind(name: str) -> MissPolicyKind:
    """The policy ``name`` resolves to; ``MockToolsError`` naming the known ones."""
    return MISS_POLICIES.get(name)


def miss_policy_options(name: str, options: Mapping[str, Any] | None = None) -> BaseModel:
    """``options`` validated by policy ``name``'s options class; ``MockToolsError`` naming the
    options it takes."""
    kind = miss_policy_kind(name)
    return validate_options(f"miss policy {kind.name!r}", kind.options, options)


def build_miss_policy(
    name: str, options: Mapping[str, Any] | None = None, /, **values: Any
) -> MissPolicy:
    """The policy ``name`` built with its options (``options`` and ``values``, validated by its
    ``Options``); ``MockToolsError`` for an unknown name, an option it does not take or a
    missing one."""
    kind = miss_policy_kind(name)
    given = miss_policy_options(name, {**(options or {}), **values})
    with plugin_code(f"miss policy {kind.name!r}"):  # a policy of the user's own may raise
        policy = kind.build(given)
    if not isinstance(getattr(policy, "records", None), bool):
        raise MockToolsError(f"miss policy {kind.name!r} has no records attribute (True/False)")
    return policy


register_miss_policy(ErrorPolicy)
register_miss_policy(NearestPolicy)
register_miss_policy(SimulatePolicy)
register_miss_policy(UpstreamPolicy)
