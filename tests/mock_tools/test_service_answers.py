"""The service behind every transport: its health report, argument checking, occurrence resets
and what it does with an answer a miss policy makes at run time."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from mock_tools import FaultConfig, Response, load_suite
from mock_tools.faults import decide_fault, fault_reply
from mock_tools.miss import Miss, MissAnswer, NearestOptions, NearestPolicy
from mock_tools.service import CallContext, Rejected, create_service

WEATHER = ("Weather Now", "current")


class _Recorder:
    """A miss policy that keeps what it was asked and answers with ``make(miss)``, recorded."""

    name = "recorder"
    records = True

    def __init__(self, make: Any, model: str | None = "sim-1") -> None:
        self.make, self.model = make, model
        self.asked: list[Miss] = []

    async def answer(self, miss: Miss) -> MissAnswer:
        self.asked.append(miss)
        body = await self.make(miss)
        return MissAnswer(Response(body=body), "simulated", record_as="simulated", model=self.model)

    async def aclose(self) -> None:
        return None


async def _constant(miss: Miss) -> Any:
    return {"temp_c": 1}


def test_health_reports_the_suite_its_recordings_and_policy(
    suite_dir: Path, tmp_path: Path
) -> None:
    suite = load_suite(suite_dir)
    plain = create_service(suite)
    assert plain.health() == {
        "status": "ok",
        "suite": "tiny",
        "fingerprint": suite.fingerprint,
        "apis": 4,  # Weather Now: current, 2-Day Outlook; shop: order status, id
        "recordings": 8,
        "miss_policy": "error",
    }
    overlay = tmp_path / "overlay.sqlite"
    shared = create_service(suite, miss_policy=_Recorder(_constant), overlay=overlay)
    assert shared.health()["overlay"] == {"path": str(overlay), "entries": 0}
    assert shared.health()["miss_policy"] == "recorder"


def test_canonicalise_gives_the_key_or_rejects_every_violation(suite: Any) -> None:
    service = create_service(suite)
    assert service.canonicalise(*WEATHER, {"city": " Oslo ", "days": "2"}) == (
        {"city": "Oslo", "days": 2},
        '{"city":"Oslo","days":2}',
    )
    with pytest.raises(Rejected) as caught:
        service.canonicalise(*WEATHER, {"days": 0})
    assert (caught.value.status, caught.value.code, str(caught.value)) == (
        422,
        "invalid_arguments",
        "arguments of Weather Now/current do not match its schema",
    )
    assert len(caught.value.extra["violations"]) == 2  # city missing, days below its minimum


def test_resetting_one_scope_keeps_the_other_scopes_counts(suite: Any) -> None:
    """Both counts (deliveries of recordings, attempts for fault decisions) of the other scopes
    go on after one scope is reset."""
    service = create_service(suite)
    for scope in ("a", "b"):
        service.deliveries.next(scope, *WEATHER, "{}")
        service.attempts.next(scope, *WEATHER, "{}")
    assert service.reset("a") == 1
    assert [c.peek("a", *WEATHER, "{}") for c in (service.deliveries, service.attempts)] == [0, 0]
    assert [c.peek("b", *WEATHER, "{}") for c in (service.deliveries, service.attempts)] == [1, 1]


async def test_a_made_answer_names_its_origin_in_json(suite: Any) -> None:
    """A simulated answer's origin is the recording's provenance as JSON: its source, the model,
    and the time (UTC) it was made; nothing left at its default."""
    for model, keys in (("sim-1", {"source", "recorded_at", "model"}), (None, None)):
        service = create_service(suite, miss_policy=_Recorder(_constant, model=model))
        canon, key = service.canonical(*WEATHER, {"city": "Rome"})
        outcome = await service.call(*WEATHER, canon, key, CallContext())
        origin = outcome.origin or {}
        assert set(origin) == (keys or {"source", "recorded_at"})
        assert origin["source"] == "simulated" and origin.get("model") == model
        made = datetime.fromisoformat(origin["recorded_at"].replace("Z", "+00:00"))
        assert made.utcoffset() == timedelta(0)
        await service.aclose()


async def test_the_policy_is_told_the_scenario_and_scope_and_gets_its_own_arguments(
    suite: Any,
) -> None:
    async def scribble(miss: Miss) -> Any:
        miss.args["tags"].append("changed by the policy")
        return {"ok": 1}

    policy = _Recorder(scribble)
    service = create_service(suite, miss_policy=policy)
    canon = {"city": "Rome", "tags": ["a"]}
    ctx = CallContext(scenario="task-7", scope="episode-3")
    await service.call(*WEATHER, canon, '{"city":"Rome","tags":["a"]}', ctx)
    (miss,) = policy.asked
    assert (miss.scenario, miss.scope) == ("task-7", "episode-3")
    assert canon == {"city": "Rome", "tags": ["a"]}  # the caller's copy is untouched


async def test_numbers_json_cannot_hold_are_served_as_recorded(suite: Any) -> None:
    """A simulator's NaN and infinities are served in their canonical string form, the form the
    recording keeps, so the first answer and every later hit are the same."""

    async def odd_numbers(miss: Miss) -> Any:
        return {"x": float("nan"), "y": [float("inf"), -float("inf")], "z": 1.5}

    service = create_service(suite, miss_policy=_Recorder(odd_numbers))
    canon, key = service.canonical(*WEATHER, {"city": "Rome"})
    first = await service.call(*WEATHER, canon, key, CallContext())
    again = await service.call(*WEATHER, canon, key, CallContext())
    expected = {"x": "NaN", "y": ["Infinity", "-Infinity"], "z": 1.5}
    assert first.response.body == expected
    assert again.response.body == expected


def test_nearest_threshold_is_still_taken_by_its_old_keyword(suite: Any) -> None:
    service = create_service(suite, miss_policy="nearest", nearest_threshold=50)
    policy = service.miss_policy
    assert isinstance(policy, NearestPolicy) and policy.options == NearestOptions(threshold=50)


def test_a_bad_fault_config_is_a_400_naming_the_problem() -> None:
    with pytest.raises(Rejected) as caught:
        CallContext.parse(None, "", '{"rate": 2}')
    assert (caught.value.status, caught.value.code) == (400, "bad_fault_header")
    assert str(caught.value).startswith("invalid X-Sandbox-Faults header: rate: ")


async def test_faults_are_drawn_for_the_caller_s_scenario_with_the_message_agents_read(
    suite: Any,
) -> None:
    """The service draws each call's fault for the scenario the caller names (a task id), so a
    call meets the fault the documented hash gives for that scenario."""
    config = FaultConfig(rate=0.5, kinds=["http_500", "timeout"], seed=4)
    service = create_service(suite, fault=config)
    canon, key = service.canonical(*WEATHER, {"city": "Oslo"})
    got, want = [], []
    for n in range(1, 25):
        outcome = await service.call(*WEATHER, canon, key, CallContext(scenario="task-9"))
        got.append((outcome.provenance, outcome.response.error))
        kind = decide_fault(config, "task-9", *WEATHER, key, n)
        message = fault_reply(kind).message if kind else ""
        want.append((f"fault:{kind}" if kind else "hit", message))
    assert got == want
    assert {p for p, _ in got} == {"hit", "fault:http_500", "fault:timeout"}


async def test_a_hit_says_where_it_is_recorded(suite: Any) -> None:
    service = create_service(suite)
    canon, key = service.canonical("shop", "order status", {"order_id": "A1"})
    first = await service.call("shop", "order status", canon, key, CallContext())
    second = await service.call("shop", "order status", canon, key, CallContext())
    assert (first.provenance, first.slot) == ("hit", (None, "shop", "order status", key, 1, None))
    assert second.slot == (None, "shop", "order status", key, 2, None)


def test_every_violation_names_its_path_and_message(suite: Any) -> None:
    service = create_service(suite)
    with pytest.raises(Rejected) as caught:
        service.canonicalise(*WEATHER, {"days": 0, "units": "kelvin"})
    assert caught.value.extra["violations"] == [
        {"path": "(root)", "message": "'city' is a required property"},
        {"path": "days", "message": "0 is less than the minimum of 1"},
        {"path": "units", "message": "'kelvin' is not one of ['metric', 'imperial']"},
    ]


async def test_an_answer_kept_in_a_shared_overlay_serves_the_other_server(
    suite: Any, tmp_path: Path
) -> None:
    """Two servers on one overlay: what one server's policy made is served by the other from the
    overlay, without asking its own policy."""
    overlay = tmp_path / "overlay.sqlite"
    first, second = _Recorder(_constant), _Recorder(_constant)
    one = create_service(suite, miss_policy=first, overlay=overlay)
    two = create_service(suite, miss_policy=second, overlay=overlay)
    canon, key = one.canonical(*WEATHER, {"city": "Rome"})
    made = await one.call(*WEATHER, canon, key, CallContext())
    served = await two.call(*WEATHER, canon, key, CallContext())
    assert (made.provenance, served.provenance) == ("simulated", "simulated")
    assert served.response == made.response and served.origin == made.origin
    assert (len(first.asked), len(second.asked)) == (1, 0)
    await one.aclose()
    await two.aclose()


async def test_a_recording_that_cannot_be_served_is_the_suite_s_error_and_logged(
    tmp_path: Path, make_suite: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A recording whose response is broken is answered 500 ``bad_recording`` (an infrastructure
    error, never the tool's answer) and logged with the call."""
    broken = {"tool": "shop", "api": "id", "args": {}, "response": {"ok": "maybe"}}
    service = create_service(load_suite(make_suite("broken", recordings=[broken])))
    canon, key = service.canonical("shop", "id", {})
    with caplog.at_level(logging.ERROR, logger="mock_tools.service"):
        outcome = await service.call("shop", "id", canon, key, CallContext())
    assert (outcome.provenance, outcome.code, outcome.status, outcome.infra) == (
        "miss",
        "bad_recording",
        500,
        True,
    )
    assert outcome.response.error.startswith("a recording of this suite cannot be served: ")
    (record,) = caplog.records
    assert record.getMessage().startswith("cannot serve shop/id: ")
    assert record.getMessage().endswith(outcome.response.error.split(": ", 1)[1])


