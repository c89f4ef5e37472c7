"""``sandbox view`` as a user runs it: serving over real HTTP, exporting, and one-line errors for
what it cannot do; and a piped ``sandbox ... | head`` ending without a traceback."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from conftest import ROOT, TASKS, ViewRuns

from sandbox.cli import main

SANDBOX = [sys.executable, "-m", "sandbox"]


def test_serving_a_run_folder_opens_on_that_run(view_runs: ViewRuns) -> None:
    run = view_runs.path(view_runs.dfsdt)
    proc = subprocess.Popen(
        [*SANDBOX, "view", str(run), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = re.search(r"http://\S+", line)
        assert url, line + (proc.stderr.read() if proc.stderr else "")
        assert url.group().endswith(f"/runs/{view_runs.dfsdt}")
        base = url.group().split("/runs/")[0]
        deadline = time.monotonic() + 15
        while True:
            try:
                runs = httpx.get(f"{base}/api/runs", timeout=2).json()
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the viewer did not answer"
                time.sleep(0.1)
        assert {r["key"] for r in runs} == {view_runs.dfsdt, view_runs.react, view_runs.reference}
        assert httpx.get(url.group(), timeout=5).status_code == 200
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=15)


def test_export_writes_pages_that_carry_their_data(
    view_runs: ViewRuns, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "site"
    runs = [str(view_runs.path(view_runs.react)), str(view_runs.path(view_runs.dfsdt))]
    assert main(["view", "--export", str(out), *runs]) == 0
    assert "exported 2 run(s)" in capsys.readouterr().out
    for page in ("index.html", "leaderboard.html", "compare.html", "static/app.js", "runs.json"):
        assert (out / page).is_file(), page
    episode = out / "runs" / view_runs.dfsdt / "episodes" / TASKS[0] / "0.html"
    html = episode.read_text()
    assert 'id="page-data"' in html and 'src="../../../../static/app.js"' in html
    assert "</script" not in html.split('id="page-data"')[1].split("</script>")[0]
    assert (out / "runs" / view_runs.dfsdt / "pass_rate.png").is_file()
    # exporting again over the earlier export works; over another folder it does not
    assert main(["view", "--export", str(out), runs[0]]) == 0
    assert not (out / "runs" / view_runs.dfsdt).exists()
    other = tmp_path / "notes"
    other.mkdir()
    (other / "todo.txt").write_text("mine")
    assert main(["view", "--export", str(other), runs[0]]) == 2
    assert (other / "todo.txt").read_text() == "mine"


def test_what_view_refuses(view_runs: ViewRuns, tmp_path: Path, capsys) -> None:
    assert main(["view", str(tmp_path / "nowhere")]) == 2
    assert main(["view", str(view_runs.root), str(view_runs.root)]) == 2
    assert main(["view", "--export", str(tmp_path / "x"), str(tmp_path)]) == 2  # no runs there
    assert main(["view", "--export", str(tmp_path / "y"), str(ROOT / "docs")]) == 2
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["view", str(view_runs.root), "--port", str(port)]) == 2
    assert main(["view", str(view_runs.root), "--port", "70000"]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 6 and "choose another --port" in errors[4]


@pytest.mark.parametrize(
    "argv",
    [["export", "toolbench", "{run}", "{tmp}"], ["leaderboard", "--runs-dir", "{root}", "--md"]],
)
def test_a_closed_pipe_ends_quietly(view_runs: ViewRuns, tmp_path: Path, argv: list[str]) -> None:
    run = view_runs.path(view_runs.react)
    args = [a.format(root=view_runs.root, run=run, tmp=tmp_path) for a in argv]
    read_end, write_end = os.pipe()
    proc = subprocess.Popen([*SANDBOX, *args], stdout=write_end, stderr=subprocess.PIPE, cwd=ROOT)
    os.close(write_end)
    os.close(read_end)  # the reader is gone before the first line (`| head -0`)
    _, err_bytes = proc.communicate(timeout=60)
    err, code = err_bytes.decode(), proc.returncode
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert code in (0, 141)
