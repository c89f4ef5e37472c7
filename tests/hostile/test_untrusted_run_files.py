"""Hardening round three, issue 40 items 4 and 5: files that are not what a run wrote.

Item 4: the viewer, ``leaderboard`` and ``view --export`` hung on a FIFO or ``/dev/zero``
trajectories file (one lock held the whole viewer), and so did ``import toolbench-queries`` and
``toolbench-answers``; deep JSON gave ``RecursionError`` tracebacks in the importers and ``import
stb-cache``. Every such file is now read through ``sandbox.store.input_files``: a FIFO or a device
is refused unread, deep JSON is one line (or a skipped file, where an import skips what it
cannot read). Item 5: a stale ``trajectories.jsonl.zst`` silently hid ``trajectories.jsonl``
(pass rate 4.3% instead of 78%); a folder holding both is now one line naming both.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from sandbox.view.app import create_app
from tests.hostile.conftest import MINI
from tests.hostile.test_one_line_errors import cli
from tests.hostile.test_prediction_files import within
from tests.hostile.test_run_records import make_run, one_error_line

DEEP = "[" * 5000 + "1" + "]" * 5000


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("recorded"))


@pytest.fixture
def odd_runs(recorded: Path, tmp_path: Path) -> Path:
    """A folder of runs: one whole, one whose trajectories are a FIFO, one whose trajectories
    link to /dev/zero, one whose scores.json and one whose manifest.json are FIFOs."""
    root = tmp_path / "runs"
    root.mkdir()
    for name in ("whole", "fifo", "zero", "scores-fifo", "manifest-fifo"):
        shutil.copytree(recorded, root / name)
    for name, file in (
        ("fifo", "trajectories.jsonl"),
        ("scores-fifo", "scores.json"),
        ("manifest-fifo", "manifest.json"),
    ):
        (root / name / file).unlink()
        os.mkfifo(root / name / file)
    (root / "zero" / "trajectories.jsonl").unlink()
    (root / "zero" / "trajectories.jsonl").symlink_to("/dev/zero")
    # a run still going reads its trajectories to count them
    for name in ("fifo", "zero"):
        manifest = json.loads((root / name / "manifest.json").read_text())
        manifest["status"] = "running"
        (root / name / "manifest.json").write_text(json.dumps(manifest))
        (root / name / "scores.json").unlink()
    return root


def test_40_4_the_viewer_answers_beside_a_fifo_or_a_device_and_names_them(
    odd_runs: Path,
) -> None:
    """On main the index read the FIFO while holding the viewer's lock: every page hung."""
    client = TestClient(create_app(odd_runs), raise_server_exceptions=False)
    with within(60):
        runs = {r["key"]: r for r in client.get("/api/runs").json()}
        assert runs["whole"]["scored"] and "manifest-fifo" not in runs  # no run's manifest
        assert "not a regular file" in runs["scores-fifo"]["error"]
        for key in ("fifo", "zero"):
            page = client.get(f"/api/runs/{key}/episodes")
            assert page.status_code >= 400 and "not a regular file" in page.text, page.text
        assert client.get("/api/runs/whole/episodes").status_code == 200


@pytest.mark.parametrize("run", ["fifo", "zero"])
def test_40_4_view_export_refuses_a_fifo_or_a_device_in_one_line(
    run: str, odd_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with within(60):
        code, err = cli(["view", "--export", str(tmp_path / "out"), str(odd_runs / run)], capsys)
    assert code == 1 and "not a regular file" in one_error_line(err), err


def test_40_4_the_leaderboard_lists_what_it_can_read_beside_fifos(
    odd_runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main `sandbox leaderboard` hung on the FIFO scores.json."""
    with within(60):
        code, err = cli(["leaderboard", str(odd_runs), "--json"], capsys)
    assert code == 0 and "Traceback" not in err, err


def _cache(root: Path, content: str) -> Path:
    folder = root / "cache" / "Finance" / "converter_for_finance"
    folder.mkdir(parents=True)
    (folder / "convert.json").write_text(content)
    return root / "cache"


@pytest.mark.parametrize(
    "content",
    [
        DEEP,
        json.dumps({"{'a': 1}": DEEP}),
        json.dumps({DEEP: {"error": "", "response": "x"}}),
        json.dumps({"{'a': 1}": {"error": "", "response": DEEP}}),
        None,  # a FIFO
    ],
)
def test_40_4_import_stb_cache_skips_deep_json_and_fifos_it_cannot_read(
    content: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main: RecursionError tracebacks, and a hang on the FIFO."""
    if content is None:
        cache = _cache(tmp_path, "")
        file = next(cache.rglob("convert.json"))
        file.unlink()
        os.mkfifo(file)
    else:
        cache = _cache(tmp_path, content)
    with within(60):
        code, err = cli(["import", "stb-cache", str(cache), "--out", str(tmp_path / "s")], capsys)
    assert code in (0, 1) and "Traceback" not in err, err


@pytest.mark.parametrize("kind", ["toolbench-queries", "toolbench-answers"])
@pytest.mark.parametrize("odd", ["fifo", "deep"])
def test_40_4_toolbench_imports_refuse_a_fifo_or_deep_json_in_one_line(
    kind: str, odd: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main: a hang on the FIFO, a RecursionError traceback on deep JSON."""
    folder = tmp_path / "in"
    folder.mkdir()
    file = folder / "G1_query.json" if kind == "toolbench-queries" else folder / "1_DFS.json"
    if odd == "fifo":
        os.mkfifo(file)
    else:
        file.write_text(DEEP)
    target = file if kind == "toolbench-queries" else folder
    with within(60):
        code, err = cli(["import", kind, str(target), "--out", str(tmp_path / "s")], capsys)
    said = "not a regular file" if odd == "fifo" else "JSON nested deeper than 256 levels"
    assert code == 1 and said in one_error_line(err), err


# -- item 5 ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory, recorded: Path) -> Path:
    """A plain run with a stale compressed file of another run beside its trajectories."""
    from sandbox.cli import main

    out = tmp_path_factory.mktemp("both")
    argv = ["run", "--suite", str(MINI), "--model", "noisy-reference", "--out", str(out)]
    assert main([*argv, "--run-id", "z", "--compress", "--no-plots", "--tasks", "mini_g1_*"]) == 0
    run = out / "run"
    shutil.copytree(recorded, run)
    shutil.copy(out / "z" / "trajectories.jsonl.zst", run / "trajectories.jsonl.zst")
    return run


@pytest.mark.parametrize(
    "command",
    [
        ["eval", "{run}"],
        ["replay", "{run}"],
        ["run", "--resume", "{run}"],
        ["view", "--export", "{out}", "{run}"],
        ["export", "toolbench", "{run}", "{out}"],
    ],
)
def test_40_5_a_stale_compressed_file_beside_the_trajectories_is_one_line_naming_both(
    command: list[str], both: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main the compressed file was read instead of the run's own trajectories, silently
    (a pass rate of 4.3% instead of 78%)."""
    argv = [w.format(run=both, out=tmp_path / "out") for w in command]
    code, err = cli(argv, capsys)
    line = one_error_line(err)
    assert code == 1 and "holds both trajectories.jsonl and trajectories.jsonl.zst" in line, err
