"""``sandbox compare --runs A B --protocol toolbench`` on ToolBench's real answer trees.

The ten DFSDT answer files of ``../shared/data/toolbench`` (ChatGPT, recorded against RapidAPI in
2023) are imported as run A; a copy with a few final answers edited (markers the fake judge
reacts to) and three files left out, plus the one file A leaves out, is imported as run B. A fake
OpenAI-compatible judge on 127.0.0.1 answers ToolEval's functions. The pass rates and the win
rate the command prints are predicted by hand below.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tooleval_judge_server import ToolEvalJudgeServer

from sandbox.cli import main

ANSWERS = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "toolbench"
ANSWERS = ANSWERS / "data_example" / "answer"

# run B's edits: (group, file prefix) -> (text in the file, what it becomes)
EDITS = {
    ("G1", "10"): (
        "The contact details of the 'Gondrand'",
        "GOOD The contact details of the 'Gondrand'",
    ),
    ("G1", "11"): ("Here is a comprehensive list", "Here is the comprehensive list"),
    ("G1", "57"): ("I found a phone case", "UNSURE-MARK I found a phone case"),
    ("G1", "59"): ("I'm sorry, but I couldn't find", "GOOD I'm sorry, but I couldn't find"),
    ("G2", "102"): ("The package with tracking number", "sorry, The package with tracking number"),
    ("G2", "52"): ("The address details for", "GOOD SPLIT-MARK The address details for"),
}
ONLY_IN_A = {("G2", "10"), ("G2", "119"), ("G2", "127")}
ONLY_IN_B = {("G1", "69")}


@pytest.fixture
def answers() -> Path:
    if not ANSWERS.is_dir():
        pytest.skip(f"ToolBench's answer files are not at {ANSWERS.resolve()} (present in CI)")
    return ANSWERS


def _copy(src: Path, dst: Path, *, skip: set[tuple[str, str]], edit: bool) -> list[Path]:
    folders = []
    for group_dir in sorted(src.iterdir()):
        group = group_dir.name.split("_")[0]
        out = dst / group_dir.name
        out.mkdir(parents=True)
        folders.append(out)
        for f in sorted(group_dir.glob("*.json")):
            key = (group, f.name.split("_")[0])
            if key in skip:
                continue
            text = f.read_text(encoding="utf-8")
            if edit and key in EDITS:
                old, new = EDITS[key]
                assert old in text, f"{f.name}: the edit anchor is gone"
                text = text.replace(old, new)
            (out / f.name).write_text(text, encoding="utf-8")
    return folders


def _import(folders: list[Path], root: Path, name: str, capsys) -> Path:
    args = ["import", "toolbench-answers", *map(str, folders)]
    args += ["--out", str(root / f"suite-{name}"), "--run-out", str(root / name)]
    assert main(args) == 0
    capsys.readouterr()
    return root / name / "DFS_woFilter_w2"  # one run per method


A, B = "A/DFS_woFilter_w2", "B/DFS_woFilter_w2"  # two runs of one method: named by folder


def test_compare_runs_toolbench_matches_the_hand_computation(
    answers: Path, judge_server: ToolEvalJudgeServer, tmp_path: Path, capsys
) -> None:
    a = _import(_copy(answers, tmp_path / "a", skip=ONLY_IN_B, edit=False), tmp_path, "A", capsys)
    b = _import(_copy(answers, tmp_path / "b", skip=ONLY_IN_A, edit=True), tmp_path, "B", capsys)
    judge_server.clear()
    judge_server.statuses = {
        "sorry": ["Unsolved"],
        "UNSURE-MARK": ["Unsure"],
        "SPLIT-MARK": ["Solved", "Unsolved"],  # sample (seed) 0 Solved, sample 1 Unsolved
    }  # anything else: Solved; every second look: Unsure
    code = main(
        [
            "compare",
            "--runs",
            str(a),
            str(b),
            "--protocol",
            "toolbench",
            "--judge",
            f"openai:judge@{judge_server.base_url}",
            "--judge-samples",
            "2",
            "--out",
            str(tmp_path / "runs"),
            "--json",
            "--no-plots",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    summary = json.loads(out.strip().splitlines()[-1])

    # Pass rate, by hand. Run A has 9 answers: G1-10, G1-11, G1-57, G2-102 and G2-52 are
    # Solved; G1-59 ("I'm sorry, ...") is Unsolved; G2-10, G2-119 and G2-127 gave up, which is
    # Unsolved without asking. 5/9 in both samples.
    # Run B has 7: G1-10 and G1-11 Solved (1, 1); G1-57 Unsure, and Unsure again on the second
    # look (0.5); G1-59 Unsolved; G1-69 (an invalid tree, no answer) Unsolved without asking;
    # G2-102 ("sorry, ...") Unsolved; G2-52 Solved in sample 0, Unsolved in sample 1.
    # Sample 0: 3.5/7, sample 1: 2.5/7, mean 3/7, std 0.5/7.
    assert summary["protocol"] == "toolbench"
    assert summary["candidate"] == B and summary["reference"] == A
    assert summary["pass_rate"] == {
        A: pytest.approx(5 / 9, abs=1e-6),
        B: pytest.approx(3 / 7, abs=1e-6),
    }
    assert summary["pass_rate_std"] == {A: 0.0, B: pytest.approx(0.5 / 7, abs=1e-6)}

    # Win rate of B over A, 2 rounds in alternating order, by hand, over the 10 tasks:
    # G1-10  both Solved -> select_better_answer picks the GOOD one (B) in both rounds: win
    # G1-11  both Solved, neither GOOD: the judge takes whichever is shown first; the order
    #        alternates, so 1-1: tie
    # G1-57  A Solved, B Unsure: exactly one Solved: loss
    # G1-59  both Unsolved, no Unsure: select_better_answer picks GOOD (B): win
    # G1-69  missing from the reference: win
    # G2-102 A Solved, B Unsolved: loss
    # G2-52  round 0 (seed 1000): both Solved, GOOD (B) wins; round 1 (seed 1001): B Unsolved,
    #        A wins: 1-1, tie
    # G2-10, G2-119, G2-127  missing from the candidate: losses
    # wins 3, ties 2, losses 5: win rate 3/10 (ties count 0), tie rate 2/10.
    assert summary["win_rate"] == pytest.approx(0.3)
    assert summary["tie_rate"] == pytest.approx(0.2)
    assert summary["win_rates"][A][B] == pytest.approx(0.5)  # A's 5 wins of 10
    assert summary["warnings"] and "tool behaviour was not identical" in summary["warnings"][0]

    # give-ups and answers without a Finish never reach the judge
    asked = [p for f, _, p in judge_server.log if f == "check_answer_status"]
    assert asked and not any("give_up_and_restart" in p for p in asked)
    comparison = json.loads((Path(summary["comparison"]) / "comparison.json").read_text())
    rules = {o["task_id"]: o["rule"] for o in comparison["outcomes"]}
    assert rules["G1-69"] == "missing_reference" and rules["G2-119"] == "missing_candidate"
    assert (Path(summary["comparison"]) / "judge_cache.sqlite").is_file()
    shutil.rmtree(tmp_path / "a")
