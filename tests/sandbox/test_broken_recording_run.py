"""A run on a suite with a broken recording counts the episode that meets it as an
infrastructure error (left out of the pass rate, run again by --resume), not the agent's."""

from __future__ import annotations

import json
from pathlib import Path

from sandbox.run import run_suite
from sandbox.store.config import RunConfig
from tests.mock_tools.test_broken_recordings import _broken_copy


def test_a_run_counts_a_broken_recording_as_infrastructure(tmp_path: Path) -> None:
    config = RunConfig(
        suite=str(_broken_copy(tmp_path)),
        agent="react",
        model="reference",
        tasks=["g1_eur_chf_rate"],
        out=str(tmp_path / "runs"),
        run_id="broken",
    )
    result = run_suite(config, show_progress=False)
    scores = json.loads((Path(result.path) / "scores.json").read_text())
    (label,) = scores["labels"]
    assert label["excluded"] == "infra"
    assert "currency.jsonl:1" in label["reason"]
