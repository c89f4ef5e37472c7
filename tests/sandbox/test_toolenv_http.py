"""HttpToolEnv over the in-process mock app: every server answer becomes an Observation."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from harness_suite import write_suite

from agents.toolenv import ToolEnv
from mock_tools import FaultConfig, create_app, in_process_client, load_suite
from mock_tools.faults import decide_fault
from sandbox.tool_envs.http import HttpToolEnv, tool_functions


@pytest.fixture
def suite(tmp_path: Path):
    return load_suite(write_suite(tmp_path / "suite"))


def _env(client: httpx.AsyncClient, suite, task_id: str, **kw) -> HttpToolEnv:
    return HttpToolEnv(
        client, suite.task(task_id), suite.apis, session=kw.pop("session", "s1"), **kw
    )


def _content(obs) -> dict:
    return json.loads(obs.content)


def test_functions_are_openai_schemas_named_api_for_tool(suite) -> None:
    functions, targets = tool_functions(suite.task("book-osl-lim"), suite.apis)
    names = [f["function"]["name"] for f in functions]
    assert names == ["search_for_skyflights", "book_for_skyflights"]
    assert targets["book_for_skyflights"] == ("SkyFlights", "book")
    first = functions[0]
    assert first["type"] == "function"
    assert first["function"]["description"] == "Search flights between two airports."
    assert first["function"]["parameters"]["required"] == ["origin", "destination"]


async def test_hit_and_occurrences_are_scoped_per_session(suite) -> None:
    async with in_process_client(create_app(suite)) as client:
        assert isinstance(_env(client, suite, "book-osl-lim"), ToolEnv)
        env = _env(client, suite, "book-osl-lim", session="episode-1")
        hit = await env.call("search_for_skyflights", {"destination": "LIM", "origin": " OSL "})
        assert hit.ok and hit.provenance == "hit" and hit.status == 200
        assert _content(hit) == {
            "error": "",
            "response": {"flights": [{"id": "SF-204", "price_eur": 812}]},
        }
        assert hit.latency_ms > 0
        first = await env.call("book_for_skyflights", {"flight_id": "SF-204"})
        second = await env.call("book_for_skyflights", {"flight_id": "SF-204"})
        assert not first.ok and _content(first)["error"] == "internal error, try again"
        assert first.provenance == "hit"  # a recorded tool error is the tool's real behaviour
        assert second.ok and _content(second)["response"]["booking"] == "BK-77"
        # another episode starts counting from occurrence 1 again
        other = _env(client, suite, "book-osl-lim", session="episode-2")
        again = await other.call("book_for_skyflights", {"flight_id": "SF-204"})
        assert not again.ok


async def test_miss_unknown_function_and_schema_violation_are_observations(suite) -> None:
    async with in_process_client(create_app(suite)) as client:
        env = _env(client, suite, "weather-oslo")
        miss = await env.call("current_for_weatherly", {"city": "Atlantis"})
        assert not miss.ok and miss.provenance == "miss" and "no recording" in miss.error
        bad = await env.call("current_for_weatherly", {"town": "Oslo"})
        assert not bad.ok and bad.status == 422 and bad.provenance == "invalid"
        assert _content(bad)["response"]["violations"]
        unknown = await env.call("forecast_for_weatherly", {"city": "Oslo"})
        assert not unknown.ok and unknown.provenance == "unknown"
        assert "current_for_weatherly" in unknown.error
        # an API that exists on the server but is not offered by this task is not callable
        not_offered = await env.call("rate_for_fxrates", {"base": "EUR", "quote": "NOK"})
        assert not not_offered.ok and not_offered.provenance == "unknown"


def _first_fault_seed(kind: str, scenario: str, tool: str, api: str, key: str) -> int:
    for seed in range(5000):
        if decide_fault(
            FaultConfig(rate=0.5, kinds=[kind], seed=seed), scenario, tool, api, key, 1
        ):
            return seed
    raise AssertionError("no seed found")


@pytest.mark.parametrize(
    ("kind", "status"),
    [
        ("http_500", 500),
        ("rate_limit_429", 429),
        ("timeout", 504),
        ("malformed_body", 200),
        ("empty_body", 200),
    ],
)
async def test_injected_faults_are_observations_with_fault_provenance(suite, kind, status) -> None:
    key = '{"city":"Oslo"}'
    seed = _first_fault_seed(kind, "weather-oslo", "Weatherly", "current", key)
    faults = FaultConfig(rate=0.5, kinds=[kind], seed=seed)
    async with in_process_client(create_app(suite)) as client:
        env = _env(client, suite, "weather-oslo", faults=faults)
        obs = await env.call("current_for_weatherly", {"city": "Oslo"})
    assert not obs.ok
    assert obs.provenance == f"fault:{kind}"
    assert obs.status == status
    assert set(_content(obs)) == {"error", "response"}
    assert obs.error


async def test_transport_failure_is_an_observation(suite) -> None:
    async with httpx.AsyncClient(base_url="http://127.0.0.1:9", timeout=2.0) as client:
        env = _env(client, suite, "weather-oslo")
        obs = await env.call("current_for_weatherly", {"city": "Oslo"})
    assert not obs.ok and obs.provenance.startswith("transport:")
