"""The contracts around step metrics that a user of the API or the CLI meets: what a metric may
declare (and the one-line errors when it declares nonsense), registering a name twice, the
errors of a step selection, which similarity and metrics a run is scored with, and the points
intervals are drawn from."""

from __future__ import annotations

import pytest
from _step_builders import APIS, REF_STEPS, call, chain, make_task, reference_chain
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agents.registry import DuplicateName
from sandbox.errors import ConfigError, RunError
from sandbox.eval.steps import STEP_METRICS, STEP_PROTOCOLS
from sandbox.eval.steps.dimensions import headline_dimensions, step_dimensions
from sandbox.eval.steps.episode import ScoringContext, StepEpisode
from sandbox.eval.steps.measure import Measure
from sandbox.eval.steps.metric import (
    ScoredMetric,
    StepMetric,
    StepMetricError,
    StepProtocol,
    register_step_metric,
    register_step_protocol,
)
from sandbox.eval.steps.selection import StepSelection
from sandbox.eval.steps.step_scores import (
    DIMENSIONS,
    dimension_points,
    measure_points,
    score_episodes,
    score_run,
)


def nothing(episode: StepEpisode, options: BaseModel) -> dict[str, Measure]:
    return {}


def test_a_metric_without_measures_is_refused_by_name() -> None:
    with pytest.raises(StepMetricError) as err:
        StepMetric("empty", "declares nothing", (), nothing)
    assert str(err.value) == "step metric 'empty' declares no measures"


def test_pooled_measures_must_be_among_the_metrics_measures() -> None:
    """Every stray pooled name is listed, sorted."""
    with pytest.raises(StepMetricError) as err:
        StepMetric("m", "s", ("a", "b"), nothing, pooled=("z", "b", "y"))
    assert str(err.value) == "step metric 'm': pooled y, z not among its measures"
    assert StepMetric("m", "s", ("a", "b"), nothing, pooled=("b",)).pooled == ("b",)


def test_the_headline_must_be_one_of_the_measures() -> None:
    with pytest.raises(StepMetricError) as err:
        StepMetric("m", "s", ("a", "b"), nothing, headline="c")
    assert str(err.value) == "step metric 'm': headline 'c' is not one of its measures"
    assert StepMetric("m", "s", ("a", "b"), nothing, headline="b").main_measure == "b"
    assert StepMetric("m", "s", ("a", "b"), nothing).main_measure == "a"


def test_a_taken_name_is_registered_again_only_when_replacing() -> None:
    """A plugin cannot silently shadow a built-in metric or protocol; ``replace=True`` can."""
    plan = STEP_METRICS.get("plan")
    mine = StepMetric("plan", "another plan score", ("plan_f1",), nothing)
    with STEP_METRICS.registered("plan", plan):
        with pytest.raises(DuplicateName, match="step metric 'plan' is already registered"):
            register_step_metric(mine)
        assert STEP_METRICS.get("plan") is plan
        assert register_step_metric(mine, replace=True) is mine
        assert STEP_METRICS.get("plan") is mine
    assert STEP_METRICS.get("plan") is plan
    default = STEP_PROTOCOLS.get("default")
    other = StepProtocol("default", "only instruct", ("instruct",))
    with STEP_PROTOCOLS.registered("default", default):
        with pytest.raises(DuplicateName, match="step protocol 'default' is already registered"):
            register_step_protocol(other)
        assert register_step_protocol(other, replace=True) is other
        assert STEP_PROTOCOLS.get("default") is other
    assert STEP_PROTOCOLS.get("default") is default


def test_a_selection_without_protocols_is_an_error() -> None:
    with pytest.raises(ConfigError) as err:
        StepSelection(protocols=[]).resolve()
    assert str(err.value) == "no step protocol chosen"


def test_options_for_metrics_nothing_runs_are_named() -> None:
    with pytest.raises(ConfigError) as err:
        StepSelection(options={"teval-plan": {}, "answer-length": {}}).resolve()
    assert str(err.value) == (
        "--step-option for step metric(s) answer-length, teval-plan that no chosen step "
        "protocol or --step-metric runs"
    )


