"""The model cache is exact: samples that should differ (ReAct@N's chains, trials) are cached
apart, whatever the concurrency; a run whose every answer is cached needs no endpoint; a miss
with the endpoint down stops the run with the endpoint's message, resumable."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from sandbox.cli import main
from sandbox.store import RunStore, read_trajectories
from tests.agents.models.openai_server import ScriptedOpenAIServer, tool_call_reply

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "mini"


def _numbered_give_ups() -> object:
    """Every request gets a give-up whose text numbers the request (answers differ by order)."""
    counter = itertools.count(1)

    def reply(body: dict) -> object:
        args = {"return_type": "give_up_and_restart", "final_answer": f"sample {next(counter)}"}
        return tool_call_reply("Finish", args)

    return reply


def _argv(tmp_path: Path, server: ScriptedOpenAIServer, name: str, *extra: str) -> list[str]:
    return [
        "run",
        "--suite",
        str(MINI),
        "--tasks",
        "mini_g1_track",
        "--model",
        f"openai:scripted-model@{server.base_url}",
        "--model-cache",
        str(tmp_path / "cache.sqlite"),
        "--out",
        str(tmp_path / name),
        "--no-plots",
        "--json",
        *extra,
    ]


def _answers(run: str) -> dict[int, list[str]]:
    """Per trial, the give-up texts of every node, in node order."""
    return {
        t.trial: [n.finish.final_answer for n in t.nodes if n.finish]
        for t in read_trajectories(run)
    }


def test_react_at_4_caches_each_chain_apart(tmp_path: Path, capsys) -> None:
    with ScriptedOpenAIServer() as server:
        server.default = _numbered_give_ups()
        assert main(_argv(tmp_path, server, "first", "--agent", "react@4")) == 0
        first = json.loads(capsys.readouterr().out)["run"]
        assert len(server.requests) == 4  # four chains, four draws of the same first request
        assert main(_argv(tmp_path, server, "second", "--agent", "react@4")) == 0
        second = json.loads(capsys.readouterr().out)["run"]
        assert len(server.requests) == 4  # all four from the cache
    assert _answers(first) == _answers(second)
    assert _answers(first)[0] == ["sample 1", "sample 2", "sample 3", "sample 4"]


def test_trials_are_independent_samples_whatever_the_concurrency(tmp_path: Path, capsys) -> None:
    with ScriptedOpenAIServer() as server:
        server.default = _numbered_give_ups()
        trials = ["--agent", "react", "--trials", "3"]
        assert main(_argv(tmp_path, server, "first", *trials, "--concurrency", "3")) == 0
        first = json.loads(capsys.readouterr().out)["run"]
        assert len(server.requests) == 3
        assert main(_argv(tmp_path, server, "second", *trials, "--concurrency", "1")) == 0
        second = json.loads(capsys.readouterr().out)["run"]
        assert len(server.requests) == 3
    by_trial = _answers(first)
    assert sorted(a for answers in by_trial.values() for a in answers) == [
        "sample 1",
        "sample 2",
        "sample 3",
    ]
    assert _answers(second) == by_trial  # each trial gets its own answer back


def test_a_fully_cached_run_needs_no_endpoint_and_a_miss_says_it_is_down(
    tmp_path: Path, capsys
) -> None:
    with ScriptedOpenAIServer() as server:
        server.default = _numbered_give_ups()
        assert main(_argv(tmp_path, server, "first", "--agent", "react")) == 0
        capsys.readouterr()
    # the server is gone: every answer is cached, so the run neither probes nor calls
    assert main(_argv(tmp_path, server, "second", "--agent", "react")) == 0
    run = json.loads(capsys.readouterr().out)["run"]
    assert _answers(run)[0] == ["sample 1"]
    # a request the cache does not hold: the endpoint's message, exit 2, the run resumable
    assert main(_argv(tmp_path, server, "third", "--agent", "react", "--trials", "2")) == 2
    err = capsys.readouterr().err
    assert "is unreachable" in err and "start" in err
    (folder,) = (tmp_path / "third").iterdir()
    store = RunStore.open(folder)
    assert store.manifest.status == "failed" and "unreachable" in (store.manifest.error or "")
    assert [t.trial for t in read_trajectories(folder)] == [0]  # the cached trial is kept
