"""Probe answers under the reference step protocols, and the two probe scoring bugs fixed.

Expected values are worked by hand from T-Eval's and UltraTool's arithmetic (docs/evaluation.md),
with ``token_cosine``'s word counts for the cosines."""

from __future__ import annotations

import json

import pytest
from _step_builders import APIS
from test_probe import probes

from agents.model import ToolCall, Turn
from mock_tools.names import NameResolver
from sandbox.errors import ConfigError
from sandbox.probe import ProbeItem, score_answer
from sandbox.probe.reference_scoring import probe_protocols
from tests.sandbox.eval.benchmarks.token_cosine import TokenCosine

E = 1e-5
RESOLVER = NameResolver(APIS.keys())


def answer(name: str, args: object, content: str = "") -> Turn:
    text = args if isinstance(args, str) else json.dumps(args)
    return Turn(content=content, tool_calls=[ToolCall(id="1", name=name, arguments=text)])


def score(item: ProbeItem, turn: Turn, *protocols: str) -> dict[str, dict[str, float]]:
    result = score_answer(item, turn, APIS, RESOLVER, TokenCosine(), protocols)
    return {"default": result.scores, **result.protocol_scores}


def test_a_call_with_empty_arguments_to_a_function_without_arguments_is_understood() -> None:
    """Bug: {} was read as "no call" and scored 0; an empty object is a call like any other."""
    step = probes()[2].model_copy(deep=True)
    step.gold["args"] = {}
    got = score(step, answer("get_weather_for_weatherly", {}))["default"]
    assert (got["understand"], got["understand_exact"], got["understand_kv"]) == pytest.approx(
        (1.0, 1.0, 1.0)
    )


def test_no_call_gets_no_credit_for_schema_defaults() -> None:
    """Bug: with no call the gold's defaults (unit=c) matched the defaults filled into nothing,
    0.5; a step no call answered scores 0 on every understand dimension."""
    got = score(probes()[2], Turn(content="I would look up the weather."))["default"]
    assert (got["understand"], got["understand_exact"], got["understand_kv"]) == (0.0, 0.0, 0.0)


def test_teval_scores_a_right_next_step() -> None:
    got = score(
        probes()[0],
        answer("geocode_for_maps", {"address": "Paris"}, "Find where Paris is."),
        "teval",
        "teval-v1",
    )
    perfect = {
        "instruct": 1.0,
        "instruct_format": 1.0,
        "instruct_args_em": 1.0,
        "retrieve": 1.0,
        "rru_parse_rate": 1.0,
        "reason": 1.0,
    }
    assert got["teval"] == pytest.approx({**perfect, "understand": 1 / (1 + E)})
    assert got["teval-v1"] == pytest.approx({**perfect, "understand": 1.0})


def test_teval_scores_a_wrong_next_step() -> None:
    """Another function with the gold's key: name 0, the key's value 1 (str equal)."""
    got = score(
        probes()[2], answer("get_forecast_for_weatherly", {"city": "Paris"}, "Weather."), "teval"
    )
    # thought: {weather} . {get, the, current, weather, in, paris} = 1 / sqrt 6
    assert got["teval"] == pytest.approx(
        {
            "instruct": (1 + 1 / 2) / 2,
            "instruct_format": 1.0,
            "instruct_args_em": 1 / 2,
            "retrieve": 0.0,
            "rru_parse_rate": 1.0,
            "reason": 1 / 6**0.5,
            "understand": 1 / (1 + E),
        }
    )


def test_teval_finish_question_asks_name_and_format_only() -> None:
    got = score(
        probes()[5], answer("Finish", {"return_type": "give_answer", "final_answer": "x"}), "teval"
    )
    assert got["teval"] == {
        "instruct": 1.0,
        "instruct_format": 1.0,
        "instruct_args_em": 1.0,
        "retrieve": 1.0,
        "rru_parse_rate": 1.0,
    }


