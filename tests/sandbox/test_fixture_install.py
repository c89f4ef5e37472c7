"""``make replays`` installs a regenerated fixture only when it differs in substance, so making
the fixtures again with nothing changed leaves the committed files byte for byte."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sandbox.replay.fixtures import install_fixtures, main

FIXTURE = Path(__file__).resolve().parents[2] / "replays" / "react-noisy-default"


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _fresh(tmp_path: Path) -> Path:
    """The fixture as a new run would write it: same behaviour, other times and timings."""
    fresh = tmp_path / "fresh" / FIXTURE.name
    shutil.copytree(FIXTURE, fresh)
    manifest = json.loads((fresh / "manifest.json").read_text())
    manifest["started_at"] = "2031-01-01T00:00:00Z"
    (fresh / "manifest.json").write_text(json.dumps(manifest))
    lines = []
    for line in (fresh / "trajectories.jsonl").read_text().splitlines():
        t = json.loads(line)
        t["usage"]["wall_seconds"] += 1.5
        t["started_at"] = "2031-01-01T00:00:01Z"
        lines.append(json.dumps(t))
    (fresh / "trajectories.jsonl").write_text("\n".join(lines) + "\n")
    (fresh / "report.md").write_text(f"see `sandbox view {fresh}`\n")
    return fresh


def test_an_identical_run_leaves_the_fixture_untouched(tmp_path: Path) -> None:
    fixtures = tmp_path / "replays"
    shutil.copytree(FIXTURE, fixtures / FIXTURE.name)
    before = _files(fixtures / FIXTURE.name)
    fresh = _fresh(tmp_path)
    (line,) = install_fixtures(fresh.parent, fixtures)
    assert "unchanged" in line
    assert _files(fixtures / FIXTURE.name) == before


def test_a_run_that_behaves_otherwise_replaces_the_fixture(tmp_path: Path) -> None:
    fixtures = tmp_path / "replays"
    shutil.copytree(FIXTURE, fixtures / FIXTURE.name)
    fresh = _fresh(tmp_path)
    lines = (fresh / "trajectories.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["nodes"][0]["content"] = "a different thought"
    (fresh / "trajectories.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    (line,) = install_fixtures(fresh.parent, fixtures)
    assert "updated" in line and f"{first['scenario_id']} #0 differs at node 0, content" in line
    installed = fixtures / FIXTURE.name
    assert "a different thought" in (installed / "trajectories.jsonl").read_text()
    config = json.loads((installed / "manifest.json").read_text())["config"]
    assert config["output"]["out"] == str(fixtures)
    assert (installed / "report.md").read_text() == f"see `sandbox view {installed}`\n"


def test_a_new_fixture_is_installed_and_force_replaces(tmp_path: Path, capsys) -> None:
    fresh = _fresh(tmp_path)
    assert main([str(fresh.parent), str(tmp_path / "replays")]) == 0
    assert "updated (new fixture)" in capsys.readouterr().out
    assert main([str(fresh.parent), str(tmp_path / "replays"), "--force"]) == 0
    assert "updated (--force)" in capsys.readouterr().out
    (tmp_path / "empty").mkdir()
    assert main([str(tmp_path / "empty"), str(tmp_path / "replays")]) == 1
