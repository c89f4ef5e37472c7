"""ToolBench's semantics, one by one, on small answer trees written by hand (``tb_trees``).

Each test imports its trees, then checks what ToolBench did is what the import holds and what
``sandbox replay`` (our agents re-run with the recorded turns against the suite's mock tools)
and ``sandbox replay --calls`` reproduce, with 0 divergences.
"""

from __future__ import annotations

from pathlib import Path

from tb_trees import (
    SEARCH,
    STATUS,
    call,
    cot_file,
    dfs_file,
    finish,
    function,
    obs,
    thought,
    write,
)

from agents.toolenv import HALLUCINATED_NAME
from agents.trajectory import Trajectory, messages_for
from mock_tools.suite import load_suite
from sandbox.interop import import_answers
from sandbox.interop.summary import ImportSummary
from sandbox.replay import replay_run
from sandbox.store import RunStore, read_trajectories

DFS = "DFS_woFilter_w2"


def _import(tmp_path: Path, files: dict[str, dict]) -> tuple[Path, ImportSummary]:
    for name, data in files.items():
        folder, _, file = name.rpartition("/")
        write(tmp_path / "answers" / (folder or "G1_answer"), file, data)
    suite = tmp_path / "suite"
    return suite, import_answers([tmp_path / "answers"], suite)


def _replays_exactly(run: Path) -> None:
    for mode in ("agent", "calls"):
        report = replay_run(run, mode=mode)  # type: ignore[arg-type]
        assert report.ok, (mode, [v.first_diff for v in report.verdicts if v.first_diff])
        assert report.calls_matched == report.calls_checked


def _episode(suite: Path, task: str, run: str = DFS) -> Trajectory:
    (traj,) = [t for t in read_trajectories(suite / "original-runs" / run) if t.scenario_id == task]
    return traj


def test_1_dispatch_by_suffix(tmp_path: Path) -> None:
    """A shortened name reaches the first offered function that ends with it, in offered order
    (ToolBench's ``function["name"].endswith(action_name)``), in the import and in replay."""
    get_status = function("get_status", "parcels", params={"code": "string"})
    tree = dfs_file(
        "Where is AB1?",
        call("status_for_parcels", {"code": "AB1"}, obs("delivered"), finish("Delivered.")),
        functions=[get_status, STATUS, SEARCH],
        final_answer="...",
    )
    suite, summary = _import(tmp_path, {f"1_{DFS}.json": tree})
    assert load_suite(suite).meta.dispatch == "toolbench_suffix"
    node = _episode(suite, "G1-1").nodes[0]
    # "get_status_for_parcels" comes first and ends with the name written: it wins over the
    # exact "status_for_parcels" offered after it
    assert node.kind == "action" and node.calls[0].function == "get_status_for_parcels"
    assert (node.calls[0].tool, node.calls[0].api) == ("parcels", "get_status")
    assert summary.read["recorded_calls"] == 1
    _replays_exactly(suite / "original-runs" / DFS)


def test_2_depth_cut_backtrack_is_inferred_per_tree(tmp_path: Path) -> None:
    """A branch cut at the depth limit climbs 1 level in ToolBench's published DFS (its parent
    tries another child) and 2 in trees of an earlier version (the grandparent does). The
    import finds, per tree, the value that reproduces it, and replay uses it."""
    q = {k: {"q": k} for k in "123"}
    one = dfs_file(  # the cut's parent generated a second child: climbs 1
        "Find it.",
        call(
            "search_for_shops",
            q["1"],
            obs("a"),
            call("search_for_shops", q["2"], obs("b")),
            call("search_for_shops", q["3"], obs("c")),
        ),
        call("track_for_parcels", {"code": "AB1"}, obs("ok"), finish()),
        depth=4,
        final_answer="...",
    )
    two = dfs_file(  # the cut's parent gave up at once, its parent went on: climbs 2
        "Find it.",
        call("search_for_shops", q["1"], obs("a"), call("search_for_shops", q["2"], obs("b"))),
        call("track_for_parcels", {"code": "AB1"}, obs("ok"), finish()),
        depth=4,
        final_answer="...",
    )
    suite, summary = _import(tmp_path, {f"1_{DFS}.json": one, f"2_{DFS}.json": two})
    assert summary.read["reproduced"] == 2
    settings = {
        t.scenario_id: t.tree["toolbench"]["settings"]
        for t in read_trajectories(suite / "original-runs" / DFS)
    }
    assert settings["G1-1"]["depth_cut_backtrack"] == 1
    assert settings["G1-2"]["depth_cut_backtrack"] == 2
    config = RunStore.open(suite / "original-runs" / DFS).manifest.config
    assert config.preset == "toolbench" and config.budget.max_depth == 4
    assert config.strategy("G1-1").params["depth_cut_backtrack"] == 1
    assert config.strategy("G1-2").params["depth_cut_backtrack"] == 2
    _replays_exactly(suite / "original-runs" / DFS)


