"""Step metrics and step protocols by name: ``--step-metric`` adds a registered metric whose
measures land under its own key (the default step scores untouched), ``--step-protocol`` scores
under another registered protocol, and bad names or options are one-line errors (exit 2)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from outcome_builders import add_call, make_run, make_suite, traj, two_answers
from pydantic import BaseModel, Field

from agents.trajectory import Status
from sandbox.cli import main
from sandbox.compare.comparison import compare_runs
from sandbox.errors import ConfigError
from sandbox.eval.evaluate import evaluate_run
from sandbox.eval.report import scores_json
from sandbox.eval.steps.episode import StepEpisode
from sandbox.eval.steps.measure import Measure
from sandbox.eval.steps.metric import (
    STEP_METRICS,
    STEP_PROTOCOLS,
    StepMetric,
    StepMetricError,
    StepProtocol,
)
from sandbox.eval.steps.selection import StepSelection


class LengthOptions(BaseModel):
    max_chars: int = Field(default=100, gt=0)


def answer_length(episode: StepEpisode, options: LengthOptions) -> dict[str, Measure]:
    answer = episode.traj.final_answer
    if answer is None:
        return {}
    return {"answer_length": Measure(value=min(1.0, len(answer) / options.max_chars), n=1)}


LENGTH = StepMetric(
    "answer-length",
    "final answer length over max_chars, at most 1",
    ("answer_length",),
    answer_length,
    options=LengthOptions,
)


def calls(episode: StepEpisode, options: BaseModel) -> dict[str, Measure]:
    return {"calls": Measure(value=1.0 if episode.actions else 0.0, n=len(episode.actions))}


CALLS = StepMetric("called", "the episode called a tool", ("calls",), calls)
MINE = StepProtocol("mine", "instruct and whether a tool was called", ("instruct", "called"))


@contextmanager
def registered() -> Iterator[None]:
    with ExitStack() as stack:
        stack.enter_context(STEP_METRICS.registered(LENGTH.name, LENGTH))
        stack.enter_context(STEP_METRICS.registered(CALLS.name, CALLS))
        stack.enter_context(STEP_PROTOCOLS.registered(MINE.name, MINE))
        yield


@pytest.fixture
def run(tmp_path: Path) -> Path:
    suite = make_suite(tmp_path / "suite")
    return make_run(
        tmp_path / "runs",
        suite,
        "cand",
        [
            *two_answers(),
            traj("impossible", status=Status.gave_up, give_up_text="No API.", answer=None),
        ],
    )


def test_an_added_metric_lands_under_its_own_key_and_leaves_the_default_scores_alone(
    run: Path,
) -> None:
    plain = json.loads(scores_json(evaluate_run(run)))
    assert "step_protocols" not in plain and "metrics" not in plain["step_scores"]
    with registered():
        argv = ["eval", str(run), "--no-plots", "--step-metric", "answer-length"]
        assert main([*argv, "--step-option", "answer-length.max_chars=20"]) == 0
    written = json.loads((run / "scores.json").read_text(encoding="utf-8"))
    added = written["step_scores"].pop("metrics")
    assert written == plain  # everything else byte for byte what the default gives
    length = added["answer-length"]
    assert length["options"] == {"max_chars": 20}
    assert length["dimensions"]["answer_length"] == {"mean": 0.475, "n": 2, "units": 2}
    assert length["intervals"]["answer_length"]["n"] == 2
    report = (run / "report.md").read_text(encoding="utf-8")
    assert "| answer-length.answer_length | 47.5% [" in report


def test_another_step_protocol_is_kept_under_its_name(run: Path) -> None:
    with registered():
        both = evaluate_run(run, steps=StepSelection(protocols=["default", "mine"]))
        only = evaluate_run(run, steps=StepSelection(protocols=["mine"]))
    assert both.step_scores is not None and list(both.step_protocols) == ["mine"]
    mine = both.step_protocols["mine"]
    assert list(mine.intervals) == ["instruct", "calls"]
    assert mine.summary["dimensions"]["calls"]["mean"] == pytest.approx(2 / 3)
    assert mine.intervals["instruct"] == both.step_scores.intervals["instruct"]
    assert only.step_scores is None and list(only.step_protocols) == ["mine"]
    data = json.loads(scores_json(only))
    assert data["step_scores"] is None and set(data["step_protocols"]) == {"mine"}


@pytest.mark.parametrize(
    "flags,message",
    [
        (["--step-metric", "nope"], "unknown step metric 'nope'; known: instruct, selection"),
        (["--step-protocol", "nope"], "unknown step protocol 'nope'; known: default"),
        (
            ["--step-metric", "answer-length", "--step-option", "answer-length.max_chars=0"],
            "bad options for step metric 'answer-length': max_chars: Input should be greater",
        ),
        (["--step-option", "plan.depth=2"], "bad options for step metric 'plan': depth: Extra"),
        (["--step-option", "answer-length.max_chars=9"], "no chosen step protocol or"),
        (["--step-option", "max_chars=9"], "expected METRIC.KEY=VALUE"),
    ],
)
def test_bad_step_names_and_options_are_one_line_errors(
    run: Path, flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with registered():
        code = main(["eval", str(run), "--no-plots", *flags])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_protocol_whose_metrics_name_a_measure_alike_is_refused() -> None:
    twin = StepMetric("twin", "another instruct", ("instruct",), calls)
    clash = StepProtocol("clash", "two metrics, one measure name", ("instruct", "twin"))
    with (
        STEP_METRICS.registered("twin", twin),
        STEP_PROTOCOLS.registered("clash", clash),
        pytest.raises(ConfigError, match="both name a measure 'instruct'"),
    ):
        StepSelection(protocols=["clash"]).resolve()


def test_a_metric_that_returns_an_undeclared_measure_is_named(run: Path) -> None:
    liar = StepMetric("liar", "declares one, returns another", ("a",), calls)
    with (
        STEP_METRICS.registered("liar", liar),
        pytest.raises(StepMetricError, match="step metric 'liar' returned undeclared"),
    ):
        evaluate_run(run, steps=StepSelection(metrics=["liar"]))


def test_compare_holds_step_scores_only_when_asked(tmp_path: Path, run: Path) -> None:
    other = make_run(
        tmp_path / "runs",
        run.parent.parent / "suite",
        "other",
        [traj("add", answer="5", calls=[[add_call(2, 3)]], run_id="other")],
    )
    assert all(not s.step_scores for s in compare_runs([run, other]).strategies)
    with registered():
        asked = compare_runs([run, other], steps=StepSelection(metrics=["answer-length"]))
    for s in asked.strategies:
        assert list(s.step_scores) == ["default"]
        assert list(s.step_scores["default"].metrics) == ["answer-length"]
    eval_scores = evaluate_run(run).step_scores
    assert eval_scores is not None
    assert asked.strategies[0].step_scores["default"].intervals == eval_scores.intervals
