from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from mock_tools.client import in_process_client
from mock_tools.http_app import create_app
from mock_tools.names import function_name
from mock_tools.suite import load_suite
from sandbox.interop.observations import render_observation, same_observation
from sandbox.interop.toolbench_answers import import_answers
from sandbox.store import RunStore, read_trajectories

FN = {
    "name": "track_for_parcels",
    "description": 'This is the subfunction for tool "parcels", you can use this tool.'
    'The description of this function is: "Track a parcel"',
    "parameters": {
        "type": "object",
        "properties": {"code": {"type": "string", "description": "", "example_value": "AB1"}},
        "required": ["code"],
        "optional": [],
    },
}
FINISH_FN = {"name": "Finish", "description": "finish", "parameters": {"type": "object"}}


def _leaf(name: str, arguments: str, observation: str, children: list | None = None) -> dict:
    return {
        "node_type": "Action",
        "description": name,
        "children": [
            {
                "node_type": "Action Input",
                "description": arguments,
                "observation": observation,
                "children": children or [],
            }
        ],
    }


def _answer_file() -> dict:
    timeout = render_observation("Timeout error...", "")
    done = render_observation("", "{'status': 'delivered'}")
    finish = '{\n  "return_type": "give_answer",\n  "final_answer": "Delivered."\n}'
    give_up = '{\n  "return_type": "give_up_and_restart"\n}'
    chosen_finish = _leaf("Finish", finish, '{"response":"successfully giving the final answer."}')
    branch2 = _leaf("track_for_parcels", '{"code": "AB1"}', done, [chosen_finish])
    branch1 = {
        "node_type": "Thought",
        "description": "Track it.",
        "children": [
            _leaf(
                "track_for_parcels",
                '{"code": " AB1"}',
                timeout,
                [
                    _leaf("made_up_fn", "{}", render_observation("No such function name", "")),
                    _leaf("Finish", give_up, '{"response":"chose to give up and restart"}'),
                ],
            )
        ],
    }
    root = {"node_type": "Action Input", "description": "", "children": [branch1, branch2]}
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "Where is AB1?"},
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": "track_for_parcels", "arguments": '{"code": "AB1"}'},
        },
        {"role": "function", "name": "track_for_parcels", "content": done},
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": "Finish", "arguments": finish},
        },
    ]
    return {
        "win": True,
        "tree": {"size": 9, "max_length": 4, "tree": root},
        "forward_args": {"tree_beam_size": 2, "single_chain_max_step": 12},
        "compare_candidates": [],
        "answer_generation": {
            "valid_data": True,
            "query_count": 5,
            "total_tokens": 100,
            "final_answer": finish,
            "finish_type": "give_answer",
            "function": [FN, FINISH_FN],
            "chain": [],
            "train_messages": [messages],
            "query": "Where is AB1?",
        },
    }


def test_synthetic_tree(tmp_path: Path) -> None:
    folder = tmp_path / "G1_answer"
    folder.mkdir()
    (folder / "3_ChatGPT_DFS_woFilter_w2.json").write_text(json.dumps(_answer_file()))
    (folder / "4_ChatGPT_DFS_woFilter_w2.json").write_text("{not json")
    summary = import_answers([folder], tmp_path / "suite")
    assert summary.read["recorded_calls"] == 2 and summary.read["harness_observations"] == 1
    assert [s.reason.split(":")[0] for s in summary.skipped] == ["unreadable answer file"]
    suite = load_suite(tmp_path / "suite")
    assert list(suite.apis) == [("parcels", "track")]
    assert function_name("parcels", "track") == "track_for_parcels"
    # " AB1" and "AB1" are one canonical call with two different observations: occurrences 1, 2
    assert sorted((r.occurrence, r.response.ok) for r in suite.recordings) == [
        (1, False),
        (2, True),
    ]
    (task,) = suite.tasks
    assert task.id == "G1-3" and task.reference.answer == "Delivered."
    assert [(s.tool, s.api, s.args) for s in task.reference.steps] == [
        ("parcels", "track", {"code": "AB1"})
    ]
    (traj,) = read_trajectories(tmp_path / "suite" / "original-runs" / "DFS_woFilter_w2")
    kinds = [(n.id, n.parent, n.kind) for n in traj.nodes]
    assert kinds == [
        (0, None, "action"),
        (1, 0, "invalid"),
        (2, 0, "give_up"),
        (3, None, "action"),
        (4, 3, "finish"),
    ]
    assert traj.nodes[0].content == "Track it."
    assert traj.chosen_path == [3, 4] and traj.final_answer == "Delivered."
    assert traj.status.value == "answered"