def test_3_a_recorded_call_is_served_even_when_its_arguments_fail_the_schema(
    tmp_path: Path,
) -> None:
    """ToolBench sent ``{"id": ...}`` to an API that requires ``code``; the API answered. The
    recording answers the same call again; a new invalid call still gets the schema error."""
    tree = dfs_file(
        "Where is AB1?",
        call("track_for_parcels", {"id": "AB1"}, obs("no parcel id given"), finish("Unknown.")),
        final_answer="...",
    )
    suite, _ = _import(tmp_path, {f"1_{DFS}.json": tree})
    (rec,) = load_suite(suite).recordings
    assert rec.args == {"id": "AB1"} and rec.response.body == "no parcel id given"
    _replays_exactly(suite / "original-runs" / DFS)


def test_4_conflicting_recordings_keep_each_episode_its_own(tmp_path: Path) -> None:
    """The live API answered the same call differently in two trees and in a CoT run of one of
    the queries: each episode replays with the responses it saw."""
    track = {"code": "AB1"}

    def tree(text: str) -> dict:
        return dfs_file(
            "Where is AB1?",
            call("track_for_parcels", track, obs(text), finish(text)),
            final_answer="...",
        )

    cot = cot_file("Where is AB1?", call("track_for_parcels", track, obs("lost"), finish("lost")))
    suite, summary = _import(
        tmp_path,
        {
            f"1_{DFS}.json": tree("in transit"),
            f"2_{DFS}.json": tree("delivered"),
            "1_CoT@1.json": cot,
        },
    )
    assert set(summary.runs) == {DFS, "CoT@1"}
    seen = {"CoT@1/G1-1": "lost", f"{DFS}/G1-1": "in transit", f"{DFS}/G1-2": "delivered"}
    recordings = load_suite(suite).recordings
    (shared,) = [r for r in recordings if r.scope is None]  # the first file's, for new calls
    scoped = {r.scope: r.response.body for r in recordings if r.scope is not None}
    assert len(scoped) == 2 and all(seen[scope] == body for scope, body in scoped.items())
    assert {shared.response.body, *scoped.values()} == set(seen.values())
    for run in summary.runs.values():
        _replays_exactly(Path(run))
    assert _episode(suite, "G1-2").final_answer == "delivered"
    assert _episode(suite, "G1-1", "CoT@1").final_answer == "lost"


def test_5_an_invented_function_name_is_answered_and_renamed_as_toolbench_does(
    tmp_path: Path,
) -> None:
    """ToolBench answers a name that matches no function with its "No such function name"
    observation, keeps searching below it, and shows the call in later prompts as
    ``invalid_hallucination_function_name``."""
    no_such = obs("", error="No such function name: find_parcel")
    tree = dfs_file(
        "Where is AB1?",
        call(
            "find_parcel",
            {"code": "AB1"},
            no_such,
            call("track_for_parcels", {"code": "AB1"}, obs("delivered"), finish("Delivered.")),
            code=1,
        ),
        final_answer="...",
    )
    suite, summary = _import(tmp_path, {f"1_{DFS}.json": tree})
    assert summary.read["harness_observations"] == 1 and summary.read["recorded_calls"] == 1
    traj = _episode(suite, "G1-1")
    invented = traj.nodes[0]
    assert invented.kind == "invalid" and invented.calls[0].hallucinated
    assert invented.calls[0].observation is not None
    assert invented.calls[0].observation.content == no_such and invented.feedback is None
    prompt = messages_for(traj.prompt, traj.path_to(0))  # what the model saw for node 1
    assert prompt[-2]["tool_calls"][0]["function"]["name"] == HALLUCINATED_NAME
    assert prompt[-1] == {
        "role": "tool",
        "tool_call_id": invented.calls[0].id,
        "name": HALLUCINATED_NAME,
        "content": no_such,
    }
    _replays_exactly(suite / "original-runs" / DFS)


