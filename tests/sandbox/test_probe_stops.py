"""Which failed answer stops ``sandbox probe`` (``stops_the_probe``): one that every other
question would meet too. The command-level behaviour (one line, exit 2, no other question asked)
is pinned by ``tests/hostile/test_ports_and_servers.py::test_39_5_...``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agents.errors import ModelError
from agents.models.openai_errors import EndpointError
from sandbox.errors import EndpointConfigError
from sandbox.probe.questions import ProbeItem
from sandbox.probe.runner import run_probe, stops_the_probe


def _raised(kind: str, cause: BaseException | None) -> ModelError:
    error = EndpointError("the endpoint answered", kind=kind)
    error.__cause__ = cause
    return error


NOT_JSON = json.JSONDecodeError("Expecting value", "<html>a proxy</html>", 0)
NOT_UTF8 = UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")


@pytest.mark.parametrize(
    ("error", "stops"),
    [
        (ModelError("401", kind="auth"), True),
        (ModelError("no such model", kind="model_not_found"), True),
        (_raised("malformed", NOT_JSON), True),
        (_raised("malformed", NOT_UTF8), True),
        (_raised("malformed", None), False),  # JSON, but no completion: this question's
        (_raised("malformed", RecursionError()), False),  # JSON nested too deep
        (_raised("server", NOT_JSON), False),  # a 5xx page: transient, retried, not the probe's end
        (_raised("timeout", None), False),
        (ModelError("context", kind="context_length"), False),
    ],
)
def test_only_an_answer_no_question_can_get_past_stops_the_probe(
    error: ModelError, stops: bool
) -> None:
    assert stops_the_probe(error) is stops


class _Endpoint:
    """A model whose every call raises ``error`` after a short wait; it counts the calls."""

    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.calls = 0

    async def complete(self, *_: Any) -> Any:
        self.calls += 1
        await asyncio.sleep(0.01)
        raise self.error


def _items(n: int) -> list[ProbeItem]:
    return [
        ProbeItem(task_id="t", kind="plan", index=i, messages=[], tools=[], gold={})
        for i in range(n)
    ]


def _probe(endpoint: _Endpoint, n: int, concurrency: int) -> Any:
    return asyncio.run(
        run_probe(_items(n), lambda _: endpoint, {}, concurrency=concurrency)  # type: ignore[arg-type]
    )


def test_the_probe_stops_at_the_first_such_answer_and_asks_no_other_question() -> None:
    endpoint = _Endpoint(_raised("malformed", NOT_JSON))
    with pytest.raises(EndpointConfigError) as stopped:
        _probe(endpoint, 6, concurrency=2)
    assert endpoint.calls == 2  # the two in flight; the four waiting were never asked
    said = str(stopped.value)
    assert said.startswith("the model endpoint does not answer as an OpenAI-compatible chat")
    assert said.endswith("the probe stopped (0 of 6 questions answered)")
    assert stopped.value.exit_code == 2


def test_an_answer_that_stops_nothing_is_that_questions_error() -> None:
    endpoint = _Endpoint(_raised("server", None))
    report = _probe(endpoint, 3, concurrency=2)
    assert endpoint.calls == 3 and report.errors == 3


def test_a_failure_of_the_probe_itself_is_raised_as_it_is() -> None:
    """Only a stop becomes the one line; any other exception is not disguised as one."""
    with pytest.raises(KeyError, match="a bug"):
        _probe(_Endpoint(KeyError("a bug")), 3, concurrency=1)