@pytest.mark.parametrize(
    ("forward", "says"),
    [
        ({"tree_beam_size": -5}, "width: Input should be greater than or equal to 1"),
        ({"single_chain_max_step": 0}, "max_depth"),
    ],
)
def test_an_answer_file_whose_settings_run_no_agent_is_skipped_not_fatal(
    tmp_path: Path, forward: dict, says: str
) -> None:
    """One malformed file (issue 40 item 8) is skipped with its reason; the others import."""
    folder = tmp_path / "G1_answer"
    folder.mkdir()
    (folder / "3_ChatGPT_DFS_woFilter_w2.json").write_text(json.dumps(_answer_file()))
    bad = _answer_file()
    bad["forward_args"] = {**bad.get("forward_args", {}), **forward}
    (folder / "4_ChatGPT_DFS_woFilter_w2.json").write_text(json.dumps(bad))
    summary = import_answers([folder], tmp_path / "suite")
    (skipped,) = summary.skipped
    assert skipped.source.endswith("4_ChatGPT_DFS_woFilter_w2.json")
    assert "unreadable answer file: its settings run no agent" in skipped.reason
    assert says in skipped.reason
    assert [t.id for t in load_suite(tmp_path / "suite").tasks] == ["G1-3"]


ANSWERS = "toolbench/data_example/answer"
RUN = "original-runs/DFS_woFilter_w2"


@pytest.fixture
def imported(shared_data: Path, tmp_path: Path) -> tuple[Path, dict]:
    answers = shared_data / ANSWERS
    summary = import_answers([answers / "G1_answer", answers / "G2_answer"], tmp_path / "tb")
    return tmp_path / "tb", summary.to_json()


def test_real_answer_files(imported: tuple[Path, dict]) -> None:
    out, summary = imported
    assert summary["read"]["files"] == 10 and summary["skipped_count"] == 0
    # 112 tool calls in the 10 trees: 99 answered by RapidAPI tools, 13 by ToolBench's harness
    # (hallucinated function names); 13 observations were cut by ToolBench at 1024 characters
    assert summary["read"]["tree_calls"] == 112
    assert summary["read"]["recorded_calls"] == 99
    suite = load_suite(out)
    assert len(suite.tasks) == 10
    assert len(suite.recordings) == summary["written"]["recordings"] == 41
    assert all(r.provenance.source == "toolbench" for r in suite.recordings)
    run = RunStore.open(out / RUN)
    assert len(run.manifest.episodes) == 10
    trajectories = {t.scenario_id: t for t in run.trajectories()}
    answered = 0
    for task in suite.tasks:
        traj = trajectories[task.id]
        if not task.reference.steps:
            continue
        answered += 1
        chosen = [(c.tool, c.api, c.args) for n in traj.chosen() for c in n.calls]
        assert chosen == [(s.tool, s.api, s.args) for s in task.reference.steps]
        assert traj.final_answer == task.reference.answer and traj.final_answer
    assert answered == 6  # 4 episodes gave up or have no valid answer: no reference path


def test_every_recorded_tree_call_is_served_back(imported: tuple[Path, dict]) -> None:
    out, _ = imported
    suite = load_suite(out)
    app = create_app(suite, miss_policy="error")
    trajectories = read_trajectories(out / RUN)

    async def replay() -> tuple[int, int]:
        checked = exact = 0
        async with app.router.lifespan_context(app):
            for traj in trajectories:  # each episode in its own occurrence scope, in tree order
                headers = {"X-Sandbox-Session": traj.scenario_id}
                async with in_process_client(app, headers=headers) as client:
                    for node in traj.nodes:
                        for call in node.calls:
                            if call.observation is None or call.observation.provenance != "hit":
                                continue
                            r = await client.post(
                                "/virtual",
                                json={
                                    "tool_name": call.tool,
                                    "api_name": call.api,
                                    "tool_input": call.args,
                                },
                            )
                            body = r.json()
                            text = render_observation(body["error"], body["response"])
                            assert same_observation(call.observation.content, text), call.name
                            checked += 1
                            exact += text == call.observation.content
        return checked, exact

    checked, exact = asyncio.run(replay())
    assert checked == 99
    assert exact == 86  # the other 13 are ToolBench's cut observations: prefix-equal
