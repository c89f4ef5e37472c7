"""``sandbox run`` end to end: the --json line, a real OpenAI-compatible endpoint, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness_suite import suite_path, write_suite

from sandbox.cli import main
from tests.agents.models.openai_server import (
    ScriptedOpenAIServer,
    finish_reply,
    free_port,
    tool_call_reply,
)


def _base(tmp_path: Path) -> list[str]:
    return ["run", "--suite", str(suite_path(tmp_path)), "--out", str(tmp_path / "runs")]


def test_json_prints_exactly_one_summary_line(tmp_path: Path, capsys) -> None:
    code = main([*_base(tmp_path), "--agent", "react", "--model", "reference", "--json"])
    out, err = capsys.readouterr()
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 1, out
    summary = json.loads(lines[0])
    assert set(summary) == {
        "run",
        "episodes",
        "n",
        "pass_rate",
        "by_status",
        "model_calls",
        "tokens",
        "cost_usd",
    }
    assert summary["cost_usd"] == 0.0 and summary["model_calls"] > 0  # offline: free
    assert summary["pass_rate"] == 1.0 and summary["episodes"] == summary["n"] > 0
    assert Path(summary["run"], "manifest.json").is_file()
    assert "pass rate" in err and "run folder" in err  # the table goes to stderr


def test_table_and_run_folder_on_stdout(tmp_path: Path, capsys) -> None:
    code = main([*_base(tmp_path), "--agent", "dfsdt", "--model", "noisy-reference:0.3"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert "pass rate" in out and "run folder:" in out and "all" in out


def test_eval_of_a_finished_run_writes_the_same_scores_it_ended_with(tmp_path: Path, capsys):
    code = main([*_base(tmp_path), "--agent", "dfsdt", "--model", "noisy-reference", "--json"])
    run = Path(json.loads(capsys.readouterr().out.splitlines()[-1])["run"])
    assert code == 0
    scored = (run / "scores.json").read_bytes()
    assert main(["eval", str(run), "--no-plots"]) == 0
    assert (run / "scores.json").read_bytes() == scored  # the same defaults, the same labels


def test_openai_compatible_endpoint_drives_a_run(tmp_path: Path, capsys) -> None:
    with ScriptedOpenAIServer(models=["scripted-model"]) as server:
        server.push(
            tool_call_reply("current_for_weatherly", {"city": "Oslo"}, content="Look it up."),
            finish_reply("It is 4 C and snow in Oslo."),
        )
        model = f"openai:scripted-model@{server.base_url}"
        suite = str(write_suite(tmp_path / "own"))  # the scripted turns name its ids
        code = main(
            [
                "run",
                "--suite",
                suite,
                "--out",
                str(tmp_path / "runs"),
                "--agent",
                "react",
                "--model",
                model,
                "--tasks",
                "weather-oslo",
                "--json",
            ]
        )
        requests = list(server.requests)
        probes = server.model_list_calls
    out, err = capsys.readouterr()
    assert code == 0, err
    summary = json.loads(out)
    assert summary["pass_rate"] == 1.0 and summary["by_status"] == {"answered": 1}
    assert probes == 1 and len(requests) == 2
    offered = {t["function"]["name"] for t in requests[0]["tools"]}
    assert offered == {"current_for_weatherly", "Finish"}
    assert requests[0]["model"] == "scripted-model"
    traj = json.loads(Path(summary["run"], "trajectories.jsonl").read_text().splitlines()[0])
    assert traj["nodes"][0]["calls"][0]["observation"]["provenance"] == "hit"


def test_unreachable_qwen_exits_2_with_the_vllm_hint(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("SANDBOX_QWEN_7B_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    code = main([*_base(tmp_path), "--model", "qwen-7b"])
    _, err = capsys.readouterr()
    assert code == 2
    assert "vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice" in err
    assert "--tool-call-parser hermes" in err
    assert "SANDBOX_QWEN_7B_BASE_URL" in err and "openai:<model>@<base_url>" in err
    assert "Traceback" not in err
    assert not (tmp_path / "runs").exists()  # nothing written before the probe


@pytest.mark.parametrize("kind", ["openai", "openai-text"])
def test_unreachable_endpoint_is_probed_through_the_text_adapter_too(
    tmp_path: Path, capsys, kind: str
) -> None:
    model = f"{kind}:m@http://127.0.0.1:{free_port()}/v1"
    code = main([*_base(tmp_path), "--model", model])
    _, err = capsys.readouterr()
    assert code == 2 and "unreachable" in err and "Traceback" not in err
    assert not (tmp_path / "runs").exists()


def test_user_mistakes_are_clear_errors(tmp_path: Path, capsys) -> None:
    assert main([*_base(tmp_path), "--agent", "reflexion"]) == 2
    assert "known agents: react, dfsdt, react@<n>" in capsys.readouterr().err
    assert main([*_base(tmp_path), "--concurrency", "0"]) == 2
    assert "--concurrency" in capsys.readouterr().err
    assert main(["run", "--resume", str(tmp_path / "nope")]) == 1
    assert "not a run folder" in capsys.readouterr().err


def test_model_cache_makes_a_rerun_free_and_exact(tmp_path: Path, capsys) -> None:
    """`--model-cache`: the second run makes no model request and records the same turns."""
    suite = str(write_suite(tmp_path / "own"))
    cache = tmp_path / "model-cache.sqlite"
    runs: list[dict] = []
    counts: list[int] = []
    for name in ("first", "second"):
        with ScriptedOpenAIServer(models=["scripted-model"]) as server:
            server.push(
                tool_call_reply("current_for_weatherly", {"city": "Oslo"}, content="Look."),
                finish_reply("It is 4 C and snow in Oslo."),
            )
            argv = ["run", "--suite", suite, "--out", str(tmp_path / name), "--agent", "react"]
            argv += ["--model", f"openai:scripted-model@{server.base_url}"]
            argv += ["--tasks", "weather-oslo", "--model-cache", str(cache), "--json"]
            assert main(argv) == 0, capsys.readouterr().err
            counts.append(len(server.requests))
        summary = json.loads(capsys.readouterr().out)
        runs.append(json.loads(Path(summary["run"], "trajectories.jsonl").read_text()))
    assert counts == [2, 0]
    first, second = runs
    assert [n["content"] for n in first["nodes"]] == [n["content"] for n in second["nodes"]]

    def calls(traj: dict) -> list:
        return [
            (c["name"], c["arguments"], c["observation"]["content"])
            for n in traj["nodes"]
            for c in n["calls"]
        ]

    assert calls(first) == calls(second) and calls(first)
    assert first["final_answer"] == second["final_answer"] == "It is 4 C and snow in Oslo."
