"""Which differences make ``make replays`` replace a committed fixture, and what it prints
(``sandbox.replay.fixtures``): another suite, another behaviour config, other episodes, an
episode that differs at some step do; where the run folder went and whether plots are drawn do
not. Each line names the fixture and the reason; an install leaves nothing of the old copy."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from sandbox.replay.fixtures import fixture_difference, install_fixtures, main
from sandbox.store import RunStore

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "replays" / "react-noisy-default"


def _copy(tmp_path: Path, where: str = "fresh", source: Path = COMMITTED) -> Path:
    dest = tmp_path / where / source.name
    shutil.copytree(source, dest)
    return dest


def _set(run: Path, **values: Any) -> None:
    """Rewrite a run's manifest with some config values changed (``section.key`` names)."""
    store = RunStore.open(run)
    store.manifest.config = store.manifest.config.with_values(values)
    store.write_manifest()


def _lines(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "trajectories.jsonl").read_text().splitlines()]


def _write(run: Path, lines: list[dict[str, Any]]) -> None:
    (run / "trajectories.jsonl").write_text("".join(json.dumps(t) + "\n" for t in lines))


def test_where_the_run_went_and_plots_are_no_difference(tmp_path: Path) -> None:
    fresh = _copy(tmp_path)
    _set(fresh, **{"output.out": "/somewhere/else", "output.run_id": "x", "eval.plots": False})
    assert fixture_difference(COMMITTED, fresh) is None


def test_another_behaviour_setting_is_a_config_change(tmp_path: Path) -> None:
    fresh = _copy(tmp_path)
    _set(fresh, seed=11)
    assert fixture_difference(COMMITTED, fresh) == "the config changed"


def test_another_suite_is_named_before_any_other_change(tmp_path: Path) -> None:
    fresh = _copy(tmp_path)
    _set(fresh, seed=11)
    manifest = json.loads((fresh / "manifest.json").read_text())
    manifest["suite"]["fingerprint"] = "sha256:" + "0" * 64
    (fresh / "manifest.json").write_text(json.dumps(manifest))
    assert fixture_difference(COMMITTED, fresh) == "the suite changed"


def test_other_episodes_are_counted(tmp_path: Path) -> None:
    fresh = _copy(tmp_path)
    lines = _lines(fresh)
    _write(fresh, lines[:-1])
    assert fixture_difference(COMMITTED, fresh) == (
        f"other episodes ({len(lines)} committed, {len(lines) - 1} now)"
    )


def test_an_episode_that_differs_later_in_the_run_is_found(tmp_path: Path) -> None:
    fresh = _copy(tmp_path)
    lines = _lines(fresh)
    last = lines[-1]
    was = last["nodes"][0]["content"]
    last["nodes"][0]["content"] = "another thought"
    _write(fresh, lines)
    assert fixture_difference(COMMITTED, fresh) == (
        f"{last['scenario_id']} #{last['trial']} differs at node 0, content: "
        f"expected {was!r}, got 'another thought'"
    )


def test_install_prints_one_line_per_run_in_name_order(tmp_path: Path) -> None:
    fixtures = tmp_path / "replays"
    kept = _copy(tmp_path, "replays")
    (kept / "stale.txt").write_text("left over")
    fresh_same = _copy(tmp_path)
    fresh_new = _copy(tmp_path, source=ROOT / "replays" / "dfsdt-noisy-default")
    (tmp_path / "fresh" / "not-a-run").mkdir()
    (tmp_path / "fresh" / "notes.txt").write_text("ignored")
    lines = install_fixtures(tmp_path / "fresh", fixtures)
    assert lines == [
        f"{fixtures / fresh_new.name}: updated (new fixture)",
        f"{kept}: unchanged (every episode identical), left as it is",
    ]
    assert (kept / "stale.txt").is_file()  # an unchanged fixture is not touched
    _set(fresh_same, seed=3)
    (fresh_same / "report.md").unlink()
    assert install_fixtures(tmp_path / "fresh", fixtures, force=False)[1] == (
        f"{kept}: updated (the config changed)"
    )
    assert not (kept / "stale.txt").exists() and not (kept / "report.md").exists()
    assert RunStore.open(kept).manifest.config.seed == 3


def test_the_command_prints_the_lines_and_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fresh = _copy(tmp_path)
    assert main([str(fresh.parent), str(tmp_path / "replays")]) == 0
    assert (
        capsys.readouterr().out == f"{tmp_path / 'replays' / fresh.name}: updated (new fixture)\n"
    )
    (tmp_path / "empty").mkdir()
    assert main([str(tmp_path / "empty"), str(tmp_path / "replays")]) == 1
    err = capsys.readouterr().err
    assert err == f"error: no runs in {tmp_path / 'empty'} to install as fixtures\n"


def test_the_command_help_names_the_command_and_its_arguments(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: python -m sandbox.replay.fixtures [-h] [--force] fresh fixtures")
    assert (
        "Installing freshly made runs as the committed regression fixtures, only where behaviour "
        "changed." in text
    )
    assert "make replays" not in text  # the first paragraph of the module doc only
    for line in (
        "fresh       folder holding the runs just made",
        "fixtures    folder of the committed fixtures",
        "--force     replace even identical fixtures",
    ):
        assert line in text
