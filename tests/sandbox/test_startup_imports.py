"""Start-up stays light: each check runs the CLI in a fresh interpreter and lists the heavy
libraries it loaded (``sys.modules`` after ``sandbox.cli.main`` returns)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"
HEAVY = ("fastapi", "httpx", "matplotlib", "networkx", "openai", "starlette", "uvicorn", "numpy")

_WRAPPER = """
import contextlib, io, json, sys
from sandbox.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as e:
        code = e.code
loaded = sorted({m.split(".")[0] for m in sys.modules})
print(json.dumps({"code": code, "loaded": loaded, "out": out.getvalue()}))
"""


def _cli(*argv: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


def _heavy(result: dict) -> set[str]:
    return set(result["loaded"]) & set(HEAVY)


def test_top_level_help_imports_no_command() -> None:
    result = _cli("--help")
    assert result["code"] == 0
    assert "leaderboard" in result["out"] and "serve" in result["out"]
    assert _heavy(result) == set()
    assert "pydantic" not in result["loaded"]


def test_run_help_needs_no_fastapi_openai_or_plots() -> None:
    result = _cli("run", "--help")
    assert result["code"] == 0
    assert "--no-plots" in result["out"] and "--miss-policy" in result["out"]
    assert _heavy(result) == set()


def test_offline_run_without_plots_imports_neither_matplotlib_nor_openai(tmp_path: Path) -> None:
    argv = ["run", "--suite", str(MINI), "--model", "reference", "--agent", "react"]
    result = _cli(*argv, "--out", str(tmp_path), "--run-id", "light", "--no-plots", "--json")
    assert result["code"] == 0
    assert json.loads(result["out"].splitlines()[-1])["episodes"] > 0
    assert (tmp_path / "light" / "scores.json").is_file()
    loaded = set(result["loaded"])
    assert "matplotlib" not in loaded and "openai" not in loaded
    assert "fastapi" in loaded  # the in-process mock tools: the check above is not vacuous


def test_run_with_plots_does_load_matplotlib(tmp_path: Path) -> None:
    argv = ["run", "--suite", str(MINI), "--model", "reference", "--agent", "react"]
    result = _cli(*argv, "--out", str(tmp_path), "--run-id", "plotted")
    assert result["code"] == 0
    assert "matplotlib" in result["loaded"]
    assert (tmp_path / "plotted" / "pass_rate.png").is_file()


def test_the_light_parser_shows_what_the_full_one_shows() -> None:
    from sandbox.cli import build_parser

    assert build_parser([]).format_help() == build_parser().format_help()
    assert build_parser(["run"]).format_help() == build_parser().format_help()
