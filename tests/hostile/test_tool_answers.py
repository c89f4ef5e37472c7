"""Hardening, round two (issue 27): numbers JSON cannot hold, simulator failures, and what a
live tool answered against what its replay serves.

Each test is named for its item of the issue (item N is test number 21 + N)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mock_tools import (
    OCCURRENCE_HEADER,
    MockToolService,
    Response,
    create_service,
    http_app,
    in_process_client,
    load_suite,
)
from mock_tools.miss import build_miss_policy
from mock_tools.simulation import SimulationFailed, SimulationRequest
from sandbox.cli import main as sandbox_main
from sandbox.store import read_trajectories
from tests.agents.models.openai_server import ScriptedOpenAIServer, finish_reply, tool_call_reply
from tests.hostile.conftest import MINI
from tests.hostile.mcp_stdio import StdioServer, call

# -- item 14: NaN, Infinity and 1e999 in what a client sends -------------------------------------

NOT_JSON = ['{"parcel_id": NaN}', '{"parcel_id": Infinity}', '{"parcel_id": -Infinity}']
TOO_LARGE = ['{"parcel_id": 1e999}', '{"parcel_id": -1e400}']


def _routes(body: str) -> list[tuple[str, str]]:
    """The same arguments on every HTTP call route: native, typed, /virtual."""
    virtual = '{"tool_name": "shipping", "api_name": "track_parcel", "tool_input": %s}'
    return [
        ("/tools/shipping/track_parcel", body),
        ("/api/shipping/track_parcel", body),
        ("/virtual", virtual % body),
    ]


@pytest.mark.parametrize("body", NOT_JSON + TOO_LARGE)
async def test_35_non_json_numbers_in_a_call_are_400_on_every_route(body: str) -> None:
    """`NaN`, `Infinity` and numbers too large for a double are not JSON: every call route
    answers 400 `malformed_json` saying so, never 200 with "nan"/"inf" read as the argument.
    /virtual's `tool_input` given as a JSON string is refused as StableToolBench's server
    refuses unreadable tool input (200 with an error, the API not called), saying why."""
    service = create_service(load_suite(MINI))
    async with in_process_client(http_app(service)) as client:
        for path, raw in _routes(body):
            r = await client.post(path, content=raw, headers={"content-type": "application/json"})
            assert r.status_code == 400, (path, raw, r.text)
            payload = r.json()
            assert payload["code"] == "malformed_json", (path, payload)
            assert "not valid JSON" in payload["error"], payload
            assert "a JSON number" in payload["error"] or "too large" in payload["error"]
        as_text = '{"tool_name": "shipping", "api_name": "track_parcel", "tool_input": %s}'
        r = await client.post("/virtual", content=as_text % json.dumps(body))
        payload = r.json()
        assert r.status_code == 200 and payload["response"] == "", payload
        assert "the API was not called" in payload["error"], payload
        assert "a JSON number" in payload["error"] or "too large" in payload["error"]
    assert not {"hit", "miss"} & set(service.stats.totals), service.stats.totals  # no lookup


def test_35_non_json_numbers_in_mcp_arguments_are_a_json_rpc_error() -> None:
    """Over MCP the SDK reads such numbers; the server refuses them as invalid params (-32602)
    naming where they are, and never looks the call up."""
    server = StdioServer(MINI)
    try:
        server.initialize()
        for n, number in enumerate(["NaN", "Infinity", "-Infinity", "1e999"], 1):
            line = json.dumps(call(n, "track_parcel_for_shipping", {"parcel_id": {"x": [0]}}))
            server.send(line.replace("[0]", f"[{number}]"))
            answer = server.receive()
            assert answer["id"] == n and answer["error"]["code"] == -32602, answer
            assert "parcel_id/x/0" in answer["error"]["message"], answer
        server.send(call(9, "stats_are_not_a_tool", {}))
        assert server.receive()["error"]["code"] == -32602
    finally:
        server.stop()


async def test_35_finite_numbers_still_work() -> None:
    """The edges that are JSON stay accepted: the largest double, and an underflow to 0."""
    app = http_app(create_service(load_suite(MINI)))
    async with in_process_client(app) as client:
        for raw in ['{"parcel_id": "PX-100", "n": 1.7976931348623157e308}', '{"n": 1e-999}']:
            r = await client.post(
                "/tools/shipping/track_parcel", content=raw, headers={"content-type": "text/plain"}
            )
            assert r.status_code != 400, r.text


# -- item 8: a failing simulator is asked once for identical misses in flight ----------------------


class _Simulator:
    """A simulator that counts its calls, answers after a pause, and fails while ``down``."""

    name = "counting"

    def __init__(self, *, down: bool, pause: float = 0.2) -> None:
        self.down = down
        self.pause = pause
        self.calls = 0

    async def simulate(self, request: SimulationRequest) -> Response:
        self.calls += 1
        await asyncio.sleep(self.pause)
        if self.down:
            raise SimulationFailed("the simulator model failed: connection refused")
        return Response(body={"parcel_id": request.args["parcel_id"], "status": "simulated"})


async def _misses(client: Any, sessions: list[str | None]) -> list[Any]:
    def headers(session: str | None) -> dict[str, str]:
        return {} if session is None else {"X-Sandbox-Session": session}

    return await asyncio.gather(
        *(
            client.post(
                "/tools/shipping/track_parcel", json={"parcel_id": "ZZ-1"}, headers=headers(s)
            )
            for s in sessions
        )
    )


SESSIONS = {
    "one session": ["s"] * 20,
    "no session": [None] * 20,
    "twenty sessions": [f"s{i}" for i in range(20)],
}


@pytest.mark.parametrize("down", [True, False], ids=["failing", "answering"])
@pytest.mark.parametrize("sessions", SESSIONS.values(), ids=SESSIONS.keys())
async def test_29_identical_misses_in_flight_make_one_simulation_whether_it_fails_or_not(
    sessions: list[str | None], down: bool
) -> None:
    """20 identical concurrent misses share one simulation, in one session or many; when it
    fails, all 20 get the one failure (502, infra), and each keeps its own occurrence number."""
    simulator = _Simulator(down=down)
    app = http_app(create_service(load_suite(MINI), miss_policy="simulate", simulator=simulator))
    async with in_process_client(app) as client:
        answers = await _misses(client, sessions)
    assert simulator.calls == 1
    assert {r.status_code for r in answers} == ({502} if down else {200})
    if down:
        assert all(r.json()["infra"] and r.json()["code"] == "sim_failed" for r in answers)
    if sessions[0] == "s":
        occurrences = sorted(int(r.headers[OCCURRENCE_HEADER]) for r in answers)
        assert occurrences == list(range(1, 21))


async def test_29_a_quick_failure_answers_identical_calls_for_a_moment_then_is_asked_again() -> (
    None
):
    """A simulator that fails at once is not asked again by identical calls that come right
    after (one by one, as a server takes them): the failure answers them for `failure_hold`
    seconds. After that the next identical call asks again, and once the simulator is back its
    answer is kept (then every identical call is served from it)."""
    simulator = _Simulator(down=True, pause=0.0)
    policy = build_miss_policy("simulate", simulator=simulator)
    service = MockToolService(load_suite(MINI), miss_policy=policy, failure_hold=0.5)
    async with in_process_client(http_app(service)) as client:
        for session in ("a", "b", "c", None):
            assert [r.status_code for r in await _misses(client, [session])] == [502]
        assert simulator.calls == 1
        await asyncio.sleep(0.6)
        assert {r.status_code for r in await _misses(client, ["d"] * 5)} == {502}
        assert simulator.calls == 2
        await asyncio.sleep(0.6)
        simulator.down = False
        assert {r.status_code for r in await _misses(client, ["e"] * 5)} == {200}
        assert {r.status_code for r in await _misses(client, ["f"] * 5)} == {200}
    assert simulator.calls == 3


# -- item 4: NaN in a live MCP answer, recorded, replays -------------------------------------------

ODD_SERVER = Path(__file__).with_name("odd_mcp_server.py")


def _measure_policy(body: dict[str, Any]) -> dict[str, Any]:
    """The model: measure the item named in the query, then finish with the observation."""
    messages = body["messages"]
    observations = [m["content"] for m in messages if m["role"] == "tool"]
    if not observations:
        item = messages[-1]["content"].split()[-1]
        return tool_call_reply("measure", {"item": item}, call_id="call_0")
    return finish_reply(observations[-1])


def test_25_a_recorded_mcp_answer_with_nan_replays_identically(tmp_path: Path, capsys) -> None:
    """A live MCP tool answering `NaN`/`Infinity` (Python's JSON) is recorded and replayed in one
    canonical form, the strings "NaN", "Infinity", "-Infinity": the live observation, the
    recording and the replay's observation are the same text, and the replay reproduces."""
    tasks = tmp_path / "queries.yaml"
    tasks.write_text("- measure bolts\n- measure nuts\n")
    recorded = tmp_path / "recorded"
    with ScriptedOpenAIServer(models=["scripted"]) as model_server:
        model_server.default = _measure_policy
        code = sandbox_main(
            [
                "run",
                "--suite",
                str(tasks),
                "--mcp-server",
                f"stdio:{sys.executable} {ODD_SERVER} nan",
                "--record-into",
                str(recorded),
                "--model",
                f"openai:scripted@{model_server.base_url}",
                "--out",
                str(tmp_path / "runs"),
                "--run-id",
                "odd",
                "--no-plots",
            ]
        )
    assert code == 0, capsys.readouterr().err
    run = tmp_path / "runs" / "odd"
    answers = {t.scenario_id: t.final_answer for t in read_trajectories(run)}
    observed = json.loads(answers["q1"])["response"]
    assert observed == {"item": "bolts", "nan": "NaN", "big": "Infinity", "low": ["-Infinity"]}
    recording = json.loads(
        (recorded / "recordings" / "mcp-odd_tools.jsonl").read_text().splitlines()[0]
    )
    assert recording["response"]["body"]["nan"] == "NaN"
    capsys.readouterr()
    assert sandbox_main(["replay", str(run)]) == 0
    assert "REPRODUCED: 2/2 episodes identical" in capsys.readouterr().out