class Window(BaseModel):
    model_config = ConfigDict(extra="forbid")
    low: int = Field(default=0, ge=0)
    high: int = Field(default=10, ge=0)
    weights: dict[str, float] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _ordered(self) -> Window:
        if self.low > self.high:
            raise ValueError("low above high")
        return self


WINDOW = StepMetric("window", "a metric with options", ("w",), nothing, options=Window)


def test_bad_options_name_every_problem_on_one_line() -> None:
    """Each field's problem by its name, joined by "; "; a problem of the options as a whole
    (no field) is named ``options``."""
    with STEP_METRICS.registered("window", WINDOW):
        with pytest.raises(ConfigError) as err:
            StepSelection(metrics=["window"], options={"window": {"low": -1, "wide": 1}}).resolve()
        assert str(err.value) == (
            "bad options for step metric 'window': low: Input should be greater than or equal "
            "to 0; wide: Extra inputs are not permitted"
        )
        with pytest.raises(ConfigError) as err:
            StepSelection(metrics=["window"], options={"window": {"low": 5, "high": 1}}).resolve()
        assert str(err.value) == (
            "bad options for step metric 'window': options: Value error, low above high"
        )
        with pytest.raises(ConfigError) as err:
            StepSelection(metrics=["window"], options={"window": {"weights": {"a": "x"}}}).resolve()
        assert str(err.value) == (
            "bad options for step metric 'window': weights.a: Input should be a valid number, "
            "unable to parse string as a number"
        )


class Constant:
    """A thought similarity that scores every pair 0.25 (the lexical one gives 1 for equal
    thoughts, so a run scored without it would show 1)."""

    name = "constant"

    def __call__(self, pred: str, gold: str) -> float:
        return 0.25


REASON = ScoredMetric(STEP_METRICS.get("reason"))
PLAN = ScoredMetric(STEP_METRICS.get("plan"))


def test_a_run_is_scored_with_the_similarity_and_metrics_it_is_given() -> None:
    """score_run / score_episodes pass the similarity to every episode and score only the
    metrics asked for (in the summary too)."""
    tasks = {"t1": make_task()}
    episodes = score_episodes([reference_chain()], tasks, APIS, similarity=Constant())
    assert episodes[0]["reason"] == Measure(value=0.25, n=3)
    summary = score_run([reference_chain()], tasks, APIS, similarity=Constant(), metrics=[REASON])
    assert set(summary.dimensions) == {"reason"}
    assert summary.dimensions["reason"].mean == 0.25
    plain = score_run([reference_chain()], tasks, APIS, metrics=[PLAN])
    assert set(plain.dimensions) == {"plan_precision", "plan_recall", "plan_f1"}
    teval = ScoredMetric(STEP_METRICS.get("teval-instruct"))
    instruct = score_run([reference_chain()], tasks, APIS, metrics=[teval]).dimensions
    assert {d: s.mean for d, s in instruct.items()} == {
        "instruct": 1.0,
        "instruct_format": 1.0,
        "instruct_args_em": 1.0,
    }


def test_an_episode_keeps_its_task_and_trial() -> None:
    second = reference_chain()
    second.trial = 2
    got = score_episodes([reference_chain(), second], {"t1": make_task()}, APIS, metrics=[PLAN])
    assert [(e.scenario_id, e.trial) for e in got] == [("t1", 0), ("t1", 2)]


def undeclared(episode: StepEpisode, options: BaseModel) -> dict[str, Measure]:
    return {"b": Measure(), "zz": Measure(), "a": Measure(), "yy": Measure()}


def test_a_metric_returning_measures_it_did_not_declare_is_named_with_them() -> None:
    """The error lists the stray names sorted and every declared one in its order."""
    liar = ScoredMetric(StepMetric("liar", "s", ("b", "a"), undeclared))
    episode = StepEpisode(reference_chain(), make_task(), ScoringContext(APIS))
    with pytest.raises(StepMetricError) as err:
        liar.measure(episode)
    assert str(err.value) == (
        "step metric 'liar' returned undeclared measure(s) yy, zz; it declares b, a"
    )


