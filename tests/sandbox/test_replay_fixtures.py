"""The committed trajectories under replays/ still replay exactly against the default suite.

They are regression fixtures: a change of an agent loop, the mock server, the canonical keys or
the default suite that alters behaviour makes this fail and names the first differing step.
After a deliberate change, regenerate them with `make replays`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sandbox.replay import replay_run
from sandbox.store import read_trajectories

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = sorted(p for p in (ROOT / "replays").iterdir() if (p / "manifest.json").is_file())


def test_there_are_react_and_dfsdt_fixtures() -> None:
    agents = {json.loads((p / "manifest.json").read_text())["config"]["agent"] for p in FIXTURES}
    assert {"react", "dfsdt"} <= agents


@pytest.mark.parametrize("fixture", FIXTURES, ids=[p.name for p in FIXTURES])
def test_fixture_replays_with_zero_divergences(fixture: Path) -> None:
    report = replay_run(fixture)
    assert not report.suite_changed, "the default suite changed: run `make replays`"
    assert report.ok, [v.first_diff.describe() for v in report.verdicts if v.first_diff]
    assert report.episodes == len(read_trajectories(fixture)) >= 48


def test_an_edited_recording_is_caught_and_named(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "scenarios" / "default", tmp_path / "scenarios" / "default")
    fixture = next(p for p in FIXTURES if "react" in p.name)
    shutil.copytree(fixture, tmp_path / "replays" / fixture.name)
    weather = tmp_path / "scenarios" / "default" / "recordings" / "weather.jsonl"
    lines = weather.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["response"]["body"] = {"edited": "by the test"}
    lines[0] = json.dumps(first)
    weather.write_text("\n".join(lines) + "\n", encoding="utf-8")

    report = replay_run(tmp_path / "replays" / fixture.name, mode="calls")
    assert report.suite_changed and not report.ok
    bad = [v for v in report.verdicts if not v.ok]
    assert bad and all(v.first_diff is not None and v.first_diff.node is not None for v in bad)
    assert all("edited" in str(v.first_diff.got) for v in bad if v.first_diff is not None)
