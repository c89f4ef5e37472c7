"""The export writes what StableToolBench's converter (``convert_to_answer_format.py``) writes in
two cases its code decides by itself.

What it protects: a turn whose ``Finish`` came before another call is read up to the ``Finish``
(the converter ``break``s there), its answer being the ``Finish``'s or, under ToolBench's finish
rule, the later call's arguments; a CoT@1 episode without an answer is its one try written whole
(``process_invalid_data``): every thought, every call with its observation, the give-up
``Finish`` with ToolBench's observation, and an empty final answer. Expected entries are written
by hand from the converter's code."""

from __future__ import annotations

import json
from typing import Any

from agents.toolenv import FINISH, GIVE_ANSWER, GIVE_UP, Observation
from agents.trajectory import Component, FinishCall, Node, Status, StepCall, Trajectory
from sandbox.interop.export_toolbench import to_converted


def _call(
    i: int, name: str, arguments: str, response: str, *, hallucinated: bool = False
) -> StepCall:
    return StepCall(
        id=f"c{i}",
        name=name,
        arguments=arguments,
        function=None if hallucinated else name,
        hallucinated=hallucinated,
        args=None if hallucinated else json.loads(arguments),
        observation=Observation(ok=not hallucinated, content=response),
    )


def _traj(agent: Component, status: Status, nodes: list[Node], answer: str | None) -> Trajectory:
    return Trajectory(
        scenario_id="G1_instruction-7",
        agent=agent,
        model=Component(name="m"),
        status=status,
        final_answer=answer,
        nodes=nodes,
        chosen_path=[n.id for n in nodes],
    )


def _chain(entry: dict[str, Any]) -> list[tuple[str, Any]]:
    out, nodes = [], entry["answer"]["answer_details"]
    while nodes:
        out.append((nodes[0]["role"], nodes[0]["message"]))
        nodes = nodes[0]["next"]
    return out


SEARCH = '{"q": "a"}'
OBSERVED = '{"error": "", "response": "found"}'


def test_a_turn_is_read_up_to_its_finish() -> None:
    """The call after the Finish is not written (it was written before the Finish); the final
    answer is the Finish's own, or ToolBench's rule's late answer."""
    finish = FinishCall(return_type=GIVE_ANSWER, final_answer="42", position=1)
    node = Node(
        id=0,
        kind="finish",
        content="done",
        calls=[_call(0, "lookup", "{}", OBSERVED), _call(1, "search", SEARCH, OBSERVED)],
        finish=finish,
    )
    react = Component(name="react")
    entry = to_converted(_traj(react, Status.answered, [node], "42"))
    finish_args = json.dumps({"return_type": GIVE_ANSWER, "final_answer": "42"})
    assert _chain(entry) == [
        ("system", ""),
        ("user", ""),
        ("tool", {"name": "lookup", "arguments": "{}", "response": OBSERVED}),
        ("tool", {"name": FINISH, "arguments": finish_args, "response": ""}),
    ]
    assert (entry["answer"]["final_answer"], entry["answer"]["total_steps"]) == (finish_args, 4)
    late = node.model_copy(update={"finish": finish.model_copy(update={"late_answer": SEARCH})})
    entry = to_converted(_traj(react, Status.answered, [late], SEARCH))
    assert entry["answer"]["final_answer"] == SEARCH
    assert _chain(entry)[-1] == ("tool", {"name": FINISH, "arguments": finish_args, "response": ""})


def test_a_cot_1_episode_without_an_answer_is_its_one_try_written_whole() -> None:
    """Thoughts kept (a calling turn's too), invented names as written, every observation, the
    give-up Finish with ToolBench's observation, final_answer empty."""
    gave_up = FinishCall(return_type=GIVE_UP, final_answer="no luck")
    nodes = [
        Node(id=0, kind="thought", content="let me think"),
        Node(
            id=1,
            parent=0,
            kind="invalid",
            content="try this",
            calls=[_call(0, "nope_for_x", "{}", "No such function", hallucinated=True)],
        ),
        Node(id=2, parent=1, kind="action", calls=[_call(1, "search", SEARCH, OBSERVED)]),
        Node(id=3, parent=2, kind="give_up", content="I give up", finish=gave_up),
    ]
    for agent in (Component(name="react"), Component(name="react@n", params={"n": 1})):
        entry = to_converted(_traj(agent, Status.gave_up, nodes, "no luck"))
        give_up_args = json.dumps({"return_type": GIVE_UP})
        assert _chain(entry) == [
            ("system", ""),
            ("user", ""),
            ("assistant", "let me think"),
            ("assistant", "try this"),
            ("tool", {"name": "nope_for_x", "arguments": "{}", "response": "No such function"}),
            ("tool", {"name": "search", "arguments": SEARCH, "response": OBSERVED}),
            ("assistant", "I give up"),
            (
                "tool",
                {
                    "name": FINISH,
                    "arguments": give_up_args,
                    "response": '{"response":"chose to give up and restart"}',
                },
            ),
        ]
        assert entry["answer"]["method"] == "CoT@1"
        assert (entry["answer"]["final_answer"], entry["answer"]["total_steps"]) == ("", 8)


def test_cot_with_more_tries_and_answered_episodes_keep_the_chosen_path() -> None:
    """Only one try makes the converter's pick certain: CoT@2 keeps the chosen path (its random
    try is not reproduced), and an answered CoT@1 episode is valid data."""
    nodes = [
        Node(id=0, kind="action", content="hm", calls=[_call(0, "search", SEARCH, OBSERVED)]),
        Node(id=1, parent=0, kind="give_up", finish=FinishCall(return_type=GIVE_UP)),
    ]
    two = to_converted(
        _traj(Component(name="react@n", params={"n": 2}), Status.gave_up, nodes, None)
    )
    assert [role for role, _ in _chain(two)] == ["system", "user", "tool", "tool"]
    assert two["answer"]["final_answer"] == json.dumps({"return_type": GIVE_UP})