async def test_a_shared_overlay_serves_what_it_holds_whatever_the_policy_now(
    suite: Any, tmp_path: Path
) -> None:
    """A server started later on an overlay with the ``error`` policy serves the answers kept
    there (they are recordings now) and the no-recording error for the rest."""
    overlay = tmp_path / "overlay.sqlite"
    maker = create_service(suite, miss_policy=_Recorder(_constant), overlay=overlay)
    canon, key = maker.canonical(*WEATHER, {"city": "Rome"})
    made = await maker.call(*WEATHER, canon, key, CallContext())
    await maker.aclose()
    later = create_service(suite, overlay=overlay)
    served = await later.call(*WEATHER, canon, key, CallContext())
    assert (served.provenance, served.response) == ("simulated", made.response)
    other, other_key = later.canonical(*WEATHER, {"city": "Lima"})
    assert (await later.call(*WEATHER, other, other_key, CallContext())).provenance == "miss"
    await later.aclose()


NESTED = [
    {
        "name": "finder",
        "apis": [
            {
                "name": "search",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "filter": {
                            "type": "object",
                            "properties": {"min": {"type": "integer", "minimum": 0}},
                        }
                    },
                },
            },
            {
                "name": "odd",
                "parameters": {"type": "object", "properties": {"x": {"type": "nonsense"}}},
            },
        ],
    }
]


def test_a_nested_violation_names_its_path_with_slashes(make_suite: Any) -> None:
    service = create_service(load_suite(make_suite("nested", tools=NESTED, recordings=[])))
    with pytest.raises(Rejected) as caught:
        service.canonicalise("finder", "search", {"filter": {"min": -1}})
    assert caught.value.extra["violations"] == [
        {"path": "filter/min", "message": "-1 is less than the minimum of 0"}
    ]


def test_an_api_whose_schema_is_broken_is_served_unchecked(make_suite: Any) -> None:
    service = create_service(load_suite(make_suite("nested", tools=NESTED, recordings=[])))
    for _ in range(2):
        assert service.canonicalise("finder", "odd", {"x": 5}) == ({"x": 5}, '{"x":5}')
