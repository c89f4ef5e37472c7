"""`make run` on a fresh copy of the repository prints the table and the run folder, offline.

The copy holds only the files git tracks (what a clone has). It reuses the virtualenv the tests
run in (`VENV=`), whose install stamp matches the same pyproject.toml, so nothing is installed
and no network is needed; the code imported is the copy's (PYTHONPATH).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _installed_location(venv: Path) -> str:
    """Where the virtualenv imports `sandbox` from, outside any checkout's folder."""
    code = "import sandbox; print(sandbox.__file__)"
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code],
        cwd="/",
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _fresh_copy(dest: Path) -> Path:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout to know which files a clone has")
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, files):
        src = ROOT / name.decode()
        if src.is_file():
            target = dest / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    return dest


def _stamp(venv: Path, pyproject: Path) -> tuple[Path, str] | None:
    """The install stamp `make setup` left for this pyproject.toml (its POSIX cksum) and the
    extras it installed (``.installed-<cksum>-<EXTRAS>``), or None."""
    done = subprocess.run(["cksum", str(pyproject)], capture_output=True, text=True, check=True)
    prefix = f".installed-{done.stdout.split()[0]}-"
    for stamp in sorted(venv.glob(prefix + "*")):
        return stamp, stamp.name[len(prefix) :]
    return None


def _offline_make(tmp_path: Path) -> tuple[list[str], dict[str, str], Path]:
    """``make`` with this virtualenv (never reinstalled), its environment (offline: no proxy
    reaches anything, no ``SANDBOX_`` variable) and a fresh copy of the repository to run in;
    skips the test when the tools or the virtualenv are missing."""
    if shutil.which("make") is None or shutil.which("cksum") is None:
        pytest.skip("make or cksum is not installed")
    venv = Path(sys.prefix)
    found = _stamp(venv, ROOT / "pyproject.toml")
    if venv == Path(sys.base_prefix) or found is None:
        pytest.skip("the tests do not run in a virtualenv made by `make setup` for this pyproject")
    stamp, extras = found
    clone = _fresh_copy(tmp_path / "clone")
    # not the variables of a `make` running these tests: a nested make would print
    # "Entering/Leaving directory" lines on stdout, after the JSON line a test reads
    make_vars = ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SANDBOX_")}
    env = {k: v for k, v in env.items() if k not in make_vars}
    env |= {"PYTHONPATH": str(clone), "NO_COLOR": "1", "HTTP_PROXY": "http://127.0.0.1:9"}
    # -o: never remake the install stamp, so a test can never reinstall (and so re-point) the
    # virtualenv it runs in, whatever the copied files' times are.
    return ["make", "-o", str(stamp), f"VENV={venv}", f"EXTRAS={extras}"], env, clone


def test_make_run_offline_prints_the_table_and_the_run_folder(tmp_path: Path) -> None:
    make, env, clone = _offline_make(tmp_path)
    venv = Path(sys.prefix)
    installed_from = _installed_location(venv)
    done = subprocess.run(
        [*make, "run", "ARGS=--no-plots"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert _installed_location(venv) == installed_from, "the test changed the virtualenv"
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "pass rate" in out and "G1" in out and "G3" in out
    assert "run folder: runs/" in out
    run = clone / out.split("run folder: ")[1].split()[0]
    assert (run / "manifest.json").is_file() and (run / "report.md").is_file()
    assert json.loads((run / "manifest.json").read_text())["config"]["agent"]["name"] == "dfsdt"


def test_make_eval_with_the_rules_judge_works_offline_on_a_fresh_clone(tmp_path: Path) -> None:
    """``make eval RUN=... ARGS="--protocol toolbench --judge rules-judge"``: ToolEval's protocol
    with the offline rules judge, no key and no network, labelled as not an LLM."""
    make, env, clone = _offline_make(tmp_path)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [*make, *args], cwd=clone, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done

    made = run("run", "AGENT=react", "ARGS=--no-plots --tasks g1_*")
    folder = made.stdout.split("run folder: ")[1].split()[0]
    judged = run(
        "eval", f"RUN={folder}", "ARGS=--protocol toolbench --judge rules-judge --json --no-plots"
    )
    line = json.loads(judged.stdout.strip().splitlines()[-1])
    assert line["protocol"] == "toolbench" and line["judge"] == "rules-judge"
    assert line["judge_kind"] == "rules" and line["judge_calls"] > 0 and line["n"] > 0
    report = (clone / folder / "report.md").read_text()
    assert "rules-judge (rules from the task's checks, not an LLM)" in report
