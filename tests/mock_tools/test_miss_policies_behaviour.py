"""Miss policies as a user meets them: what each answers, with which provenance and status, what
it forwards, and how a policy of one's own is named and described.

Expected answers are written from the module's documentation (``mock_tools/miss.py``) and the
HTTP semantics they rest on, not read back from the implementation.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest
import respx
from pydantic import BaseModel

import mock_tools.miss as miss_module
from mock_tools import PROVENANCE_HEADER, Response, create_app, in_process_client
from mock_tools.errors import MockToolsError
from mock_tools.miss import (
    MISS_POLICIES,
    Miss,
    MissAnswer,
    MissPolicyOptions,
    SimulatePolicy,
    Upstream,
    build_miss_policy,
    miss_policy_kind,
    nearest_key,
    policy_kind,
    register_miss_policy,
    run_simulator,
)
from mock_tools.store import RecordingStore


def _miss(tool: str = "t", api: str = "a", args: dict[str, Any] | None = None) -> Miss:
    return Miss(tool, api, "{}", args or {}, 1, RecordingStore())


# -- nearest --------------------------------------------------------------------------------------


def test_nearest_scores_with_the_plain_ratio_of_the_whole_key() -> None:
    """The score is rapidfuzz's ``ratio`` (an Indel similarity of the whole text): ``abc`` against
    ``xxabcxx`` shares 3 of 10 characters each side, 2*3/10 = 60, not a partial-match score."""
    assert nearest_key(["xxabcxx"], "abc", 0) == ("xxabcxx", 60.0)
    assert nearest_key(["abce"], "abcd", 0) == ("abce", 75.0)  # 1 - 2/8


def test_nearest_prefers_the_higher_score_then_the_smaller_key() -> None:
    """A better-scoring key wins even when it sorts last; among equal scores, the smallest key,
    however many recordings tie."""
    found = nearest_key(['{"c":"aaaa"}', '{"c":"zzzz"}'], '{"c":"zzzy"}', 0)
    assert found is not None and found[0] == '{"c":"zzzz"}'
    # one substitution: 2 edits over 12 + 12 characters
    assert found[1] == pytest.approx(100 * (1 - 2 / 24))
    ties = ["g1", "f1", "e1", "d1", "c1", "b1", "a1"]  # each shares "1" with "x1": 50
    assert nearest_key(ties, "x1", 0) == ("a1", 50.0)


async def test_nearest_serves_the_nth_recording_to_the_nth_similar_call(suite: Any) -> None:
    """A recording with several occurrences answers a near call in order, as it would answer the
    exact call: the second near call reads the second occurrence."""
    async with in_process_client(create_app(suite, miss_policy="nearest")) as c:
        bodies = [
            (await c.post("/tools/shop/order status", json={"order_id": "A2"})).json()
            for _ in range(3)
        ]
    assert [(b["provenance"], b["body"]) for b in bodies] == [
        ("nearest", {"status": "pending"}),
        ("nearest", {"status": "shipped"}),
        ("nearest", {"status": "shipped"}),  # beyond the last occurrence: the last one
    ]


# -- simulate -------------------------------------------------------------------------------------


class _Named:
    def __init__(self, name: Any) -> None:
        self.name = name

    def __call__(self, tool: str, api: str, args: dict[str, Any]) -> Response:
        return Response(body={"for": [tool, api, args]})


@pytest.mark.parametrize(
    ("name", "model"), [("gpt-test", "gpt-test"), ("", None), (5, None), (None, None)]
)
async def test_a_simulated_answer_is_recorded_and_names_its_model(name: Any, model: Any) -> None:
    """A simulator's answer is provenance ``simulated``, recorded as ``simulated``; ``model`` is
    the simulator's ``name`` when that is a non-empty string, else unknown (None)."""
    policy = SimulatePolicy(SimulatePolicy.Options(simulator=_Named(name)))
    got = await policy.answer(_miss(args={"q": 1}))
    body = Response(body={"for": ["t", "a", {"q": 1}]})
    assert got == MissAnswer(body, "simulated", record_as="simulated", model=model)


