"""A suite with a broken recording never runs: the run stops before its first episode, naming
file and line (the suite fails ``validate``). A broken recording met while a run's tools are
served (a file changed under the server after it loaded the suite) counts the episode that meets
it as an infrastructure error (left out of the pass rate, run again by --resume), not the
agent's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mock_tools import create_app, load_suite
from sandbox.errors import ConfigError
from sandbox.run import run_suite
from sandbox.store.config import RunConfig
from tests.hostile.conftest import ROOT, serving
from tests.mock_tools.test_broken_recordings import _broken_copy


def _config(tmp_path: Path, suite: Path, **more: str) -> RunConfig:
    return RunConfig(
        suite=str(suite),
        agent="react",
        model="reference",
        tasks=["g1_eur_chf_rate"],
        out=str(tmp_path / "runs"),
        run_id="broken",
        **more,
    )


def test_a_suite_with_a_broken_recording_does_not_run(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        run_suite(_config(tmp_path, _broken_copy(tmp_path)), show_progress=False)
    assert "fails validation" in str(e.value) and "currency.jsonl:1" in str(e.value)
    assert not (tmp_path / "runs" / "broken").exists()


def test_a_run_counts_a_broken_recording_it_is_served_as_infrastructure(tmp_path: Path) -> None:
    """The tool server loaded a valid copy of the suite (the run checks it serves the run's
    suite, by fingerprint); a recording is then broken on disk under it, same length, so the
    server still serves that line: the episode that meets it is infrastructure, not unsolved."""
    served = tmp_path / "served"
    shutil.copytree(ROOT / "scenarios" / "default", served, ignore=shutil.ignore_patterns(".cache"))
    app = create_app(load_suite(served))
    rates = served / "recordings" / "currency.jsonl"
    text = rates.read_text()
    broken = text.replace('"latency_ms": 73', '"latency_ms":"x"', 1)  # the same length
    assert broken != text and len(broken) == len(text)
    rates.write_text(broken)
    with serving(app) as url:
        config = _config(tmp_path, ROOT / "scenarios" / "default", tools_url=url)
        result = run_suite(config, show_progress=False)
    scores = json.loads((Path(result.path) / "scores.json").read_text())
    (label,) = scores["labels"]
    assert label["excluded"] == "infra"
    assert "currency.jsonl:1" in label["reason"]
