"""Hostile edits of a run's trajectories file: every reader either works or says, in one line,
which line of which file it cannot use; none drops an episode without saying so, and a resume
that fails never leaves the run marked ``running`` (hardening round two, item 2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sandbox.cli import main
from sandbox.store import RunStore
from tests.hostile.conftest import MINI, lines

TRAJECTORIES = "trajectories.jsonl"


def make_run(out: Path, run_id: str = "run") -> Path:
    """A scored run of the mini suite by the offline reference model (4 episodes)."""
    argv = ["run", "--suite", str(MINI), "--model", "reference", "--agent", "react"]
    assert main([*argv, "--out", str(out), "--run-id", run_id, "--no-plots"]) == 0
    return out / run_id


def rewrite_line(run: Path, number: int, edit) -> None:
    """Replace line ``number`` (1-based) of the run's trajectories by ``edit(its JSON)``."""
    file = run / TRAJECTORIES
    kept = file.read_text(encoding="utf-8").split("\n")
    kept[number - 1] = json.dumps(edit(json.loads(kept[number - 1])))
    file.write_text("\n".join(kept), encoding="utf-8")


def without(*keys: str):
    def edit(data: dict) -> dict:
        return {k: v for k, v in data.items() if k not in keys}

    return edit


def one_error_line(err: str) -> str:
    """The one ``error:`` line of a command's stderr (progress lines may precede it)."""
    errors = [x for x in err.splitlines() if x.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in err, err
    return errors[0]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("recorded"))


def test_23_a_line_without_nodes_is_named_by_every_reader_and_resume_leaves_no_running_run(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main: eval and resume crashed with IndexError (the resume left the manifest
    `running`), replay reproduced 3/3 of 4 episodes and exited 0."""
    run = tmp_path / "run"
    shutil.copytree(recorded, run)
    rewrite_line(run, 2, without("nodes"))
    where = f"{run / TRAJECTORIES}:2"
    readers = {
        "eval": ["eval", str(run), "--no-plots"],
        "replay": ["replay", str(run)],
        "resume": ["run", "--resume", str(run), "--no-plots"],
        "view": ["view", "--export", str(tmp_path / "site"), str(run)],
        "export": ["export", "toolbench", str(run), str(tmp_path / "answers")],
    }
    for name, argv in readers.items():
        assert main(argv) == 1, name
        line = one_error_line(capsys.readouterr().err)
        assert where in line and "chosen_path" in line, (name, line)
    assert RunStore.open(run).manifest.status == "completed"  # untouched: not left `running`
    assert main(["leaderboard", str(run), "--json"]) == 0  # from scores.json, made before the edit
    assert json.loads(capsys.readouterr().out)[0]["episodes"] == 4


def test_23_an_episode_without_steps_is_replayed_and_diverges_it_is_not_dropped(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(recorded, run)
    rewrite_line(run, 2, without("nodes", "chosen_path"))  # still a valid trajectory
    assert main(["replay", str(run), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert (report["episodes"], report["divergent"]) == (4, 1)


def test_23_a_second_line_hiding_a_finished_episode_is_refused_naming_both_lines(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(recorded, run)
    first = json.loads(lines(run / TRAJECTORIES)[0])
    rewrite_line(run, 3, lambda data: {**data, "scenario_id": first["scenario_id"]})
    assert main(["eval", str(run), "--no-plots"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert f"{TRAJECTORIES}:3" in line and "at line 1" in line


def test_23_scoring_that_fails_after_a_resume_marks_the_run_failed_not_running(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main the resume raised IsADirectoryError and left the manifest `running`."""
    run = tmp_path / "run"
    shutil.copytree(recorded, run)
    (run / "report.md").unlink()
    (run / "report.md").mkdir()  # the report cannot be written
    assert main(["run", "--resume", str(run), "--no-plots"]) == 1
    one_error_line(capsys.readouterr().err)
    manifest = RunStore.open(run).manifest
    assert manifest.status == "failed" and "report.md" in (manifest.error or "")


# -- any mutation of a line ----------------------------------------------------------------------

KEYS = ["scenario_id", "trial", "status", "nodes", "chosen_path", "errors", "usage", "agent"]
ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.text(max_size=8),
    st.lists(st.integers(min_value=-3, max_value=30), max_size=3),
    st.just({"kind": "infra"}),
)