async def test_a_failing_simulator_is_an_infrastructure_error_naming_the_exception() -> None:
    def broken(tool: str, api: str, args: dict[str, Any]) -> Response:
        raise RuntimeError("model offline")

    policy = SimulatePolicy(SimulatePolicy.Options(simulator=broken))
    got = await policy.answer(_miss())
    error = Response(ok=False, error="simulator failed: RuntimeError: model offline")
    assert got == MissAnswer(error, "miss", code="sim_failed", status=502, infra=True)


async def test_a_simulator_that_cannot_be_called_is_reported_as_such() -> None:
    """A simulator option that is neither a ``ToolSimulator`` nor callable fails each miss with
    the error Python gives for calling it, as an infrastructure error."""
    policy = SimulatePolicy(SimulatePolicy.Options(simulator=5))
    got = await policy.answer(_miss())
    error = Response(ok=False, error="simulator failed: TypeError: 'int' object is not callable")
    assert got == MissAnswer(error, "miss", code="sim_failed", status=502, infra=True)


async def test_closing_the_policy_closes_a_simulator_that_can_be_closed() -> None:
    closed: list[bool] = []

    class Closable(_Named):
        async def aclose(self) -> None:
            closed.append(True)

    await SimulatePolicy(SimulatePolicy.Options(simulator=Closable("m"))).aclose()
    assert closed == [True]
    await SimulatePolicy(SimulatePolicy.Options(simulator=_Named("m"))).aclose()  # nothing to close


async def test_a_sync_simulator_may_return_an_awaitable() -> None:
    async def later(tool: str, api: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "body": args}

    def sync_returning_awaitable(tool: str, api: str, args: dict[str, Any]) -> Any:
        return later(tool, api, args)

    assert await run_simulator(sync_returning_awaitable, "t", "a", {"n": 2}) == Response(
        body={"n": 2}
    )


class _AsyncCallable:
    def __init__(self, release: threading.Event) -> None:
        self.release = release

    async def __call__(self, tool: str, api: str, args: dict[str, Any]) -> Response:
        self.release.set()
        return Response(body="async")


def _async_function(release: threading.Event) -> Any:
    async def simulator(tool: str, api: str, args: dict[str, Any]) -> Response:
        release.set()
        return Response(body="async")

    return simulator


@pytest.mark.parametrize("make", [_async_function, _AsyncCallable])
async def test_an_async_simulator_is_not_queued_behind_busy_worker_threads(make: Any) -> None:
    """Sync simulators run in worker threads; an async one (a function, or an object with an async
    ``__call__``) runs on the event loop, so it answers even while every worker thread is busy
    (here: the only one, held by a sync simulator that waits for the async one to answer)."""
    release = threading.Event()

    def blocking(tool: str, api: str, args: dict[str, Any]) -> Response:
        release.wait(timeout=5)  # bounds a failure of this test: it never waits when it passes
        return Response(body="sync")

    limiter = anyio.to_thread.current_default_thread_limiter()
    total = limiter.total_tokens
    limiter.total_tokens = 1
    answers: list[Response] = []

    async def run(simulator: Any) -> None:
        answers.append(await run_simulator(simulator, "t", "a", {}))

    try:
        with anyio.fail_after(4):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run, blocking)
                await anyio.sleep(0.05)  # let the sync simulator take the thread
                await run(make(release))
    finally:
        release.set()
        limiter.total_tokens = total
    assert sorted(a.body for a in answers) == ["async", "sync"]


# -- upstream -------------------------------------------------------------------------------------


class _Clock:
    """``time`` for ``mock_tools.miss``: ``perf_counter`` reads 10.0, then 12.5."""

    def __init__(self) -> None:
        self.readings = iter([10.0, 12.5])

    def perf_counter(self) -> float:
        return next(self.readings)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(miss_module, "time", _Clock())


