"""``--system-prompt-file PATH``: a user's own prompt (ToolBench's, say) is sent as the system
prompt, the run records its text and SHA-256, and a rerun from the manifest needs no file."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from sandbox.cli import main

ROOT = Path(__file__).resolve().parents[3]
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"
PROMPT = "You are a careful assistant of the user's own wording.\nUse the tools.\n"


def _run(tmp_path: Path, run_id: str, *flags: str) -> Path:
    out = tmp_path / "runs"
    argv = ["run", "--suite", str(MINI), "--model", "reference", "--out", str(out)]
    assert main([*argv, "--run-id", run_id, "--no-plots", *flags]) == 0
    return out / run_id


def test_the_file_is_the_system_prompt_and_the_manifest_holds_its_hash(tmp_path: Path) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(PROMPT, encoding="utf-8")
    run = _run(tmp_path, "own-prompt", "--system-prompt-file", str(prompt))
    for line in (run / "trajectories.jsonl").read_text().splitlines():
        system = json.loads(line)["prompt"][0]
        assert system == {"role": "system", "content": PROMPT}
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["agent"]["system_prompt_sha256"] == hashlib.sha256(PROMPT.encode()).hexdigest()
    assert manifest["config"]["agent"]["options"]["system_prompt"] == PROMPT


def test_the_manifest_config_reruns_without_the_file(tmp_path: Path) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(PROMPT, encoding="utf-8")
    first = _run(tmp_path, "first", "--system-prompt-file", str(prompt))
    prompt.unlink()  # the manifest holds the text: the file is not needed again
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(json.loads((first / "manifest.json").read_text())["config"]))
    second = _run(tmp_path, "second", "--config", str(config))
    system = json.loads((second / "trajectories.jsonl").read_text().splitlines()[0])["prompt"][0]
    assert system["content"] == PROMPT


def test_no_file_given_records_no_hash(tmp_path: Path) -> None:
    run = _run(tmp_path, "default-prompt")
    assert "system_prompt_sha256" not in json.loads((run / "manifest.json").read_text())["agent"]


@pytest.mark.parametrize(
    ("content", "extra", "expected"),
    [
        (None, (), "no such file"),
        (b"\xff\xfe not text", (), "is not UTF-8 text"),
        (b"  \n", (), "is empty"),
        (PROMPT.encode(), ("--system-prompt", "another prompt"), "give one"),
    ],
    ids=["missing", "not-utf8", "empty", "two-prompts"],
)
def test_a_bad_prompt_file_is_one_line_and_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: bytes | None,
    extra: tuple[str, ...],
    expected: str,
) -> None:
    prompt = tmp_path / "prompt.txt"
    if content is not None:
        prompt.write_bytes(content)
    out = tmp_path / "runs"
    argv = ["run", "--suite", str(MINI), "--out", str(out), "--system-prompt-file", str(prompt)]
    assert main([*argv, *extra]) == 2
    err = capsys.readouterr().err
    assert expected in err and "system_prompt_file" in err and err.count("\n") == 1
    assert not out.exists()