def test_6_finish_is_read_leniently_and_an_unusable_one_is_an_error_node(tmp_path: Path) -> None:
    """``give_answer`` without ``final_answer`` gets ToolBench's literal error and the search goes
    on below it; arguments that are not JSON are read as ToolBench reads them."""
    lenient = '{"return_type": "give_answer", "final_answer": "It is "delivered" now"}'
    unusable = finish(raw='{"return_type": "give_answer"}', code=2)
    unusable["children"][0]["children"] = [finish(raw=lenient)]  # the search went on below it
    tree = dfs_file(
        "Where is AB1?",
        call("track_for_parcels", {"code": "AB1"}, obs("delivered"), unusable),
        final_answer=lenient,
    )
    suite, _ = _import(tmp_path, {f"1_{DFS}.json": tree})
    traj = _episode(suite, "G1-1")
    assert [n.kind for n in traj.nodes] == ["action", "invalid", "finish"]
    (bad,) = traj.nodes[1].calls
    assert bad.observation is not None
    assert bad.observation.content == '{error:"must have "final_answer""}'
    assert traj.status.value == "answered" and traj.final_answer == 'It is "delivered" now'
    _replays_exactly(suite / "original-runs" / DFS)


def test_7_a_failed_model_call_prunes_its_branch_and_a_thought_is_a_turn(tmp_path: Path) -> None:
    """ToolBench turns a failed model call into a pruned Thought (code -1) and tries the next
    child; a thought without a call is a turn of its own, answered by nothing."""
    tree = dfs_file(
        "Where is AB1?",
        thought("openai.error.Timeout: Request timed out", code=-1),
        call(
            "track_for_parcels",
            {"code": "AB1"},
            obs("delivered"),
            thought("It was delivered, so I can answer.", finish("Delivered."), expand=3),
        ),
        final_answer="...",
    )
    suite, _ = _import(tmp_path, {f"1_{DFS}.json": tree})
    traj = _episode(suite, "G1-1")
    assert [(n.kind, n.parent) for n in traj.nodes] == [
        ("error", None),
        ("action", None),
        ("thought", 1),
        ("finish", 2),
    ]
    assert [e.kind for e in traj.errors] == ["infra"]
    after_thought = messages_for(traj.prompt, traj.path_to(2))
    assert after_thought[-1] == {
        "role": "assistant",
        "content": "It was delivered, so I can answer.",
    }
    assert traj.tree["model_errors"] == 1 and traj.status.value == "answered"
    _replays_exactly(suite / "original-runs" / DFS)


def test_8_cut_and_ascii_escaped_observations(tmp_path: Path) -> None:
    """ToolBench cuts observations at 1024 characters and appends "..."; a cut JSON object is
    still a successful call with its cut text. Non-ASCII is escaped, as ToolBench's json.dumps
    writes it, so replayed observations are the same texts."""
    items = {"items": [{"id": i, "name": f"shop {i}"} for i in range(100)]}
    cut = obs(items)[:1024] + "..."
    tree = dfs_file(
        "Find a shop.",
        call(
            "search_for_shops",
            {"q": "shop"},
            cut,
            call("track_for_parcels", {"code": "AB1"}, obs("Livré à Paris"), finish("Paris.")),
        ),
        final_answer="...",
    )
    suite, summary = _import(tmp_path, {f"1_{DFS}.json": tree})
    assert summary.read["truncated_observations"] == 1 and summary.read["recorded_calls"] == 2
    recorded = {r.api: r.response for r in load_suite(suite).recordings}
    assert recorded["search"].ok and recorded["search"].body.startswith('{"items": [{"id": 0')
    traj = _episode(suite, "G1-1")
    first = traj.nodes[0].calls[0].observation
    assert first is not None and first.ok and first.truncated and first.content == cut
    assert "\\u00e0" in (traj.nodes[1].calls[0].observation.content or "")  # type: ignore[union-attr]
    run = suite / "original-runs" / DFS
    _replays_exactly(run)
    report = replay_run(run)
    # the escaped text is the very same; the cut object matches on its visible part (its body is
    # now a string, which renders quoted)
    assert report.calls_matched == report.calls_checked == 2 and report.calls_exact == 1