@pytest.mark.parametrize(
    ("base", "url"),
    [
        ("https://api.example/v1", "https://api.example/v1/a%2Fb%20c/x%2Fy"),
        ("https://api.example/v1/", "https://api.example/v1/a%2Fb%20c/x%2Fy"),
        ("https://api.example/TAX/", "https://api.example/TAX/a%2Fb%20c/x%2Fy"),
        ("https://api.example/{tool}/call", "https://api.example/a%2Fb%20c/call"),
        ("https://api.example/run/{api}", "https://api.example/run/x%2Fy"),
        ("https://api.example/{api}/{tool}", "https://api.example/x%2Fy/a%2Fb%20c"),
    ],
)
def test_the_upstream_url_quotes_names_into_single_path_segments(base: str, url: str) -> None:
    """Tool and API names are quoted whole (a ``/`` in a name is ``%2F``, never a path
    separator); a base with either placeholder is filled in, any other gets ``/tool/api``."""
    assert Upstream(base).url("a/b c", "x/y") == url


@respx.mock
async def test_a_forwarded_call_posts_canonical_json(clock: None) -> None:
    route = respx.post("https://api.example/t/a").mock(
        return_value=httpx.Response(200, json={"temp": 20})
    )
    answer = await Upstream("https://api.example").fetch("t", "a", {"b": "é", "a": 1})
    request = route.calls[0].request
    assert request.headers["content-type"] == "application/json"
    assert request.read() == '{"a":1,"b":"é"}'.encode()
    assert (answer.recordable, answer.response) == (
        True,
        Response(ok=True, body={"temp": 20}, latency_ms=2500),
    )


@respx.mock
@pytest.mark.parametrize(
    ("status", "body", "response", "recordable"),
    [
        (200, {"ok": True, "n": 1}, Response(body={"ok": True, "n": 1}, latency_ms=2500), True),
        (200, "all ok", Response(body="all ok", latency_ms=2500), True),
        (
            404,
            "gone",
            Response(ok=False, body="gone", error="upstream HTTP 404", latency_ms=2500),
            True,
        ),
        (
            499,
            {"x": 1},
            Response(ok=False, body={"x": 1}, error="upstream HTTP 499", latency_ms=2500),
            True,
        ),
        (
            500,
            "boom",
            Response(ok=False, body="boom", error="upstream HTTP 500", latency_ms=2500),
            False,
        ),
    ],
)
async def test_a_real_api_answer_is_kept_whole_and_5xx_is_not_recorded(
    clock: None, status: int, body: Any, response: Response, recordable: bool
) -> None:
    """Without the mock server's provenance header the answer is the API's own: a JSON body that
    happens to hold ``ok`` is not unwrapped; 4xx is the tool's answer (recorded), 5xx is not."""
    reply = (
        httpx.Response(status, json=body)
        if isinstance(body, dict)
        else httpx.Response(status, text=body)
    )
    respx.post("https://api.example/t/a").mock(return_value=reply)
    answer = await Upstream("https://api.example").fetch("t", "a", {})
    assert (answer.response, answer.recordable) == (response, recordable)


@respx.mock
@pytest.mark.parametrize(
    ("status", "envelope", "response", "recordable"),
    [
        (
            200,
            {"ok": True, "body": {"t": 3}, "provenance": "hit"},
            Response(ok=True, body={"t": 3}, error="", latency_ms=2500),
            True,
        ),
        (
            404,
            {"ok": False, "error": "city not found"},
            Response(ok=False, body=None, error="city not found", latency_ms=2500),
            True,
        ),
        (
            500,
            {"ok": False, "error": "a recording cannot be served"},
            Response(ok=False, body=None, error="a recording cannot be served", latency_ms=2500),
            False,
        ),
    ],
)
async def test_another_mock_server_s_envelope_is_unwrapped(
    clock: None, status: int, envelope: dict[str, Any], response: Response, recordable: bool
) -> None:
    """An answer carrying ``X-Sandbox-Provenance`` is a mock server's envelope: its ``ok``,
    ``body`` and ``error`` are the response; its 5xx is not recorded."""
    respx.post("https://mock.example/t/a").mock(
        return_value=httpx.Response(status, json=envelope, headers={PROVENANCE_HEADER: "hit"})
    )
    answer = await Upstream("https://mock.example").fetch("t", "a", {})
    assert (answer.response, answer.recordable) == (response, recordable)


