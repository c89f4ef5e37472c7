"""A step metric of the user's own is plugin code (issue 39 item 1): what its ``score`` raises,
``SystemExit`` included, and what it returns that is no mapping of measures in [0, 1], is a
``StepMetricError`` naming it (one line, exit 2); the project's own metrics are called as they
are."""

from __future__ import annotations

import math
import sys
from typing import Any

import pytest
from _step_builders import APIS, make_task, reference_chain
from pydantic import BaseModel

from sandbox.eval.steps.episode import ScoringContext, StepEpisode
from sandbox.eval.steps.measure import Measure
from sandbox.eval.steps.metric import ScoredMetric, StepMetric, StepMetricError


def _episode() -> StepEpisode:
    return StepEpisode(reference_chain(), make_task(), ScoringContext(APIS))


def _metric(score: Any) -> ScoredMetric:
    return ScoredMetric(StepMetric("mine", "s", ("a", "b"), score))


def _exits(episode: StepEpisode, options: BaseModel) -> Any:
    sys.exit(0)


@pytest.mark.parametrize(
    ("score", "said"),
    [
        (lambda e, o: 1 / 0, "step metric 'mine' raised ZeroDivisionError: division by zero"),
        (_exits, "step metric 'mine' raised SystemExit: 0"),
        (lambda e, o: None, "step metric 'mine' returned NoneType, not a mapping of measures"),
        (lambda e, o: [Measure()], "returned list, not a mapping of measures"),
        (lambda e, o: {"a": 0.5}, "broke its contract: measure 'a' is a float, not a Measure"),
        (lambda e, o: {"a": Measure(value=1.5, n=1)}, "measure 'a' is 1.5, not a number in [0, 1]"),
        (lambda e, o: {"b": Measure(value=-0.1, n=1)}, "measure 'b' is -0.1, not a number"),
        (lambda e, o: {"a": Measure(value=math.nan, n=1)}, "measure 'a' is nan, not a number"),
        (lambda e, o: {"a": Measure(value=math.inf, n=1)}, "measure 'a' is inf, not a number"),
    ],
)
def test_what_a_foreign_metric_raises_or_returns_wrong_is_one_error_naming_it(
    score: Any, said: str
) -> None:
    with pytest.raises(StepMetricError) as err:
        _metric(score).measure(_episode())
    assert said in str(err.value) and str(err.value).startswith("step metric 'mine' ")


@pytest.mark.parametrize(
    ("got", "want"),
    [
        ({"a": Measure(value=0.0, n=1), "b": Measure(value=1.0, n=2)}, (0.0, 1.0)),
        ({"b": Measure(value=0.25, n=1)}, (None, 0.25)),
        ({"a": Measure(), "b": Measure(value=1, n=1)}, (None, 1.0)),
    ],
)
def test_measures_within_the_contract_are_kept(got: dict[str, Measure], want: tuple) -> None:
    measured = _metric(lambda e, o: got).measure(_episode())
    assert (measured["a"].value, measured["b"].value) == want
