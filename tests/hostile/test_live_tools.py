"""Runs whose tools were live: one regression test per defect of the hardening issue (numbered
as there)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mock_tools import create_app, load_suite
from sandbox.cli import main
from sandbox.replay import replay_run
from sandbox.store import RunConfig, read_trajectories
from sandbox.tool_envs import open_tool_envs
from tests.hostile.conftest import MINI, serving


def test_21_a_tools_url_run_replays_after_its_server_is_gone(tmp_path: Path, capsys) -> None:
    out = tmp_path / "runs"
    argv = ["run", "--suite", str(MINI), "--agent", "dfsdt", "--model", "noisy-reference:0.4"]
    argv += ["--no-plots", "--out", str(out), "--run-id", "live", "--trials", "2"]
    with serving(create_app(load_suite(MINI))) as url:
        assert main([*argv, "--tools-url", url]) == 0
    # the server is stopped: nothing answers at that URL any more
    recorded = read_trajectories(out / "live")
    assert sum(len(n.calls) for t in recorded for n in t.nodes) > 0
    report = replay_run(out / "live")
    assert report.episodes == len(recorded) and report.divergent == 0
    assert report.calls_checked > 0 and report.calls_matched == report.calls_checked
    capsys.readouterr()
    assert main(["replay", str(out / "live")]) == 0
    shown = capsys.readouterr()
    assert "Traceback" not in shown.err and "does not answer" not in shown.err


def test_21_only_the_recorded_calls_are_answered_each_as_often_as_it_was_made(
    tmp_path: Path,
) -> None:
    """The recorded observations answer the calls that were made, the k-th identical call with
    the k-th recorded answer; anything else is told so (provenance ``unrecorded``), so a replay
    whose agent calls something else diverges there."""
    out = tmp_path / "runs"
    argv = ["run", "--suite", str(MINI), "--agent", "react", "--model", "reference"]
    argv += ["--no-plots", "--out", str(out), "--run-id", "live", "--tasks", "mini_g1_track"]
    with serving(create_app(load_suite(MINI))) as url:
        assert main([*argv, "--tools-url", url]) == 0
    (episode,) = read_trajectories(out / "live")
    (call,) = [c for n in episode.nodes for c in n.calls]
    assert call.args is not None and call.observation is not None
    config = RunConfig(suite=str(MINI), tools_replay=str(out / "live"))
    suite = load_suite(MINI)
    (task,) = [t for t in suite.tasks if t.id == "mini_g1_track"]
    asyncio.run(_check_recorded_env(config, suite, task, episode, call, str(out / "live")))


async def _check_recorded_env(config, suite, task, episode, call, run: str) -> None:
    async with open_tool_envs(config, suite) as tools:
        assert tools.report() == {"transport": "recorded", "run": run}
        env = tools.for_episode(task, session="replay/mini_g1_track/0")
        assert env.functions == episode.functions
        name = call.function or call.name
        other = await env.call(name, {**call.args, "extra": 1})
        assert other.provenance == "unrecorded" and not other.ok
        same = await env.call(name, dict(reversed(list(call.args.items()))))
        assert same == call.observation  # argument order does not matter
        again = await env.call(name, call.args)
        assert again.provenance == "unrecorded"  # it was made once
        elsewhere = tools.for_episode(task, session="replay/mini_g1_track/1")
        assert (await elsewhere.call(name, call.args)).provenance == "unrecorded"  # no trial 1
