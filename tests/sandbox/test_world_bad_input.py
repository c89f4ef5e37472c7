"""A world suite that cannot be trusted is refused before anything runs: one line naming file
and line, exit 2, from ``validate`` and ``run`` alike, and no run folder written."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from mock_tools.__main__ import main as mock_tools_main
from sandbox.cli import main

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "tinyworld"


def _suite(tmp_path: Path, edit: Callable[[Path], None]) -> Path:
    suite = shutil.copytree(TINY, tmp_path / "bank")
    edit(suite)
    return suite


def _replace(file: str, old: str, new: str) -> Callable[[Path], None]:
    def edit(suite: Path) -> None:
        path = suite / file
        text = path.read_text(encoding="utf-8")
        assert old in text, old
        path.write_text(text.replace(old, new, 1), encoding="utf-8")

    return edit


CASES = {
    "wall clock": (
        _replace(
            "world.py",
            "from typing import Literal\n",
            "from datetime import datetime\nfrom typing import Literal\n",
        ),
        _replace("world.py", '"at": ctx.now.isoformat()', '"at": datetime.now().isoformat()'),
        r"world\.py:\d+: calls datetime\.datetime\.now\(\): the wall clock",
    ),
    "untyped parameter": (
        _replace(
            "world.py",
            "def set_frozen(self, ctx: Context, account_id: str,",
            "def set_frozen(self, ctx: Context, account_id,",
        ),
        None,
        r"world\.py:\d+: tool 'set_frozen': parameter 'account_id' has no type annotation",
    ),
    "does not import": (
        _replace(
            "world.py",
            "from typing import Literal\n",
            "from typing import Literal\nimport no_such_module_here\n",
        ),
        None,
        r"world\.py:\d+: the world does not load: ModuleNotFoundError",
    ),
    "gold action fails": (
        _replace("tasks/tasks.yaml", "amount: 200, memo: rent", "amount: 5000, memo: rent"),
        None,
        r"tasks: pay_bob: gold action 2 \(transfer\) fails: account A-1 holds 1000, less than 5000",
    ),
    "gold fails its own check": (
        _replace(
            "tasks/tasks.yaml",
            "{path: accounts.A-3.balance, equals: 500}",
            "{path: accounts.A-3.balance, equals: 501}",
        ),
        None,
        r"tasks: pay_bob: the gold actions fail the task's own check: assert",
    ),
    "a state file of the wrong shape": (
        lambda suite: (suite / "state" / "accounts.yaml").write_text("- just\n- strings\n"),
        None,
        r"accounts\.yaml: record 1 has no 'id'",
    ),
    "no such world class": (
        _replace("suite.yaml", "world: world.py:Bank", "world: world.py:Vault"),
        None,
        r"Vault is nothing, not a World subclass",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_world_is_one_line_and_exit_2(tmp_path: Path, capsys, case: str) -> None:
    first, second, pattern = CASES[case]
    suite = _suite(tmp_path, first)
    if second is not None:
        second(suite)
    runs = tmp_path / "runs"
    code = main(["run", "--suite", str(suite), "--model", "reference", "--out", str(runs)])
    _, err = capsys.readouterr()
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert re.search(pattern, lines[0]), lines[0]
    assert not runs.exists() or not any(runs.iterdir())  # nothing written
    code = mock_tools_main(["validate", str(suite)])
    out = capsys.readouterr()
    assert code != 0
    assert re.search(pattern, out.out + out.err)
