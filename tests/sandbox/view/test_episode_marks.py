"""How the episode page marks a search tree: the answer path, pruned branches, give-ups, depth
cuts, a budget cut, and ReAct@N's chains; hand-built trees, so each mark has one reason."""

from __future__ import annotations

from pathlib import Path

from agents.trajectory import Component, FinishCall, Node, NodeKind, Status, Trajectory
from sandbox.view.episode_page import _text, first_difference, node_marks
from sandbox.view.run_page import episode_tags


def node(i: int, parent: int | None, kind: NodeKind = "action", content: str = "") -> Node:
    finish = None
    if kind == "finish":
        finish = FinishCall(return_type="give_answer", final_answer="42")
    elif kind == "give_up":
        finish = FinishCall(return_type="give_up_and_restart")
    return Node(id=i, parent=parent, kind=kind, finish=finish, content=content)


def tree(nodes: list[Node], path: list[int], status: Status = Status.answered) -> Trajectory:
    return Trajectory(
        scenario_id="t",
        agent=Component(name="dfsdt"),
        model=Component(name="m"),
        status=status,
        nodes=nodes,
        chosen_path=path,
    )


def test_a_dfsdt_tree_marks_path_pruned_give_up_and_depth_cut() -> None:
    #        0
    #      /   \
    #     1     4
    #    / \     \
    #   2   3     5 (finish)
    # 2 gives up, 3 is a leaf the depth limit stopped
    nodes = [
        node(0, None),
        node(1, 0),
        node(2, 1, "give_up"),
        node(3, 1),
        node(4, 0),
        node(5, 4, "finish"),
    ]
    marks = {m.id: m for m in node_marks(tree(nodes, [0, 4, 5]))}
    assert [i for i, m in marks.items() if m.on_path] == [0, 4, 5]
    assert [i for i, m in marks.items() if m.pruned] == [1, 2, 3]
    assert [i for i, m in marks.items() if m.give_up] == [2]
    assert [i for i, m in marks.items() if m.depth_cut] == [3]
    assert not any(m.budget_cut for m in marks.values())
    assert marks[0].children == [1, 4] and marks[1].children == [2, 3]
    assert {m.chain for m in marks.values()} == {0}


def test_the_last_leaf_of_an_episode_a_budget_ended_is_a_budget_cut() -> None:
    nodes = [node(0, None), node(1, 0), node(2, 0)]
    t = tree(nodes, [0, 2], Status.budget_exhausted)
    marks = {m.id: m for m in node_marks(t)}
    assert marks[2].budget_cut and not marks[2].depth_cut
    assert marks[1].depth_cut  # the search went on after it


def test_react_at_n_chains_are_root_level_branches() -> None:
    nodes = [
        node(0, None),
        node(1, 0, "give_up"),
        node(2, None),
        node(3, 2, "give_up"),
        node(4, None),
        node(5, 4, "finish"),
    ]
    marks = node_marks(tree(nodes, [4, 5]))
    assert [m.chain for m in marks] == [0, 0, 1, 1, 2, 2]
    assert [m.id for m in marks if m.pruned] == [0, 1, 2, 3]


def test_without_a_chosen_path_nothing_is_pruned() -> None:
    marks = node_marks(tree([node(0, None), node(1, 0, "error")], [], Status.error))
    assert not any(m.pruned or m.on_path for m in marks)
    assert not any(m.depth_cut for m in marks)  # an error node is not a depth cut


def test_first_difference_names_the_step() -> None:
    a = tree([node(0, None, content="look"), node(1, 0, "finish")], [0, 1])
    b = tree([node(0, None, content="look"), node(1, 0, content="again")], [0, 1])
    assert first_difference(a, a) is None
    diff = first_difference(a, b)
    assert diff is not None and diff.node == 1 and diff.field == "kind"
    assert "node 1" in diff.text


def test_a_user_ending_the_conversation_is_no_depth_cut() -> None:
    """The user's done closes the conversation (a leaf that is no cut); a user's answer the
    search left, without a signal, is a leaf the depth limit stopped."""
    nodes = [
        node(0, None, "finish"),
        Node(id=1, parent=0, kind="user", content="no", user={}),
        node(2, None, "finish"),
        Node(id=3, parent=2, kind="user", user={"signal": "done"}),
    ]
    marks = {m.id: m for m in node_marks(tree(nodes, [2, 3]))}
    assert not marks[3].depth_cut and not marks[3].budget_cut and marks[3].on_path
    assert marks[1].depth_cut and marks[1].pruned


def test_a_step_one_episode_lacks_reads_as_words_never_none() -> None:
    a = tree([node(0, None, content="look")], [0])
    b = tree([node(0, None, content="look"), node(1, 0, content="again")], [0, 1])
    grew = first_difference(a, b)
    assert grew is not None and grew.field == "node"
    assert (grew.expected, grew.got) == ("no such step", "action")
    shrank = first_difference(b, a)
    assert shrank is not None and (shrank.expected, shrank.got) == ("action", "no such step")
    answered = tree([node(0, None, "finish")], [0])
    silent = answered.model_copy(update={"final_answer": None})
    answered = answered.model_copy(update={"final_answer": "42"})
    diff = first_difference(answered, silent)
    assert diff is not None and diff.got == "nothing" and "None" not in diff.expected


def test_the_run_pages_filters_tag_each_way_an_episode_ended() -> None:
    assert episode_tags("solved", "answered", False) == ["solved"]
    assert episode_tags("unsolved", "gave_up", False) == ["unsolved", "gave_up"]
    assert episode_tags("unsolved", "budget_exhausted", True) == ["unsolved", "budget", "infra"]
    assert episode_tags("unsolved", "context_overflow", False) == ["unsolved", "context_overflow"]
    assert episode_tags(None, "error", False) == []


def test_a_differing_value_is_shown_as_json_and_cut_at_its_limit() -> None:
    assert _text({"city": "Zürich", "days": [1, 2]}, "calls[0].arguments") == (
        '{"city": "Zürich", "days": [1, 2]}'
    )
    assert _text(Path("a/b"), "x") == '"a/b"'  # what JSON cannot hold, as its text
    assert _text(True, "x") == "true" and _text("as is", "x") == "as is"
    assert _text("y" * 2000, "x") == "y" * 2000
    cut = _text("y" * 2001, "x")
    assert cut == "y" * 1999 + "…" and len(cut) == 2000
    assert _text("abcdef", "x", limit=4) == "abc…"
