"""docs/architecture.md's recipe "A step metric", followed as written: its module, copied out of
the doc into a package of its own, type-checks with mypy and, imported in the process, is scored
by ``sandbox eval --step-metric answer-length --step-option ...`` with no project file changed."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from outcome_builders import add_call, make_run, make_suite, traj

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "architecture.md"

_EVAL = """
import sys
import my_metrics.answer_length  # the recipe's module registers the metric
from sandbox.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def _recipe_module() -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("### A step metric") :]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None, "the recipe has no python block"
    return found.group(1)


def _package(tmp_path: Path) -> Path:
    folder = tmp_path / "plugins" / "my_metrics"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("", encoding="utf-8")
    module = folder / "answer_length.py"
    module.write_text(_recipe_module(), encoding="utf-8")
    return module


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy (dev extra) absent")
def test_the_recipe_module_type_checks(tmp_path: Path) -> None:
    module = _package(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", str(module)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_recipe_metric_is_scored_by_sandbox_eval(tmp_path: Path) -> None:
    _package(tmp_path)
    suite = make_suite(tmp_path / "suite")
    answers = ["The sum is 5.", "lovely"]
    run = make_run(
        tmp_path / "runs",
        suite,
        "cand",
        [
            traj("add", answer=answers[0], calls=[[add_call(2, 3)]], run_id="cand"),
            traj("open", answer=answers[1], calls=[[add_call(2, 3)]], run_id="cand"),
        ],
    )
    argv = ["eval", str(run), "--no-plots", "--step-metric", "answer-length"]
    argv += ["--step-option", "answer-length.max_chars=10"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "plugins"), str(ROOT)]))
    done = subprocess.run(
        [sys.executable, "-c", _EVAL, *argv], capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert done.returncode == 0, done.stderr
    scores = json.loads((run / "scores.json").read_text(encoding="utf-8"))
    added = scores["step_scores"]["metrics"]["answer-length"]
    assert added["options"] == {"max_chars": 10}
    expected = sum(min(1.0, len(a) / 10) for a in answers) / len(answers)
    assert added["dimensions"]["answer_length"]["mean"] == pytest.approx(expected)
    assert "| answer-length.answer_length |" in (run / "report.md").read_text(encoding="utf-8")
