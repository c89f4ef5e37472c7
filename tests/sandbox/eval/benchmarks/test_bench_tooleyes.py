"""ToolEyes' format alignment and tool reality, conversation by conversation, against values
worked by hand from ``Code/Evaluation/util/utils.py`` (docs/evaluation.md): ReAct parts found
by its regular expressions, Action Input evaluated, the final reply found by its text, forced
endings, the running hallucination count and the shrinking required list kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox.eval.benchmarks import NoReferenceValue
from sandbox.eval.benchmarks.tooleyes import format_alignment, read_doc, tool_reality
from sandbox.eval.benchmarks.tooleyes_files import read_tooleyes
from tests.sandbox.eval.benchmarks.cases_tooleyes import (
    DOC,
    FORMAT_CASES,
    REALITY_CASES,
    REALITY_NO_VALUE,
    SYSTEM,
)

Conversation = list[dict[str, str]]
FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "benchmarks"


@pytest.mark.parametrize(
    ("conversation", "score", "answer_pass", "neat_json", "neat_react"),
    [c[1:] for c in FORMAT_CASES],
    ids=[c[0] for c in FORMAT_CASES],
)
def test_format_alignment_as_tooleyes_scores_it(
    conversation: Conversation,
    score: float,
    answer_pass: int,
    neat_json: float,
    neat_react: float,
) -> None:
    """IF, Ans_pass and the two neat error shares of one conversation."""
    got = format_alignment(conversation)
    assert (got.score, got.answer_pass, got.neat_json_err, got.neat_react_err) == pytest.approx(
        (score, answer_pass, neat_json, neat_react), abs=1e-9
    )


@pytest.mark.parametrize(
    ("conversation", "reality"),
    [c[1:] for c in REALITY_CASES],
    ids=[c[0] for c in REALITY_CASES],
)
def test_tool_reality_as_tooleyes_scores_it(conversation: Conversation, reality: float) -> None:
    """The rule part of tool selection, the document read from the system message."""
    assert tool_reality(conversation) == pytest.approx(reality, abs=1e-9)


@pytest.mark.parametrize("conversation", [c[1] for c in REALITY_NO_VALUE])
def test_a_non_object_input_has_no_reference_value(conversation: Conversation) -> None:
    """ToolEyes reads the keys of the input and raises on a tuple or None: no value."""
    with pytest.raises(NoReferenceValue):
        tool_reality(conversation)


def test_the_document_is_read_from_the_system_message() -> None:
    """get_doc: the list after ToolEyes' marker, up to "Let's Begin!"."""
    assert read_doc(SYSTEM["value"]) == DOC


def test_a_given_document_is_not_changed() -> None:
    """ToolEyes shrinks the required list as it goes; the caller's document stays as it was."""
    doc = [{"name": "get", "parameters": {"properties": {"city": {}}, "required": ["city"]}}]
    conversation = [
        SYSTEM,
        {"from": "assistant", "value": "Thought: t\nAction: get\nAction Input: {'city': 'P'}"},
        {"from": "function", "value": "{}"},
    ]
    assert tool_reality(conversation, doc) == 1
    assert doc[0]["parameters"]["required"] == ["city"]


def test_output_is_read_as_tooleyes_aggregated_data_reads_it(tmp_path: Path) -> None:
    """A scenario's conversation for an id is the file's first record with that id, whatever
    scenario it names (id 7 in RS is scored on its TG record); 1 and "1" are two queries; the
    overall figure weighs each scenario's mean by its count, in ToolEyes' scenario order."""
    mini = json.loads((FIXTURES / "tooleyes" / "mini.json").read_text(encoding="utf-8"))
    good, bad = mini[0]["conversations"], mini[2]["conversations"]
    records = [
        {"id": 7, "scenario": "RS", "conversations": good},
        {"id": 7, "scenario": "TG", "conversations": bad},
        {"id": "7", "scenario": "TG", "conversations": bad},
        {"id": 7.0, "scenario": "TG", "conversations": bad},  # the same query as 7
    ]
    path = tmp_path / "model.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    scores = read_tooleyes(path)
    assert list(scores.means) == ["TG", "RS", "overall"]
    assert scores.counts == {"TG": 2, "RS": 1, "overall": 3}
    assert scores.means["TG"]["IF"] == 0.5  # 7's first record (good), then "7" (bad)
    assert scores.means["RS"]["IF"] == 1.0
    assert scores.means["overall"]["IF"] == (0.5 * 2 + 1.0 * 1) / 3