def test_a_text_reply_is_read_as_t_eval_reads_it() -> None:
    """No call: the answer's text is the reply, which T-Eval cannot read as JSON."""
    got = score(probes()[0], Turn(content="Call geocode_for_maps."), "teval")
    assert got["teval"] == {
        "instruct": 0.0,
        "instruct_format": 0.0,
        "instruct_args_em": 0.0,
        "retrieve": 0.0,
        "rru_parse_rate": 0.0,
        "reason": 0.0,
        "understand": 0.0,
    }


@pytest.mark.parametrize(
    ("turn", "expected"),
    [
        (answer("submit_review", {"verdict": "A"}), (1.0, 1.0)),
        (answer("submit_review", {"verdict": "A Success"}), (1.0, 1.0)),
        (answer("submit_review", {"verdict": "a"}), (0.0, 0.0)),
        (Turn(content="Verdict: B"), (0.0, 1.0)),
        (Turn(content="Verdict: A, it worked"), (1.0, 1.0)),
    ],
    ids=["letter", "letter and words", "lower case", "text, wrong", "text, right"],
)
def test_teval_review_takes_the_first_letter(turn: Turn, expected: tuple[float, float]) -> None:
    got = score(probes()[1], turn, "teval")["teval"]
    assert (got["review"], got["review_parse_rate"]) == expected


def test_teval_plan_by_bertscore_match() -> None:
    plan = probes()[6]
    steps = [{"function": s["function"], "args": s["args"]} for s in plan.gold["steps"]]
    got = score(plan, answer("submit_plan", {"steps": steps}), "teval")["teval"]
    assert got == {
        "plan_precision": 1.0,
        "plan_recall": 1.0,
        "plan_f1": 1.0,
        "plan_parse_rate": 1.0,
    }
    # one step dropped: 2 of 3 in order
    got = score(plan, answer("submit_plan", {"steps": steps[1:]}), "teval")["teval"]
    assert got == pytest.approx(
        {"plan_precision": 1.0, "plan_recall": 2 / 3, "plan_f1": 4 / 5, "plan_parse_rate": 1.0}
    )
    nothing = score(plan, Turn(content="no plan"), "teval")["teval"]
    assert nothing == {"plan_precision": 0, "plan_recall": 0, "plan_f1": 0, "plan_parse_rate": 0}


def test_ultratool_scores_a_next_step_as_a_one_step_sample() -> None:
    got = score(probes()[2], answer("get_weather_for_weatherly", {"city": "Pari"}), "ultratool")
    assert got["ultratool"] == pytest.approx({"tool_usage": 1 - 1 / 5, "tool_selection": 1.0})
    assert score(probes()[5], answer("Finish", {}), "ultratool")["ultratool"] == {}


def test_tooleyes_does_not_score_probe_answers() -> None:
    with pytest.raises(ConfigError, match="'tooleyes' does not score probe answers"):
        probe_protocols(["default", "tooleyes"])
    assert probe_protocols(["default", "teval", "teval"]) == ["teval"]


def test_probe_takes_a_comma_list_of_step_protocols(capsys: pytest.CaptureFixture[str]) -> None:
    """``probe --step-protocol teval,ultratool`` scores under both, as the repeated flag does."""
    from pathlib import Path

    from sandbox.cli import main

    mini = Path(__file__).resolve().parents[2] / "fixtures" / "suites" / "mini"
    argv = ["probe", "--suite", str(mini), "--model", "reference", "--tasks", "mini_u_refund"]
    argv += ["--similarity", "lexical", "--json"]
    assert main([*argv, "--step-protocol", "teval,ultratool"]) == 0
    listed = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert main([*argv, "--step-protocol", "teval", "--step-protocol", "ultratool"]) == 0
    repeated = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert set(listed["step_protocols"]) == {"teval", "ultratool"}
    assert listed["step_protocols"] == repeated["step_protocols"]