def test_a_trajectory_of_a_task_the_suite_lacks_is_named() -> None:
    with pytest.raises(RunError) as err:
        score_episodes([reference_chain()], {}, APIS)
    assert str(err.value) == (
        "trajectory of scenario 't1' has no task in the suite; evaluate the run against the "
        "suite it was made with"
    )


def test_interval_points_are_one_per_episode_unless_pooled() -> None:
    """An episode is one point of its task (a pooled measure: one point per unit)."""
    first = REF_STEPS[0]
    short = chain([(first.thought, [call(first.tool, first.api, first.args)])])
    episodes = score_episodes([reference_chain(), short], {"t1": make_task()}, APIS)
    assert measure_points(episodes, "plan", "plan_precision") == [("t1", 1.0), ("t1", 1.0)]
    pooled = measure_points(episodes, "plan", "plan_precision", pooled=True)
    assert pooled == [("t1", 1.0)] * 4  # 3 calls, then 1
    assert dimension_points(episodes, "plan_recall") == [("t1", 1.0), ("t1", pytest.approx(1 / 3))]


def test_an_unknown_dimension_lists_the_known_ones() -> None:
    """Known: the episodes' measures, or without episodes the default protocol's."""
    episodes = score_episodes([reference_chain()], {"t1": make_task()}, APIS, metrics=[PLAN])
    with pytest.raises(KeyError) as err:
        dimension_points(episodes, "charm")
    assert err.value.args[0] == (
        "unknown step dimension 'charm'; known: plan_f1, plan_precision, plan_recall"
    )
    with pytest.raises(KeyError) as err:
        dimension_points([], "charm")
    assert err.value.args[0] == (
        f"unknown step dimension 'charm'; known: {', '.join(sorted(DIMENSIONS))}"
    )


def test_tables_list_dimensions_in_the_registries_order() -> None:
    """The default protocol's measures in its metrics' order, then every other registered
    metric's as METRIC.MEASURE in registration order, then unknown names alphabetically; the
    compact list keeps each metric's headline measure only."""
    present = {
        "zeta",
        "teval-rru.understand",
        "ultratool-usage.tool_usage",
        "plan_f1",
        "review_no_repeat",
        "teval-rru.reason",
        "alpha",
        "instruct",
        "review_recovery",
        "selection_f1",
        "teval-plan.plan_f1",
    }
    assert step_dimensions(present) == [
        "instruct",
        "selection_f1",
        "plan_f1",
        "review_recovery",
        "review_no_repeat",
        "teval-plan.plan_f1",
        "teval-rru.reason",
        "teval-rru.understand",
        "ultratool-usage.tool_usage",
        "alpha",
        "zeta",
    ]
    assert headline_dimensions(present) == [
        "instruct",
        "selection_f1",
        "plan_f1",
        "review_recovery",
        "teval-plan.plan_f1",
        "teval-rru.understand",
        "ultratool-usage.tool_usage",
    ]


def test_another_step_protocols_measures_are_named_and_ordered_by_the_registries() -> None:
    """A measure of a step protocol other than default is PROTOCOL:MEASURE, listed after the
    default protocol's and the added metrics', in the protocols' and their metrics' order; the
    compact list keeps each of its metrics' headline measure."""
    from sandbox.eval.steps.dimensions import under_protocol

    assert under_protocol("default", "instruct") == "instruct"
    assert under_protocol("teval", "instruct") == "teval:instruct"
    present = {
        "tooleyes:tool_reality",
        "ultratool:tool_usage",
        "teval:reason",
        "teval:instruct_format",
        "teval:instruct",
        "teval-plan.plan_f1",
        "instruct",
        "omega",
    }
    assert step_dimensions(present) == [
        "instruct",
        "teval-plan.plan_f1",
        "teval:instruct",
        "teval:instruct_format",
        "teval:reason",
        "ultratool:tool_usage",
        "tooleyes:tool_reality",
        "omega",
    ]
    assert headline_dimensions(present) == [
        "instruct",
        "teval-plan.plan_f1",
        "teval:instruct",
        "ultratool:tool_usage",
        "tooleyes:tool_reality",
    ]
