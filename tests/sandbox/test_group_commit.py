"""Group commit: episodes finishing together share one write + fsync, off the event loop, and an
episode is reported finished only once its line is durable (kill -9 loses nothing reported and
doubles nothing)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from harness_suite import suite_path

from agents.trajectory import Component, Status, Trajectory
from sandbox.errors import RunError
from sandbox.store import Manifest, RunStore, SuiteInfo, read_trajectories
from sandbox.store.config import RunConfig
from sandbox.store.group_commit import GroupCommit
from sandbox.store.trajectory_file import COMPRESSED, PLAIN, iter_lines
from tests.agents.models.openai_server import ScriptedOpenAIServer, finish_reply, slow

ROOT = Path(__file__).resolve().parents[2]
REPORTED = re.compile(r"^\[\d+/\d+\] (\S+)#(\d+) ", re.MULTILINE)


def _line(task: str, trial: int = 0) -> bytes:
    traj = Trajectory(
        scenario_id=task,
        trial=trial,
        agent=Component(name="react"),
        model=Component(name="reference"),
        status=Status.answered,
        final_answer="ok",
    )
    return traj.to_json_line().encode()


def _store(tmp_path: Path) -> RunStore:
    manifest = Manifest(run_id="g", config=RunConfig(), suite=SuiteInfo(name="s"))
    return RunStore.create(tmp_path / "runs", manifest)


class _SlowFsyncStore(RunStore):
    """A store whose appends wait on a gate: lines submitted meanwhile queue up."""

    gate: threading.Event
    arrived: threading.Event
    writes: list[int]

    def append_lines(self, lines: list[bytes]) -> None:
        self.arrived.set()
        self.gate.wait(timeout=10)
        self.writes.append(len(lines))
        super().append_lines(lines)


async def test_episodes_finishing_together_share_one_group(tmp_path: Path) -> None:
    """Lines submitted while a group is being written go together into the next one; each
    line's callback runs in the loop after its group is on disk, in order."""
    store = _store(tmp_path)
    slow_store = _SlowFsyncStore(store.path, store.manifest)
    slow_store.writes, slow_store.gate, slow_store.arrived = (
        [],
        threading.Event(),
        threading.Event(),
    )
    commit = GroupCommit(slow_store)
    durable: list[str] = []

    def on_durable(name: str) -> None:
        assert threading.current_thread() is threading.main_thread()
        stored = [t.scenario_id for t in read_trajectories(store.path)]
        assert name in stored  # its line is in the file before it is reported
        durable.append(name)

    commit.submit(_line("a"), lambda: on_durable("a"))
    assert await asyncio.to_thread(slow_store.arrived.wait, 10)  # the thread holds "a"
    for name in "bcde":
        commit.submit(_line(name), lambda name=name: on_durable(name))  # type: ignore[misc]
    assert durable == []  # nothing is reported before it is written
    slow_store.gate.set()
    await commit.drain()
    commit.close()
    slow_store.close()
    store.release()
    assert slow_store.writes == [1, 4]  # two fsyncs for five episodes
    assert commit.groups == 2
    assert durable == list("abcde")
    assert [t.scenario_id for t in read_trajectories(store.path)] == list("abcde")


class _FullDisk(RunStore):
    def append_lines(self, lines: list[bytes]) -> None:
        raise RunError("cannot write trajectories.jsonl: No space left on device")


async def test_a_group_that_cannot_be_written_reports_nothing_and_stops_the_run(
    tmp_path: Path,
) -> None:
    """No callback of a failed group runs; drain and the next submit raise its error."""
    store = _store(tmp_path)
    commit = GroupCommit(_FullDisk(store.path, store.manifest))
    reported: list[str] = []
    commit.submit(_line("a"), lambda: reported.append("a"))
    with pytest.raises(RunError, match="No space left"):
        await commit.drain()
    with pytest.raises(RunError, match="No space left"):
        commit.submit(_line("b"), lambda: reported.append("b"))
    commit.close()
    store.release()
    assert reported == []


def _lines(file: Path) -> list[bytes]:
    """The whole lines of a trajectories file, plain or compressed (a torn tail left out)."""
    return [x.rstrip(b"\n") for x in iter_lines(file) if x.strip()]


def _keys(lines: list[bytes]) -> list[tuple[str, int]]:
    return [(json.loads(x)["scenario_id"], json.loads(x)["trial"]) for x in lines]


