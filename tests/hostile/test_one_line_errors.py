"""Careless input that used to end in a traceback or a silent success: each is one ``error:``
line now, exit 2 for a bad option and 1 for a run folder that cannot be used (hardening round
two, items 6, 12 and 13)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.cli import main
from tests.hostile.conftest import MINI, ROOT
from tests.hostile.test_run_records import make_run, one_error_line


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``sandbox ARGV`` in process: its exit code (argparse's too) and its stderr."""
    try:
        code = main(argv)
    except SystemExit as e:
        code = int(e.code or 0)
    return code, capsys.readouterr().err


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("recorded"))


def _without_write_permission(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """``python -m sandbox ARGV`` unable to write where the file modes say it cannot: root
    would write anyway, so a root test drops the capability that lets it (``setpriv``)."""
    command = [sys.executable, "-m", "sandbox", *argv]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: file modes cannot stop a write")
        command = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--", *command]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_27_a_read_only_run_folder_is_one_line_for_eval_and_resume(
    recorded: Path, tmp_path: Path
) -> None:
    """On main eval ended in a PermissionError traceback."""
    run = tmp_path / "run"
    shutil.copytree(recorded, run)
    (run / ".lock").unlink()
    for path in [run, *run.iterdir()]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        done = _without_write_permission(["eval", str(run), "--no-plots"])
        assert done.returncode == 1
        assert "scores.json" in one_error_line(done.stderr) and "ermission denied" in done.stderr
        done = _without_write_permission(["run", "--resume", str(run), "--no-plots"])
        assert done.returncode == 1
        assert "ermission denied" in one_error_line(done.stderr)
    finally:
        run.chmod(0o755)


def test_27_a_file_named_as_an_output_folder_is_one_line(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main export and import ended in FileExistsError tracebacks."""
    file = tmp_path / "a-file"
    file.write_text("x")
    queries = tmp_path / "q.json"
    queries.write_text(json.dumps([{"query": "q", "query_id": 1, "api_list": []}]))
    for argv in (
        ["export", "toolbench", str(recorded), str(file)],
        ["import", "toolbench-queries", str(queries), "--out", str(file)],
        ["view", "--export", str(file), str(recorded)],
    ):
        code, err = cli(argv, capsys)
        assert code == 2 and "is a file, not a folder" in one_error_line(err), argv


def test_27_an_overlay_that_is_no_database_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main `suite stats` ended in a MockToolsError traceback."""
    junk = tmp_path / "overlay.sqlite"
    junk.write_text("not sqlite at all " * 100)
    for action in ("stats", "freeze"):
        code, err = cli(["suite", action, str(MINI), "--overlay", str(junk)], capsys)
        assert code == 2 and "cannot open the overlay" in one_error_line(err), action


def test_27_a_negative_fork_step_and_an_unknown_log_level_are_one_line(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main: a pydantic ValidationError and a KeyError from uvicorn."""
    fork = ["replay", str(recorded), "--task", "mini_u_refund", "--until-step", "-1"]
    code, err = cli([*fork, "--then-model", "reference"], capsys)
    assert code == 2 and "until_step" in one_error_line(err)
    code, err = cli(["serve", str(MINI), "--log-level", "loud"], capsys)
    assert code == 2 and "invalid choice: 'loud'" in one_error_line(err)
    assert len(err.strip().splitlines()) == 2  # the error and where the usage is, no usage dump


def test_27_command_line_text_that_is_not_utf8_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--system-prompt "$(printf '\\xff')"`` arrives as a lone surrogate; on main the run
    crashed with a PydanticSerializationError when it named its folder."""
    argv = ["run", "--suite", str(MINI), "--model", "reference", "--out", str(tmp_path)]
    code, err = cli([*argv, "--system-prompt", "\udcff"], capsys)
    assert code == 2 and "--system-prompt is not UTF-8" in one_error_line(err)
    assert not any(tmp_path.iterdir())


def test_27_a_broken_manifest_is_one_line_without_pydantic_links(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(recorded, run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["config"]["trials"] = "many"
    manifest["status"] = 7
    (run / "manifest.json").write_text(json.dumps(manifest))
    code, err = cli(["eval", str(run)], capsys)
    line = one_error_line(err)
    assert code == 1 and "manifest.json" in line and "config.trials" in line
    assert len(err.strip().splitlines()) == 1 and "pydantic.dev" not in err


def test_33_queries_without_one_usable_query_are_an_error_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main the import exited 0 and wrote a suite of 0 tasks."""
    queries = tmp_path / "q.json"
    queries.write_text(json.dumps([{"query": "no id and no api list"}, {"query_id": 3}]))
    out = tmp_path / "suite"
    code, err = cli(["import", "toolbench-queries", str(queries), "--out", str(out)], capsys)
    assert code == 2
    assert "no usable query in" in one_error_line(err) and "2 read, 2 skipped" in err
    assert not out.exists()
    (tmp_path / "empty.json").write_text("[]")
    code, err = cli(
        ["import", "toolbench-queries", str(tmp_path / "empty.json"), "--out", str(out)], capsys
    )
    assert code == 2 and not out.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--model", ""],
        ["run", "--simulator", ""],
        ["run", "--model="],
        ["run", "--tools-url", " "],
        ["probe", "--model", ""],
        ["eval", "{run}", "--judge", ""],
        ["replay", "{run}", "--task", "mini_u_refund", "--until-step", "0", "--then-model", ""],
    ],
)
def test_34_an_empty_model_name_is_an_error_never_the_default(
    argv: list[str], recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main `--simulator ''` and `--tools-url ' '` ran the run as if they were not given."""
    argv = [a.format(run=recorded) for a in argv]
    if argv[0] in ("run", "probe"):
        argv += ["--suite", str(MINI)] + (["--out", str(tmp_path)] if argv[0] == "run" else [])
    code, err = cli(argv, capsys)
    assert code == 2 and "empty" in one_error_line(err)
    assert not any(tmp_path.iterdir())