@respx.mock
async def test_an_unreachable_upstream_is_an_unrecorded_infrastructure_failure() -> None:
    respx.post("https://down.example/t/a").mock(side_effect=httpx.ConnectError("refused"))
    policy = build_miss_policy("upstream", upstream_url="https://down.example")
    got = await policy.answer(_miss())
    error = Response(ok=False, error="upstream unreachable: ConnectError: refused")
    assert got == MissAnswer(error, "miss", code="upstream_failed", status=502, infra=True)
    await policy.aclose()


@respx.mock
async def test_an_upstream_answer_is_recorded_as_upstream(clock: None) -> None:
    respx.post("https://api.example/t/a").mock(return_value=httpx.Response(200, json=[1]))
    policy = build_miss_policy("upstream", upstream_url="https://api.example")
    got = await policy.answer(_miss())
    response = Response(body=[1], latency_ms=2500)
    assert got == MissAnswer(response, "upstream", record_as="upstream")
    await policy.aclose()


async def _silent_server() -> tuple[asyncio.AbstractServer, int]:
    """A server on 127.0.0.1 that accepts connections and never answers."""

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(-1)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def test_the_upstream_timeout_option_bounds_a_forwarded_call() -> None:
    """``timeout`` (seconds) is how long a forwarded call may take: a silent upstream is reported
    unreachable (a read timeout) after it, not after the 30 s default."""
    server, port = await _silent_server()
    policy = build_miss_policy("upstream", upstream_url=f"http://127.0.0.1:{port}", timeout=0.2)
    try:
        with anyio.fail_after(15):
            got = await policy.answer(_miss())
    finally:
        await policy.aclose()
        server.close()
    assert got is not None and got.infra
    assert got.response.error.startswith("upstream unreachable: ReadTimeout")


async def test_the_upstream_closes_its_own_client_never_the_callers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An ``Upstream`` given a client leaves it open on ``aclose`` (the caller owns it); one that
    opened its own closes it, and opens a new one if it forwards again."""
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json={"n": 1}))
    given = httpx.AsyncClient(transport=transport)
    shared = Upstream("https://api.example", client=given)
    await shared.fetch("t", "a", {})
    await shared.aclose()
    assert not given.is_closed
    await given.aclose()

    opened: list[httpx.AsyncClient] = []
    real = httpx.AsyncClient

    def own_client(**kwargs: Any) -> httpx.AsyncClient:
        opened.append(real(transport=transport, **kwargs))
        return opened[-1]

    monkeypatch.setattr(httpx, "AsyncClient", own_client)
    upstream = Upstream("https://api.example")
    await upstream.aclose()  # never forwarded: nothing to close
    assert (await upstream.fetch("t", "a", {})).response.body == {"n": 1}
    await upstream.aclose()
    assert (await upstream.fetch("t", "a", {})).response.body == {"n": 1}
    await upstream.aclose()
    assert [c.is_closed for c in opened] == [True, True]
    assert opened[0].timeout == httpx.Timeout(30.0)


def test_the_upstream_policy_without_a_url_names_the_flag() -> None:
    with pytest.raises(MockToolsError) as caught:
        build_miss_policy("upstream")
    assert str(caught.value) == (
        "--miss-policy upstream needs --upstream-url (the option upstream_url)"
    )


# -- naming a policy of one's own -----------------------------------------------------------------


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The policy names as they are, restored after the test."""
    monkeypatch.setattr(MISS_POLICIES, "_entries", dict(MISS_POLICIES._entries))
    monkeypatch.setattr(MISS_POLICIES, "_loaded", {})
    yield


class EchoPolicy:
    """Answers every miss with its arguments.

    A second paragraph that the summary leaves out.
    """

    name = "Echo"
    records = False
    Options = MissPolicyOptions

    def __init__(self, options: MissPolicyOptions) -> None:
        self.options = options

    async def answer(self, miss: Miss) -> MissAnswer | None:
        return MissAnswer(Response(body=miss.args), "echo")

    async def aclose(self) -> None:
        return None


class OtherOptions(MissPolicyOptions):
    level: int = 1


class SummarisedPolicy(EchoPolicy):
    summary = "a one-line summary of its own"


class Undocumented:
    name = "undocumented"
    records = False
    Options = MissPolicyOptions

    def __init__(self, options: MissPolicyOptions) -> None:
        self.options = options

    async def answer(self, miss: Miss) -> None:
        return None

    async def aclose(self) -> None:
        return None


