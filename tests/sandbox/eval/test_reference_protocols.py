"""The reference step protocols on episodes: how a trajectory becomes each benchmark's inputs.

T-Eval's questions are asked by position (the k-th turn answers the k-th reference step, the
turn after the last one the Finish question), UltraTool's labels are positions, ToolEyes reads
the chosen path as its ReAct conversation; question-level measures are pooled over questions.
Expected values are worked by hand (cosines by ``token_cosine``'s word counts)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from _step_builders import APIS, REF_STEPS, call, chain, make_task, reference_chain
from outcome_builders import make_run, make_suite, two_answers

from agents.trajectory import Status, Trajectory
from sandbox.cli import main
from sandbox.eval.evaluate import evaluate_run
from sandbox.eval.report import scores_json
from sandbox.eval.steps import STEP_METRICS
from sandbox.eval.steps.episode import ScoringContext, StepEpisode
from sandbox.eval.steps.metric import ScoredMetric
from sandbox.eval.steps.step_scores import score_episode, score_episodes, summarise_measures
from sandbox.eval.steps.tooleyes_metrics import conversation
from tests.sandbox.eval.benchmarks.token_cosine import TokenCosine

E = 1e-5


def scores(traj_: Trajectory, *metrics: str, task=None) -> dict[str, float | None]:  # noqa: ANN001
    chosen = [ScoredMetric(STEP_METRICS.get(m), STEP_METRICS.get(m).options()) for m in metrics]
    ctx = ScoringContext(APIS, TokenCosine())
    got = score_episode(traj_, task or make_task(), APIS, context=ctx, metrics=chosen)
    return {d: m.value for d, m in got.dimensions().items()}


def skipped_first() -> Trajectory:
    """The agent leaves out the first reference step (geocode)."""
    return chain([(s.thought, [call(s.tool, s.api, s.args)]) for s in REF_STEPS[1:]])


def test_teval_on_the_reference_path_scores_its_perfect_marks() -> None:
    """Every question answered as the reference does: 1 everywhere but understand's 1e-5."""
    got = scores(reference_chain(), "teval-instruct", "teval-rru", "teval-plan")
    understand = (1 / (1 + E) + 1 / (1 + E) + 2 / (2 + E)) / 3
    expected = {
        "instruct": 1.0,
        "instruct_format": 1.0,
        "instruct_args_em": 1.0,
        "reason": 1.0,
        "retrieve": 1.0,
        "understand": understand,
        "rru_parse_rate": 1.0,
        "plan_f1": 1.0,
        "plan_precision": 1.0,
        "plan_recall": 1.0,
        "plan_parse_rate": 1.0,
    }
    assert got == pytest.approx(expected)


def test_teval_asks_its_questions_by_position() -> None:
    """A skipped first step shifts every later turn onto the wrong question, as T-Eval's
    teacher forcing would count it; the Finish question then has no turn (an empty reply)."""
    got = scores(skipped_first(), "teval-instruct", "teval-rru")
    reason = (1 / (2 * math.sqrt(6)) + 3 / math.sqrt(42) + 0) / 3
    assert got == pytest.approx(
        {
            "instruct": (0.5 + 0.75 + 0.5 + 0) / 4,
            "instruct_format": 3 / 4,
            "instruct_args_em": (0 + 1 / 2 + 0 + 0) / 4,
            "reason": reason,
            "retrieve": 0.0,
            "understand": (1 / (1 + E)) / 3,
            "rru_parse_rate": 3 / 4,
        }
    )


def test_teval_v1_understands_by_the_cosine_of_the_argument_text() -> None:
    """December 2023's understand: str() of both argument objects, compared by the encoder."""
    got = scores(skipped_first(), "teval-v1-rru")
    # {address, paris} . {city, paris} = 1/2; {city, paris} . {city, paris, days, 3} = 2 / 2 sqrt 2;
    # {city, paris, days, 3} . {return_type, give_answer, final_answer, sunny, 20c} = 0
    assert got["understand"] == pytest.approx((1 / 2 + 1 / math.sqrt(2) + 0) / 3)


def test_teval_measures_are_pooled_over_questions() -> None:
    """The run's figure is the mean over all questions (T-Eval's over its samples), so an
    episode with more reference steps weighs more."""
    short = make_task([REF_STEPS[0]], id="t2")
    wrong = chain([(REF_STEPS[0].thought, [call("maps", "geocode", {"address": "Rome"})])])
    wrong.scenario_id = "t2"
    metric = ScoredMetric(STEP_METRICS.get("teval-instruct"))
    episodes = score_episodes(
        [reference_chain(), wrong], {"t1": make_task(), "t2": short}, APIS, metrics=[metric]
    )
    summary = summarise_measures(episodes, [metric])
    # 4 questions at 1, then 2 questions at 1/2 (geocode with another value) and 1 (Finish)
    assert summary["instruct_args_em"].mean == pytest.approx((4 * 1 + 1 / 2 + 1) / 6)
    assert summary["instruct_args_em"].units == 6