@st.composite
def mutations(draw: st.DrawFn) -> tuple[str, int, object]:
    kind = draw(st.sampled_from(["delete", "retype", "truncate", "garbage", "duplicate", "rekey"]))
    line = draw(st.integers(min_value=1, max_value=4))
    if kind in ("delete", "rekey"):
        return kind, line, draw(st.sampled_from(KEYS))
    if kind == "retype":
        return kind, line, (draw(st.sampled_from(KEYS)), draw(ODD_VALUES))
    if kind == "truncate":
        return kind, line, draw(st.floats(min_value=0.0, max_value=0.999))
    if kind == "garbage":
        return kind, line, (draw(st.floats(0.0, 1.0)), draw(st.binary(min_size=1, max_size=6)))
    return kind, line, None


def mutate(file: Path, mutation: tuple[str, int, object]) -> None:
    """Apply one mutation to one line of a trajectories file (whole lines stay whole)."""
    kind, number, arg = mutation
    raw = file.read_bytes().split(b"\n")[:-1]
    line = raw[number - 1]
    data = json.loads(line)
    if kind == "delete":
        data.pop(arg, None)
        raw[number - 1] = json.dumps(data).encode()
    elif kind == "rekey":  # another line's id or trial: two lines of one episode
        other = json.loads(raw[number % len(raw)])
        raw[number - 1] = json.dumps({**data, arg: other.get(arg)}).encode()
    elif kind == "retype":
        key, value = arg  # type: ignore[misc]
        raw[number - 1] = json.dumps({**data, key: value}).encode()
    elif kind == "truncate":
        raw[number - 1] = line[: int(len(line) * arg)]  # type: ignore[operator]
    elif kind == "garbage":
        at, junk = arg  # type: ignore[misc]
        cut = int(len(line) * at)
        raw[number - 1] = line[:cut] + junk + line[cut:]
    else:
        raw.insert(number, line)
    file.write_bytes(b"\n".join(raw) + b"\n")


def _check_outcome(code: int, err: str, run: Path, what: str) -> bool:
    """True when the command worked; otherwise it failed in one line naming the file's line."""
    if code == 0:
        return True
    assert code in (1, 2), (what, code, err)
    line = one_error_line(err)
    assert f"{run / TRAJECTORIES}:" in line or "manifest" in line, (what, line)
    return False


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(mutation=mutations())
def test_23_any_mutation_of_a_line_is_read_whole_or_named_never_dropped(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], mutation
) -> None:
    run = tmp_path / f"m{abs(hash(repr(mutation))) % 10**8}"
    shutil.rmtree(run, ignore_errors=True)
    shutil.copytree(recorded, run)
    mutate(run / TRAJECTORIES, mutation)
    listed = len(RunStore.open(run).manifest.episodes)
    capsys.readouterr()

    code = main(["eval", str(run), "--no-plots", "--json"])
    out, err = capsys.readouterr()
    if _check_outcome(code, err, run, "eval"):
        labels = json.loads((run / "scores.json").read_text())["labels"]
        assert len(labels) == listed  # every episode labelled, a missing one as `missing`

    code = main(["replay", str(run), "--json"])
    out, err = capsys.readouterr()
    if code == 1 and out.strip():  # a divergence: the report covers every episode
        code = 0
    if _check_outcome(code, err, run, "replay"):
        report = json.loads(out)
        assert report["episodes"] + len(report["unrecorded"]) == listed

    code = main(["run", "--resume", str(run), "--no-plots", "--json"])
    out, err = capsys.readouterr()
    status = RunStore.open(run).manifest.status
    assert status != "running"
    if _check_outcome(code, err, run, "resume"):
        assert status == "completed" and len(lines(run / TRAJECTORIES)) == listed
