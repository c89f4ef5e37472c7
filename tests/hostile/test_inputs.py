"""Hostile input to the harness: odd task ids, broken suite files, empty selections, secrets in
model URLs (numbered as in the hardening issue)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from mock_tools import SuiteError, load_suite
from sandbox.cli import main
from sandbox.store import RunStore, read_trajectories
from tests.agents.models.openai_server import ScriptedOpenAIServer
from tests.hostile.conftest import MINI

RUN = ["run", "--agent", "react", "--no-plots", "--json"]


def _suite(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    shutil.copytree(MINI, suite)
    return suite


def test_03_any_unicode_task_id_works_end_to_end(tmp_path: Path, capsys) -> None:
    suite = _suite(tmp_path)
    tasks = yaml.safe_load((suite / "tasks" / "tasks.yaml").read_text())
    odd = "météo-東京-😀 / a%20b"
    tasks[1]["id"] = odd  # the parcel-tracking task, now with an id no header can carry raw
    (suite / "tasks" / "tasks.yaml").write_text(yaml.safe_dump(tasks, allow_unicode=True))
    argv = [*RUN, "--suite", str(suite), "--model", "reference", "--out", str(tmp_path / "runs")]
    assert main([*argv, "--tasks", odd]) == 0
    run = json.loads(capsys.readouterr().out)["run"]
    (traj,) = read_trajectories(run)
    assert traj.scenario_id == odd and traj.status.value == "answered"
    assert traj.nodes[0].calls[0].observation.provenance == "hit"


def test_04_duplicate_task_ids_are_rejected_naming_both_files(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    tasks = yaml.safe_load((suite / "tasks" / "tasks.yaml").read_text())
    (suite / "tasks" / "more.yaml").write_text(yaml.safe_dump([tasks[0]]))
    with pytest.raises(SuiteError) as info:
        load_suite(suite)
    message = str(info.value)
    assert "duplicate task id 'mini_g1_kettle_price'" in message
    assert "more.yaml" in message and "tasks.yaml" in message


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("tasks/bad.yaml", b"- id: x\n  query: caf\xe9\n", "tasks/bad.yaml:2: not UTF-8 text"),
        ("recordings/bad.jsonl", b'\n{"tool": "\xff"}\n', "bad.jsonl:2: not UTF-8"),
        ("recordings/big.jsonl", b'{"n": ' + b"9" * 5000 + b"}\n", "big.jsonl:1: unreadable JSON"),
        ("recordings/deep.jsonl", b"[" * 100000 + b"]" * 100000 + b"\n", "nested too deeply"),
        ("tasks/deep.yaml", b"a: " + b"[" * 5000 + b"]" * 5000 + b"\n", "tasks/deep.yaml"),
        (
            "tasks/broken.yaml",
            b"- id: x\n  query: [unclosed\n",
            "tasks/broken.yaml:3: invalid YAML",
        ),
    ],
)
def test_05_broken_suite_files_are_clear_errors_with_file_and_line(
    tmp_path: Path, capsys, name: str, content: bytes, expected: str
) -> None:
    suite = _suite(tmp_path)
    (suite / name).write_bytes(content)
    assert main([*RUN, "--suite", str(suite), "--model", "reference"]) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err


def test_10_an_empty_or_unmatched_task_selection_is_an_error(tmp_path: Path, capsys) -> None:
    argv = [*RUN, "--suite", str(MINI), "--model", "reference", "--out", str(tmp_path)]
    assert main([*argv, "--tasks", ""]) == 2
    assert "the value of --tasks is empty" in capsys.readouterr().err  # refused as it is read
    assert main([*argv, "--tasks", ","]) == 2
    assert "--tasks names no task" in capsys.readouterr().err
    assert main([*argv, "--tasks", "mini_g1_trak"]) == 2
    err = capsys.readouterr().err
    assert "no task matches mini_g1_trak" in err and "mini_g1_track" in err
    assert not list(tmp_path.iterdir())


def test_12_credentials_in_a_model_url_are_never_written_or_printed(tmp_path, capsys) -> None:
    with ScriptedOpenAIServer() as server:
        host = server.base_url.removeprefix("http://")
        model = f"openai:scripted@http://alice:s3cret-pw@{host}"
        argv = [*RUN, "--suite", str(MINI), "--model", model, "--out", str(tmp_path / "runs")]
        assert main([*argv, "--tasks", "mini_g1_track"]) == 0
        out, err = capsys.readouterr()
        run = Path(json.loads(out)["run"])
        written = "".join(
            p.read_text() for p in run.iterdir() if p.suffix in (".json", ".jsonl", ".md")
        )
        for secret in ("s3cret-pw", "alice"):
            assert secret not in written and secret not in out and secret not in err
        assert "http://***@" in written
        # a resume needs the credentials again, and refuses another model
        assert main(["run", "--resume", str(run), "--no-plots"]) == 2
        assert "carried credentials" in capsys.readouterr().err
        assert main(["run", "--resume", str(run), "--model", "reference", "--no-plots"]) == 2
        assert "not change it" in capsys.readouterr().err
        assert main(["run", "--resume", str(run), "--model", model, "--no-plots"]) == 0
    capsys.readouterr()
    assert RunStore.open(run).manifest.status == "completed"
    # an unreachable endpoint's message hides them too
    bad = "openai:m@http://bob:hunter2@127.0.0.1:9/v1"
    assert main([*RUN, "--suite", str(MINI), "--model", bad, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "hunter2" not in err and "unreachable" in err


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("openai:m@http://u:p@h:1/v1", "openai:m@http://***@h:1/v1"),
        ("https://h/v1?api_key=sk-1&x=2", "https://h/v1?api_key=***&x=2"),
        ("https://h/v1?token=t&access_token=a", "https://h/v1?token=***&access_token=***"),
        (
            "error: cannot reach http://tok@h/ (refused)",
            "error: cannot reach http://***@h/ (refused)",
        ),
        ("qwen-7b", "qwen-7b"),
    ],
)
def test_12_redaction(text: str, expected: str) -> None:
    from sandbox.store.redact import redact

    assert redact(text) == expected
