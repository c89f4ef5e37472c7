"""Scoring streams a run's trajectories: the scores are those of labelling the whole run at once
(chunk boundaries, re-run episodes, stray tasks and missing episodes included), and no more than
a chunk of trajectories is alive at any time."""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

import sandbox.eval.evaluate as evaluate
from agents.trajectory import Trajectory
from sandbox.cli import main
from sandbox.eval.evaluate import evaluate_run
from sandbox.eval.protocol_default import DefaultProtocol
from sandbox.eval.report import scores_json

ROOT = Path(__file__).resolve().parents[3]
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """A mini run of 3 trials, with one episode stored twice: first ended on an infrastructure
    error, then run again (the later line wins; a second line of a finished episode, or a line
    of an episode the manifest does not list, is refused by every reader since issue 27)."""
    argv = ["run", "--suite", str(MINI), "--agent", "react", "--model", "noisy-reference:0.5"]
    out = tmp_path / "runs"
    assert main([*argv, "--trials", "3", "--out", str(out), "--run-id", "r", "--no-plots"]) == 0
    folder = out / "r"
    file = folder / "trajectories.jsonl"
    lines = file.read_text().splitlines(keepends=True)
    again = json.loads(lines[0])
    infra = again | {"status": "error", "final_answer": None}
    infra["errors"] = [{"kind": "infra", "message": "the endpoint was down"}]
    again["final_answer"] = "a different answer"
    file.write_text(json.dumps(infra) + "\n" + "".join(lines[1:]) + json.dumps(again) + "\n")
    return folder


def _scores(run: Path) -> str:
    scores = evaluate_run(run)
    return scores_json(scores) + json.dumps(sorted(map(list, (scores.answers() or {}).items())))


def test_chunked_labels_give_the_scores_of_labelling_the_run_at_once(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Labelling in chunks of 2 (every boundary crossed) and labelling a protocol that must see
    the whole run (``labels_each_episode`` false) write the same scores.json, byte for byte."""
    monkeypatch.setattr(evaluate, "LABEL_CHUNK", 2)
    chunked = _scores(run)
    monkeypatch.setattr(DefaultProtocol, "labels_each_episode", False)
    whole = _scores(run)
    assert chunked == whole
    labels = json.loads(scores_json(evaluate_run(run)))["labels"]
    assert len(labels) == 12 and not any(lb["excluded"] for lb in labels)  # the re-run counts
    assert "a different answer" in (run / "trajectories.jsonl").read_text()


def test_no_more_than_a_chunk_of_trajectories_is_alive_while_scoring(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every trajectory the evaluation reads is dropped once it is labelled and scored: at most
    ``LABEL_CHUNK`` (and the one being read) are alive at once."""
    monkeypatch.setattr(evaluate, "LABEL_CHUNK", 2)
    alive: set[int] = set()
    most = 0
    latest = evaluate.LoadedRun.latest

    def counted(self: evaluate.LoadedRun) -> Iterator[Trajectory]:
        nonlocal most
        for traj in latest(self):
            alive.add(id(traj))
            weakref.finalize(traj, alive.discard, id(traj))
            most = max(most, len(alive))
            yield traj

    monkeypatch.setattr(evaluate.LoadedRun, "latest", counted)
    scores = evaluate_run(run)
    assert scores.episodes >= 12
    assert most <= 3
