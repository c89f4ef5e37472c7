"""The offline models see a failed call and react as a model would: a transient failure (an
injected fault, a server error, a timeout, a rate limit) is retried with the same arguments, up
to ``MAX_RETRIES`` times, then the model gives up; an error that is the tool's answer is not
retried, and a plan that already retries (a recovery task) is followed as written."""

from __future__ import annotations

import json

import pytest

from agents.model import Message
from agents.models import NoisyReferenceModel, PlanStep, ReferenceModel, ReferencePlan
from agents.models.reference import MAX_RETRIES, transient_error
from agents.toolenv import FINISH_FUNCTION, GIVE_UP, Observation
from agents.trajectory import Node, StepCall, messages_for

SEARCH = ("search_for_flights", '{"origin": "OSL", "destination": "PAR"}')
BOOK = ("book_for_flights", '{"flight_id": "AF12"}')
TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
    for n in (SEARCH[0], BOOK[0])
] + [FINISH_FUNCTION]
PLAN = ReferencePlan(
    steps=[
        PlanStep(function=SEARCH[0], args=json.loads(SEARCH[1]), thought="Search."),
        PlanStep(function=BOOK[0], args=json.loads(BOOK[1]), thought="Book."),
    ],
    answer="Booked AF12.",
)
PROMPT: list[Message] = [{"role": "user", "content": "Book me a flight from Oslo to Paris."}]
OK = '{"error": "", "response": {"flights": ["AF12"]}}'


def result(error: str) -> str:
    return json.dumps({"error": error, "response": ""})


def history(*steps: tuple[tuple[str, str], str]) -> list[Message]:
    nodes = []
    for i, ((name, args), content) in enumerate(steps):
        obs = Observation(ok=content == OK, content=content)
        call = StepCall(id=f"call_{i}", name=name, arguments=args, observation=obs)
        nodes.append(Node(id=i, parent=i - 1 if i else None, kind="action", calls=[call]))
    return messages_for(PROMPT, nodes)


@pytest.mark.parametrize(
    "error",
    [
        "injected fault: internal server error",
        "injected fault: rate limit exceeded, retry later",
        "injected fault: the tool timed out",
        "the tool answered HTTP 200 with an empty body",
        "the tool answered HTTP 200 with a malformed body (not JSON)",
        "503 service temporarily unavailable",
    ],
)
async def test_a_transient_failure_is_retried_with_the_same_arguments(error: str) -> None:
    turn = await ReferenceModel(PLAN).complete(history((SEARCH, result(error))), TOOLS)
    (call,) = turn.tool_calls
    assert (call.name, json.loads(call.arguments)) == (SEARCH[0], json.loads(SEARCH[1]))
    assert "try it again" in (turn.content or "")


async def test_after_the_last_retry_the_model_gives_up_then_a_success_moves_on() -> None:
    failing = [(SEARCH, result("injected fault: the tool timed out"))] * (MAX_RETRIES + 1)
    turn = await ReferenceModel(PLAN).complete(history(*failing), TOOLS)
    (call,) = turn.tool_calls
    assert call.name == "Finish" and json.loads(call.arguments)["return_type"] == GIVE_UP
    recovered = [*failing[:MAX_RETRIES], (SEARCH, OK)]
    turn = await ReferenceModel(PLAN).complete(history(*recovered), TOOLS)
    assert turn.tool_calls[0].name == BOOK[0]


async def test_an_error_that_is_the_tools_answer_is_not_retried() -> None:
    for error in ("404 not found: flight 'SX999'", "no recording for flights/search"):
        turn = await ReferenceModel(PLAN).complete(history((SEARCH, result(error))), TOOLS)
        assert turn.tool_calls[0].name == BOOK[0]


async def test_a_plan_that_retries_itself_is_followed_as_written() -> None:
    plan = PLAN.model_copy(update={"steps": [PLAN.steps[0], PLAN.steps[0], PLAN.steps[1]]})
    failed = history((SEARCH, result("500 internal error: please retry")))
    turn = await ReferenceModel(plan).complete(failed, TOOLS)
    assert turn.tool_calls[0].name == SEARCH[0] and turn.content == "Search."  # the plan's turn


async def test_the_noisy_model_reacts_the_same_way_when_it_makes_no_mistake() -> None:
    model = NoisyReferenceModel(PLAN, rate=0.0, seed=0, task_id="t")
    turn = await model.complete(history((SEARCH, result("injected fault: empty body"))), TOOLS)
    assert turn.tool_calls[0].name == SEARCH[0] and "try it again" in (turn.content or "")


def test_what_reads_as_transient() -> None:
    assert transient_error(result("HTTP 502")) == "HTTP 502"
    assert transient_error(result('no recording for a/b with arguments {"q": "timeout"}')) is None
    assert transient_error(OK) is None and transient_error("not json") is None
