"""``sandbox rescore --teval/--ultratool/--tooleyes``: another benchmark's own prediction files
(small fixtures of their layouts, ``tests/fixtures/benchmarks/``) scored by its arithmetic and
printed as its table. Expected figures are worked by hand from each fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox.cli import main

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "benchmarks"
E = 1e-5


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["rescore", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_teval_files_give_teval_figures_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    """Every file scored as its evaluator scores it, then convert_results' table. The fixture's
    cosines are between identical texts or texts without a common character, so the lexical
    backend gives what any encoder does."""
    data = _json(capsys, "--teval", str(FIXTURES / "teval"), "--reason-similarity", "lexical")
    mini = data["models"]["mini"]
    results = mini["results"]
    assert results["instruct_json"] == {
        "json_format_metric": 1.0,  # both JSON replies read
        "json_args_em_metric": 0.75,  # (2/2 + 1/2) / 2
        "string_format_metric": 0.5,  # one of two string replies matches the template
        "string_args_em_metric": 0.5,
    }
    assert results["plan_json"]["f1_score"] == pytest.approx((1 + 1 / 2) / 2)
    assert results["plan_str"] == pytest.approx(
        {"precision": 0.5, "recall": 0.5, "f1_score": 0.5, "parse_rate": 0.5}
    )
    assert results["rru_json"] == pytest.approx(
        {"thought": 0.5, "name": 0.5, "args": 0.5 / (1 + E), "parse_rate": 0.5}
    )
    assert results["review_str"] == {"parse_rate": 1.0, "review_quality": 0.5}
    rows = {
        "Instruct": ((1 + 0.75) / 2 + (0.5 + 0.5) / 2) / 2,
        "Plan": (0.5 + 0.75) / 2,
        "Reason": 0.5,
        "Retrieve": 0.5,
        "Understand": (0.5 + 0.5 / (1 + E)) / 2,
        "Review": 0.5,
    }
    overall = sum(rows.values()) / 6
    assert mini["table"] == pytest.approx({"Overall": overall, **rows})
    assert data["similarity"] == "lexical"


def test_the_teval_table_prints_as_convert_results(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["rescore", "--teval", str(FIXTURES / "teval"), "--reason-similarity", "lexical"]) == 0
    )
    out = capsys.readouterr().out
    assert "T-Eval: mini" in out and "68.8" in out and "62.5" in out


def test_a_missing_file_leaves_its_dimensions_nan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only the review file: every other dimension, and the overall mean, is not available."""
    (tmp_path / "review_str_m.json").write_bytes(
        (FIXTURES / "teval" / "review_str_mini.json").read_bytes()
    )
    table = _json(capsys, "--teval", str(tmp_path), "--reason-similarity", "lexical")["models"][
        "m"
    ]["table"]
    assert table["Review"] == 0.5 and table["Overall"] is None and table["Plan"] is None


def test_ultratool_files_give_ultratools_figures(capsys: pytest.CaptureFixture[str]) -> None:
    """tool_usage: (path 1, "hi"/"hello" 1 - 4/5) / 2, then x\\_y unescaped 1, a missing step 0:
    flat (0.6 + 1 + 0) / 3; selection: [a, c] for [a, b], an unreadable reply for [d];
    awareness: [0, 1] right, [0] for [1]."""
    mini = _json(capsys, "--ultratool", str(FIXTURES / "ultratool"))["models"]["mini"]
    assert mini["tool_usage"]["local"] == round((0.6 + 1 + 0) / 3, 4)
    assert (mini["tool_selection"]["global_"], mini["tool_selection"]["local"]) == (0.0, 0.3333)
    assert mini["tool_selection"]["bad_json"] == 1
    awareness = mini["tool_usage_awareness"]
    assert (awareness["global_"], awareness["local"]) == (0.5, 0.6667)


def test_tooleyes_output_gives_its_rule_based_scores(capsys: pytest.CaptureFixture[str]) -> None:
    """RS: a well-formed call and finish (the duplicate id counts once); AM: a JSON true, then
    ToolEyes' forced ending."""
    data = _json(capsys, "--tooleyes", str(FIXTURES / "tooleyes" / "mini.json"))
    means = data["models"]["mini"]["means"]
    assert means["RS"] == {
        "IF": 1.0,
        "tool_reality": 1.0,
        "Ans_pass": 1.0,
        "neat_json_err": 0.0,
        "neat_react_err": 0.0,
    }
    assert means["AM"] == {
        "IF": 0.0,
        "tool_reality": 0.0,
        "Ans_pass": 0.0,
        "neat_json_err": 0.5,
        "neat_react_err": 0.0,
    }
    assert means["overall"]["IF"] == 0.5 and data["models"]["mini"]["counts"]["overall"] == 2


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["runs/x", "--teval", "d"], 2, "give it without RUN"),
        (["--teval", "a", "--tooleyes", "b"], 2, "give one of"),
        ([], 1, "give a run folder"),
        (["--ultratool", "/no/such/dir"], 1, "no ultratool predictions at"),
    ],
)
def test_bad_benchmark_arguments_are_one_line_errors(
    argv: list[str], code: int, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rescore", *argv]) == code
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_files_of_another_layout_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "instruct_m.json").write_text("[1, 2]", encoding="utf-8")
    assert main(["rescore", "--teval", str(tmp_path)]) == 1
    assert "not a T-Eval prediction file" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["rescore", "--teval", str(empty)]) == 1
    assert "no teval prediction files" in capsys.readouterr().err