def _start(cmd: list[str]) -> subprocess.Popen[bytes]:
    paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _kill_after(proc: subprocess.Popen[bytes], file: Path, at_least: int) -> str:
    """SIGKILL ``proc`` once ``file`` holds ``at_least`` lines; what it printed on stderr."""
    deadline = time.monotonic() + 90
    while len(_lines(file)) < at_least:
        assert proc.poll() is None, proc.communicate()[1].decode()
        assert time.monotonic() < deadline, "the run never got that far"
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=10)
    return err.decode()


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "compressed"])
def test_kill_9_during_grouped_commits_loses_nothing_reported_and_doubles_nothing(
    tmp_path: Path, compress: bool
) -> None:
    """Eight episodes at once finish together (a model answering every request after the same
    delay); the run is killed twice mid-way and resumed each time. Every episode the progress
    reported before a kill is in the file, no episode is stored twice, and the last resume
    completes the run with one line per episode. Compressed (``--compress``), each group is one
    zstd frame: a frame torn by the kill is cut at its start when the run resumes."""
    suite = suite_path(tmp_path)
    run = tmp_path / "runs" / "grouped"
    file = run / (COMPRESSED if compress else PLAIN)
    with ScriptedOpenAIServer() as server:
        server.default = lambda body: slow(finish_reply("It is done."), 0.05)
        base = [sys.executable, "-m", "sandbox", "run"]
        first = [
            *base,
            *("--suite", str(suite), "--agent", "react", "--trials", "8", "--concurrency", "8"),
            *("--model", f"openai:scripted@{server.base_url}"),
            *("--out", str(tmp_path / "runs"), "--run-id", "grouped", "--no-plots"),
            *(["--compress"] if compress else []),
        ]
        total = 0
        for attempt, at_least in enumerate((6, 20)):
            cmd = first if attempt == 0 else [*base, "--resume", str(run), "--no-plots"]
            err = _kill_after(_start(cmd), file, at_least)
            stored = _keys(_lines(file))
            reported = [(task, int(trial)) for task, trial in REPORTED.findall(err)]
            assert reported, err
            assert set(reported) <= set(stored)  # nothing reported is lost
            assert len(stored) == len(set(stored))  # nothing is doubled
            total = len(json.loads((run / "manifest.json").read_text())["episodes"])
            assert len(stored) < total
        done = subprocess.run(
            [*base, "--resume", str(run), "--no-plots", "--json"],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            check=True,
        )
    summary = json.loads(done.stdout.decode().strip().splitlines()[-1])
    stored = _keys(_lines(file))
    assert len(stored) == len(set(stored)) == total == summary["episodes"] == summary["n"]
    assert not (run / (PLAIN if compress else COMPRESSED)).exists()


def test_a_group_larger_than_the_room_left_keeps_the_lines_that_fit(tmp_path: Path) -> None:
    """Under a file size limit (a full disk), a group is written line by line: the lines that
    fit are stored whole and reported (``StoreFull.stored``), the first that does not is cut."""
    store = _store(tmp_path)
    store.release()
    line = _line("a")
    code = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({len(line) * 2 + 10},) * 2)\n"
        "from sandbox.store import RunStore\n"
        "from sandbox.store.run_store import StoreFull\n"
        "store = RunStore.open(sys.argv[1])\n"
        "lines = [l.encode() + b'\\n' for l in sys.argv[2:]]\n"
        "try:\n"
        "    store.append_lines(lines)\n"
        "except StoreFull as e:\n"
        "    print(e.stored)\n"
    )
    lines = [_line(name).decode().rstrip("\n") for name in "abc"]
    done = subprocess.run(
        [sys.executable, "-c", code, str(store.path), *lines],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "2"
    assert [t.scenario_id for t in read_trajectories(store.path)] == ["a", "b"]
    assert (store.path / PLAIN).read_bytes().endswith(b"\n")


async def test_a_report_that_raises_stops_nothing_else_and_is_raised_by_the_next_check(
    tmp_path: Path,
) -> None:
    """A progress line that met a closed pipe (issue 40 item 9): the group's other callbacks
    still run, ``drain`` returns instead of waiting for ever, ``failed`` is set and the error is
    raised by ``check``, ``drain`` and the next ``submit``."""
    store = _store(tmp_path)
    commit = GroupCommit(store)
    shown: list[str] = []

    def broken() -> None:
        raise BrokenPipeError(32, "Broken pipe")

    commit.submit(_line("a"), broken)
    commit.submit(_line("b"), lambda: shown.append("b"))
    try:
        await asyncio.wait_for(commit.failed.wait(), 10)
        with pytest.raises(BrokenPipeError):
            await asyncio.wait_for(commit.drain(), 10)
        with pytest.raises(BrokenPipeError):
            commit.submit(_line("c"), lambda: None)
    finally:
        commit.close()
    assert shown == ["b"]
    assert [t.scenario_id for t in read_trajectories(store.path)] == ["a", "b"]  # both durable
