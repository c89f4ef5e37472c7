"""An episode as ToolEval's judge sees it (``sandbox.eval.tooleval.answer``): which path becomes
the answer chain, when the final step counts as a ``Finish``, which answers are empty or give-ups
(``rtl.py::check_is_solved``'s shortcut), what ``process_answer`` (``base.py``) hides from the
preference judge, and when two answers are identical (``check_identity_answers``). Expected
values are written by hand from those rules."""

from __future__ import annotations

from typing import Any

import pytest
from outcome_builders import call, traj

from agents.trajectory import Node, Status
from sandbox.eval.tooleval.answer import (
    PREFERENCE_ANSWER_CHARS,
    converted_answer,
    empty_or_give_up,
    final_step_is_finish,
    finish_text,
    for_preference,
    same_answer,
)


def _names(answer: dict[str, Any]) -> list[str]:
    """The tool names along the answer chain."""
    out, nodes = [], answer["answer_details"]
    while nodes:
        node = nodes[0]
        if node["role"] == "tool":
            out.append(str(node["message"]).split("'name': '")[1].split("'")[0])
        nodes = node["next"]
    return out


def _tree() -> Any:
    """Root action ``add``; two children: ``mul`` (node 1) and ``div`` (node 2, the last)."""
    t = traj(calls=[[call("add", i=0)]], status=Status.budget_exhausted, answer=None)
    t.nodes.append(Node(id=1, parent=0, kind="action", calls=[call("mul", i=1)]))
    t.nodes.append(Node(id=2, parent=0, kind="action", calls=[call("div", i=2)]))
    return t


def test_the_chain_is_the_chosen_path_when_there_is_one() -> None:
    t = _tree()
    t.chosen_path = [0, 1]
    assert _names(converted_answer(t)) == ["add_for_calc", "mul_for_calc"]


def test_without_a_chosen_path_the_chain_is_the_path_to_the_last_node() -> None:
    t = _tree()
    t.chosen_path = []
    answer = converted_answer(t)
    assert _names(answer) == ["add_for_calc", "div_for_calc"]
    assert answer["final_answer"] == "" and set(answer) == {
        "method",
        "total_steps",
        "final_answer",
        "answer_details",
    }


def test_an_episode_without_nodes_is_an_empty_chain() -> None:
    t = traj(status=Status.budget_exhausted, answer=None)
    t.chosen_path = []
    answer = converted_answer(t)
    assert (answer["total_steps"], answer["final_answer"], _names(answer)) == (2, "", [])


def _chain(*messages: tuple[str, str]) -> dict[str, Any]:
    details: dict[str, Any] | None = None
    for role, message in reversed(messages):
        details = {"role": role, "message": message, "next": [details] if details else []}
    return {"answer_details": [details] if details else []}


FINISH = "{'name': 'Finish', 'arguments': '{}', 'response': ''}"
SEARCH = "{'name': 'search', 'arguments': '{}', 'response': 'ok'}"


@pytest.mark.parametrize(
    ("answer", "finished"),
    [
        (_chain(("user", "q"), ("tool", SEARCH), ("tool", FINISH)), True),
        (_chain(("tool", FINISH), ("assistant", "thinking")), True),  # the last *tool* node
        (_chain(("tool", FINISH), ("tool", SEARCH)), False),
        (_chain(("user", "'name': 'Finish'")), False),  # no tool node at all
        (_chain(), False),
        ({}, False),
        ({"answer_details": ["not a node"]}, False),
    ],
)
def test_the_final_step_is_the_last_tool_node_of_the_chain(
    answer: dict[str, Any], finished: bool
) -> None:
    assert final_step_is_finish(answer) is finished


@pytest.mark.parametrize(
    ("final", "text"),
    [
        ('{"return_type": "give_answer", "final_answer": "Paris"}', "Paris"),
        ('{"final_answer": 42}', "42"),
        ('{"final_answer": null}', ""),
        ('{"return_type": "give_answer"}', ""),
        ("Paris, plainly", "Paris, plainly"),  # not JSON: the text itself
        ('["Paris"]', '["Paris"]'),  # JSON, but no arguments object
    ],
)
def test_the_answer_text_inside_the_finish_arguments(final: str, text: str) -> None:
    assert finish_text(final) == text


@pytest.mark.parametrize(
    ("final", "empty"),
    [
        ("", True),
        (" \n ", True),
        ('{"return_type": "give_up_and_restart", "final_answer": "I could not"}', True),
        ("give_up_and_restart", True),
        ('{"return_type": "give_answer", "final_answer": "  "}', True),
        ('{"return_type": "give_answer", "final_answer": "Paris"}', False),
        ("plain words", False),
    ],
)
def test_empty_answers_and_give_ups(final: str, empty: bool) -> None:
    assert empty_or_give_up(final) is empty


def test_the_preference_judge_sees_no_method_and_at_most_1000_characters() -> None:
    answer = {
        "method": "DFS_woFilter_w2",
        "total_steps": 4,
        "final_answer": "x" * (PREFERENCE_ANSWER_CHARS + 1),
        "answer_details": [{"role": "user"}],
    }
    shown = for_preference(answer)
    assert shown == {
        "total_steps": 4,
        "final_answer": "x" * 1000,
        "answer_details": [{"role": "user"}],
    }
    assert answer["method"] == "DFS_woFilter_w2" and len(answer["final_answer"]) == 1001
    exact = for_preference({"final_answer": "y" * 1000})
    assert exact == {"final_answer": "y" * 1000}
    assert for_preference({"final_answer": None}) == {"final_answer": ""}


def test_identical_answers_need_the_same_final_answer_and_details() -> None:
    a = {"final_answer": "f", "answer_details": [{"role": "tool", "message": "m"}], "x": 1}
    assert same_answer(a, {**a, "x": 2})  # other keys do not count
    assert not same_answer(a, {**a, "final_answer": "g"})
    assert not same_answer(a, {**a, "answer_details": [{"role": "tool", "message": "n"}]})
