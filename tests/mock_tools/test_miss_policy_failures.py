"""A miss policy is plugin code: what it raises or returns against its contract is the policy's
defect, answered as an infrastructure error of the call (500, ``miss_policy_error``, ``infra``),
never the tool's answer and never an exception out of the service (issue 39 item 1)."""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

import pytest

from mock_tools import Response
from mock_tools.errors import MockToolsError
from mock_tools.miss import MISS_POLICIES, ErrorPolicy, Miss, MissAnswer, build_miss_policy
from mock_tools.plugins import PluginFailed, plugin_code, raised_text
from mock_tools.service import CallContext, create_service

WEATHER = ("Weather Now", "current")


class _Answers:
    """A policy whose answer is ``make()`` (raising what it raises)."""

    name = "answers"
    records = False

    def __init__(self, make: Any) -> None:
        self.make = make
        self.closed = False

    async def answer(self, miss: Miss) -> Any:
        return self.make()

    async def aclose(self) -> None:
        self.closed = True


def _raise(e: BaseException) -> Any:
    def make() -> Any:
        raise e

    return make


async def _outcome(suite: Any, make: Any) -> Any:
    service = create_service(suite, miss_policy=_Answers(make))
    canon, key = service.canonical(*WEATHER, {"city": "Nowhere-at-all"})
    return await service.call(*WEATHER, canon, key, CallContext())


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (_raise(ValueError("boom")), "miss policy 'answers' raised ValueError: boom"),
        (_raise(SystemExit(0)), "miss policy 'answers' raised SystemExit: 0"),
        (_raise(KeyboardInterrupt()), "miss policy 'answers' raised KeyboardInterrupt"),
        (_raise(asyncio.CancelledError()), "raised CancelledError of its own"),
        (lambda: "text", "miss policy 'answers' returned str, not a MissAnswer or None"),
        (lambda: {"ok": True}, "returned dict, not a MissAnswer or None"),
        (lambda: MissAnswer({"x": 1}, "simulated"), "whose response is a dict"),  # type: ignore[arg-type]
        (lambda: MissAnswer(Response(), 7), "whose response is a Response"),  # type: ignore[arg-type]
        (
            lambda: MissAnswer(Response(), "simulated", record_as="tape"),  # type: ignore[arg-type]
            "with record_as 'tape' and status 200",
        ),
        (lambda: MissAnswer(Response(), "simulated", status=999), "status 999"),
        (lambda: MissAnswer(Response(), "simulated", status=99), "status 99"),
    ],
)
async def test_what_a_policy_raises_or_returns_wrong_is_an_infrastructure_error_of_the_call(
    suite: Any, make: Any, said: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="mock_tools.service"):
        outcome = await _outcome(suite, make)
    assert (outcome.status, outcome.code, outcome.infra) == (500, "miss_policy_error", True)
    assert outcome.response.ok is False and outcome.provenance == "miss"
    assert outcome.response.error == f"the miss policy failed: {said}" or (
        outcome.response.error.startswith("the miss policy failed: miss policy 'answers'")
        and said in outcome.response.error
    )
    assert said in caplog.text


@pytest.mark.parametrize(
    "make",
    [
        lambda: None,
        lambda: MissAnswer(Response(body={"t": 1}), "simulated"),
        lambda: MissAnswer(Response(body={"t": 1}), "simulated", status=100),
        lambda: MissAnswer(Response(body={"t": 1}), "simulated", status=599),
        lambda: MissAnswer(Response(body={"t": 1}), "simulated", record_as="upstream"),
    ],
)
async def test_what_a_policy_may_answer_is_served(suite: Any, make: Any) -> None:
    outcome = await _outcome(suite, make)
    assert outcome.code != "miss_policy_error" and not outcome.infra


async def test_a_cancellation_from_outside_still_cancels_the_call(suite: Any) -> None:
    started = asyncio.Event()

    class Slow(ErrorPolicy):
        name = "slow"

        async def answer(self, miss: Miss) -> Any:
            started.set()
            await asyncio.sleep(3600)

    service = create_service(suite, miss_policy=Slow(ErrorPolicy.Options()))
    canon, key = service.canonical(*WEATHER, {"city": "Nowhere-at-all"})
    call = asyncio.ensure_future(service.call(*WEATHER, canon, key, CallContext()))
    await started.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call


async def test_closing_a_policy_that_raises_is_logged_and_the_service_closes(
    suite: Any, caplog: pytest.LogCaptureFixture
) -> None:
    class Closes(ErrorPolicy):
        name = "closes"

        async def aclose(self) -> None:
            sys.exit(4)

    service = create_service(suite, miss_policy=Closes(ErrorPolicy.Options()))
    with caplog.at_level(logging.ERROR, logger="mock_tools.service"):
        await service.aclose()
    assert "miss policy 'closes' (closing) raised SystemExit: 4" in caplog.text


def test_a_policy_that_raises_while_built_is_one_error_naming_it() -> None:
    class Fails(ErrorPolicy):
        name = "fails-to-build"

        def __init__(self, options: Any) -> None:
            raise RuntimeError("no")

    from mock_tools.miss import policy_kind

    with (
        MISS_POLICIES.registered("fails-to-build", policy_kind(Fails)),
        pytest.raises(PluginFailed, match=r"^miss policy 'fails-to-build' raised "),
    ):
        build_miss_policy("fails-to-build")


def test_plugin_code_lets_the_library_s_own_errors_through_and_names_the_rest() -> None:
    with pytest.raises(MockToolsError, match="^said already$"), plugin_code("p"):
        raise MockToolsError("said already")
    with (
        pytest.raises(PluginFailed, match=r"^p raised ZeroDivisionError: division by zero$"),
        plugin_code("p"),
    ):
        1 / 0  # noqa: B018
    assert raised_text(ValueError("a\nb")) == "ValueError: a"
    assert raised_text(KeyboardInterrupt()) == "KeyboardInterrupt"