def test_ultratool_labels_calls_by_position() -> None:
    """The k-th call is record k+1: the skipped step shifts the pairs, the tool is ignored."""
    got = scores(skipped_first(), "ultratool-usage", "ultratool-selection")
    assert got == pytest.approx(
        {"tool_usage": (0 + 1 + 0) / 3, "tool_selection_global": 0.0, "tool_selection_local": 0.0}
    )
    perfect = scores(reference_chain(), "ultratool-usage", "ultratool-selection")
    assert perfect == pytest.approx(
        {"tool_usage": 1.0, "tool_selection_global": 1.0, "tool_selection_local": 1.0}
    )


def test_a_task_without_reference_steps_is_no_benchmark_sample() -> None:
    """No reference steps: T-Eval and UltraTool do not apply (no value, not a zero)."""
    got = scores(reference_chain(), "teval-instruct", "ultratool-usage", task=make_task([]))
    assert set(got.values()) == {None}


def _episode(traj_: Trajectory) -> StepEpisode:
    return StepEpisode(traj_, make_task(), ScoringContext(APIS, TokenCosine()))


def test_tooleyes_reads_the_path_as_its_react_conversation() -> None:
    """Each turn as Thought/Action/Action Input with its observation after it."""
    messages = conversation(_episode(reference_chain()))
    assert [m["from"] for m in messages] == ["system", "user"] + ["assistant", "function"] * 3 + [
        "assistant"
    ]
    assert messages[2]["value"] == (
        "Thought: Find where Paris is.\nAction: geocode_for_maps\n"
        'Action Input: {"address": "Paris"}'
    )
    got = scores(reference_chain(), "tooleyes-format", "tooleyes-selection")
    assert got == pytest.approx(
        {
            "format_alignment": 1.0,
            "answer_pass": 1.0,
            "neat_json_err": 0.0,
            "neat_react_err": 0.0,
            "tool_reality": 1.0,
        }
    )


def test_tooleyes_counts_json_constants_as_a_format_error() -> None:
    """ToolEyes evaluates Action Input as Python: a JSON true fails the format there."""
    raw = '{"city": "Paris", "flag": true}'
    episode = chain([("Weather.", [call("weatherly", "get_weather", raw=raw)])])
    got = scores(episode, "tooleyes-format", "tooleyes-selection")
    assert got["format_alignment"] == pytest.approx(1 / 2)
    assert got["neat_json_err"] == pytest.approx(1 / 2)
    assert got["tool_reality"] == 0.0  # no reply left to check: ToolEyes' 0


def test_tooleyes_ends_a_budget_exhausted_episode_with_its_forced_ending() -> None:
    """Out of budget: ToolEyes' "trying too many times" ending, which fails answer_pass."""
    first = REF_STEPS[0]
    episode = chain(
        [(first.thought, [call(first.tool, first.api, first.args)])],
        status=Status.budget_exhausted,
        finish=False,
    )
    assert "trying too many times" in conversation(_episode(episode))[-1]["value"]
    got = scores(episode, "tooleyes-format")
    assert (got["format_alignment"], got["answer_pass"]) == (1 / 2, 0.0)


@pytest.fixture
def run(tmp_path: Path) -> Path:
    suite = make_suite(tmp_path / "suite")
    return make_run(tmp_path / "runs", suite, "cand", two_answers())


def test_reference_protocols_land_beside_the_default_scores(run: Path) -> None:
    """--step-protocol teval/ultratool/tooleyes: each under step_protocols.NAME; the default
    step scores stay byte for byte what they were."""
    plain = json.loads(scores_json(evaluate_run(run)))
    flags = ["--step-protocol", "default"]
    for name in ("teval", "teval-v1", "ultratool", "tooleyes"):
        flags += ["--step-protocol", name]
    assert main(["eval", str(run), "--no-plots", *flags]) == 0
    written = json.loads((run / "scores.json").read_text(encoding="utf-8"))
    protocols = written.pop("step_protocols")
    assert written == plain
    assert set(protocols) == {"teval", "teval-v1", "ultratool", "tooleyes"}
    assert "understand" in protocols["teval"]["intervals"]
    assert "tool_usage" in protocols["ultratool"]["intervals"]
    assert "format_alignment" in protocols["tooleyes"]["intervals"]
    report = (run / "report.md").read_text(encoding="utf-8")
    assert "## Step-level scores (step protocol teval)" in report


def test_a_comma_list_of_step_protocols_is_the_repeated_flag(run: Path) -> None:
    """--step-protocol teval,ultratool scores what --step-protocol teval --step-protocol
    ultratool scores (it was refused as one unknown name)."""
    assert main(["eval", str(run), "--no-plots", "--step-protocol", "teval, ultratool"]) == 0
    written = json.loads((run / "scores.json").read_text(encoding="utf-8"))
    assert set(written["step_protocols"]) == {"teval", "ultratool"}
    assert "step_scores" not in written or written["step_scores"] is None
    repeated = json.dumps(written["step_protocols"], sort_keys=True)
    flags = ["--step-protocol", "teval", "--step-protocol", "ultratool"]
    assert main(["eval", str(run), "--no-plots", *flags]) == 0
    again = json.loads((run / "scores.json").read_text(encoding="utf-8"))
    assert json.dumps(again["step_protocols"], sort_keys=True) == repeated