def test_a_policy_is_named_in_lower_case_and_summarised_by_its_first_paragraph(
    registry: None,
) -> None:
    """``name`` is case-insensitive (kept in lower case); the summary is the class's
    ``summary``, else its docstring's first paragraph on one line, else empty."""
    kind = register_miss_policy(EchoPolicy)
    assert (kind.name, kind.build, kind.options, kind.summary) == (
        "echo",
        EchoPolicy,
        MissPolicyOptions,
        "Answers every miss with its arguments.",
    )
    assert miss_policy_kind("ECHO") is kind
    assert policy_kind(SummarisedPolicy).summary == "a one-line summary of its own"
    assert policy_kind(Undocumented).summary == ""


def test_registering_takes_another_name_and_options_and_refuses_a_taken_name(
    registry: None,
) -> None:
    kind = register_miss_policy(EchoPolicy, name=" Mirror ", options=OtherOptions)
    assert (kind.name, kind.build, kind.options) == ("mirror", EchoPolicy, OtherOptions)
    policy = build_miss_policy("mirror", level=3)
    assert isinstance(policy, EchoPolicy) and policy.options == OtherOptions(level=3)
    with pytest.raises(ValueError, match="miss policy 'mirror' is already registered"):
        register_miss_policy(SummarisedPolicy, name="mirror")
    replaced = register_miss_policy(SummarisedPolicy, name="mirror", replace=True)
    assert miss_policy_kind("mirror") is replaced and replaced.build is SummarisedPolicy


def test_a_class_that_is_not_a_policy_is_refused_with_what_it_lacks() -> None:
    class NoOptions:
        name = "no-options"

        async def answer(self, miss: Miss) -> None:
            return None

        async def aclose(self) -> None:
            return None

    class NoAnswer:
        name = "no-answer"
        Options = MissPolicyOptions

        async def aclose(self) -> None:
            return None

    class NotPydantic(NoOptions):
        Options = dict

    with pytest.raises(TypeError) as caught:
        policy_kind(NoOptions)
    assert str(caught.value) == "the Options of miss policy 'no-options' must be a pydantic model"
    with pytest.raises(TypeError) as caught:
        policy_kind(NotPydantic)
    assert str(caught.value) == "the Options of miss policy 'no-options' must be a pydantic model"
    with pytest.raises(TypeError) as caught:
        policy_kind(NoAnswer)
    assert str(caught.value) == "miss policy 'no-answer' has no answer()"


@pytest.fixture
def plugin_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An installed package ``missplug`` declaring two miss policies as entry points."""
    package = tmp_path / "missplug"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from mock_tools.miss import MissPolicyOptions\n"
        "class Quiet:\n"
        "    name = 'quiet-by-class'\n"
        "    records = False\n"
        "    Options = MissPolicyOptions\n"
        "    def __init__(self, options):\n"
        "        self.options = options\n"
        "    async def answer(self, miss):\n"
        "        return None\n"
        "    async def aclose(self):\n"
        "        return None\n"
        "NOT_A_CLASS = 42\n",
        encoding="utf-8",
    )
    info = tmp_path / "missplug-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: missplug\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[agent_sandbox.miss_policies]\nhushed = missplug:Quiet\nnumeric = missplug:NOT_A_CLASS\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("missplug", None)


def test_an_installed_policy_is_known_by_its_entry_point_name(
    registry: None, plugin_site: Path
) -> None:
    """A plugin is named by its entry point (``hushed``), not by its class's ``name``; an entry
    point that is not a class is refused naming what it is."""
    kind = miss_policy_kind("hushed")
    assert kind.name == "hushed" and kind.build.__name__ == "Quiet"
    assert type(build_miss_policy("hushed")) is kind.build
    with pytest.raises(MockToolsError) as caught:
        miss_policy_kind("numeric")
    assert str(caught.value).endswith(": got int, not a class")
    assert miss_policy_kind("missplug:Quiet").name == "quiet-by-class"


def test_options_of_a_registered_kind_must_be_a_pydantic_model() -> None:
    class Plain(BaseModel):
        x: int = 0

    assert policy_kind(EchoPolicy, options=Plain).options is Plain
