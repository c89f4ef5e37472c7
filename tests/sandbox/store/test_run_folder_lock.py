"""One writer per run folder: a second writer is refused naming the holder, a released or dead
holder's lock is taken over, and a run folder is made or opened with one-line errors."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from sandbox.errors import RunError
from sandbox.store import Manifest, RunStore, SuiteInfo
from sandbox.store.config import RunConfig
from sandbox.store.lock import LOCK_FILE, RunLock
from sandbox.store.run_store import run_folder


def _manifest(run_id: str = "r1") -> Manifest:
    return Manifest(run_id=run_id, config=RunConfig(), suite=SuiteInfo(name="s"))


def test_a_second_writer_is_refused_naming_the_process_that_holds_the_run(tmp_path: Path) -> None:
    """flock locks belong to an open file, so a second ``RunLock`` (another writer) is refused
    even in this process; the message names the run and the holder's process id."""
    first = RunLock(tmp_path, "run-a")
    first.acquire()
    assert first.held
    assert (tmp_path / LOCK_FILE).read_text() == f"{os.getpid()}\n"
    second = RunLock(tmp_path, "run-a")
    with pytest.raises(RunError) as caught:
        second.acquire()
    assert str(caught.value) == (
        f"run run-a is in use by process {os.getpid()}; wait for it to end (or stop it) "
        "before resuming"
    )
    assert not second.held
    assert second.owner() == os.getpid()  # seen from outside, without taking the lock
    first.release()
    assert not first.held
    assert (tmp_path / LOCK_FILE).read_text() == ""  # no stale process id is left behind
    assert second.owner() is None
    second.acquire()  # the lock of a writer that ended is taken over
    assert second.owner() == os.getpid()
    second.release()


def test_taking_or_giving_up_the_lock_twice_changes_nothing(tmp_path: Path) -> None:
    lock = RunLock(tmp_path, "r")
    lock.release()  # never taken: nothing to give up
    lock.acquire()
    lock.acquire()  # already held: not refused by itself
    assert lock.held and lock.owner() == os.getpid()
    lock.release()
    lock.release()
    assert not lock.held and lock.owner() is None


def test_a_holder_whose_lock_file_names_no_process_is_reported_as_unknown(tmp_path: Path) -> None:
    """The lock file is the only place the holder's id is read from: unreadable text is
    ``?`` in the message and -1 from ``owner``, still a holder (the run is in use)."""
    holder = RunLock(tmp_path, "r")
    holder.acquire()
    assert holder._fd is not None
    os.ftruncate(holder._fd, 0)
    os.pwrite(holder._fd, b"not a pid\n", 0)
    other = RunLock(tmp_path, "r")
    assert other.owner() == -1
    os.ftruncate(holder._fd, 0)
    with pytest.raises(RunError, match=r"in use by process \?;"):
        other.acquire()
    holder.release()


def test_no_lock_file_means_no_holder(tmp_path: Path) -> None:
    assert RunLock(tmp_path, "r").owner() is None
    assert not (tmp_path / LOCK_FILE).exists()  # asking does not make one


def test_a_lock_that_cannot_be_made_is_a_one_line_error(tmp_path: Path) -> None:
    lock = RunLock(tmp_path / "missing", "r9")
    with pytest.raises(RunError) as caught:
        lock.acquire()
    assert str(caught.value) == (
        f"cannot lock run r9 ({tmp_path / 'missing' / LOCK_FILE}): No such file or directory"
    )


def test_a_new_run_is_locked_and_an_existing_one_is_never_overwritten(tmp_path: Path) -> None:
    """``create`` writes the manifest (JSON, aliases, a final newline) and keeps the lock;
    a second ``create`` of the same run, once the first let go, points at ``--resume`` and
    leaves the lock free for the resume."""
    store = RunStore.create(tmp_path / "runs", _manifest())
    assert store.path == tmp_path / "runs" / "r1"
    text = (store.path / "manifest.json").read_text()
    assert text.endswith("}\n") and text.startswith('{\n  "schema": "agent-sandbox/run@1",')
    assert store.run_lock.owner() == os.getpid()
    store.release()
    with pytest.raises(RunError) as caught:
        RunStore.create(tmp_path / "runs", _manifest())
    assert str(caught.value) == (
        f"{store.path} already holds a run; use --resume {store.path} to continue it"
    )
    again = RunStore.open(store.path)
    assert again.run_lock.owner() is None  # the refused create gave the lock up
    again.lock()
    assert again.run_lock.held
    again.release()
    assert json.loads(text) == json.loads((store.path / "manifest.json").read_text())


def test_a_run_folder_that_cannot_be_made_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "out").write_text("a file, not a folder")
    with pytest.raises(RunError, match=r"^cannot create the run folder .*out/r1: "):
        RunStore.create(tmp_path / "out", _manifest())


def test_opening_what_is_no_run_says_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(RunError) as caught:
        RunStore.open(tmp_path)
    assert str(caught.value) == f"{tmp_path} is not a run folder (no manifest.json)"
    (tmp_path / "manifest.json").write_text('{"run_id": "x"}')
    with pytest.raises(RunError) as caught:
        RunStore.open(tmp_path)
    file = tmp_path / "manifest.json"
    assert str(caught.value) == f"{file}: not a valid manifest: config: Field required"
    (tmp_path / "manifest.json").write_bytes(b"\xff\xfe{}")
    with pytest.raises(RunError, match=r"manifest.json: not a valid manifest: .*utf-8"):
        RunStore.open(tmp_path)
    (tmp_path / "manifest.json").unlink()
    (tmp_path / "manifest.json").mkdir()
    with pytest.raises(RunError, match="is not a run folder"):
        RunStore.open(tmp_path)


def test_a_run_id_must_be_a_folder_directly_in_the_output_folder(tmp_path: Path) -> None:
    assert run_folder(tmp_path / "out", "a.b") == tmp_path / "out" / "a.b"
    assert run_folder("runs", "x") == Path("runs") / "x"  # as given, not resolved
    with pytest.raises(RunError, match=r"^run id '\.\.' is not a folder name"):
        run_folder(tmp_path, "..")
    with pytest.raises(RunError, match=r"^run id '../x' is not a folder name"):
        run_folder(tmp_path, "../x")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "away").symlink_to(tmp_path)
    with pytest.raises(RunError) as caught:
        run_folder(tmp_path / "out", "away")
    assert str(caught.value) == f"run id 'away' leaves the output folder {tmp_path / 'out'}"
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(RunError, match=r"^cannot use the output folder .*loop"):
        run_folder(tmp_path / "loop", "x")


def test_the_holders_id_is_read_from_the_first_32_bytes_of_the_lock_file(tmp_path: Path) -> None:
    """A holder's file is its process id and a newline; bytes after the first 32 (another
    writer's leftovers) and bytes that are no ASCII never break the message."""
    holder = RunLock(tmp_path, "r")
    holder.acquire()
    assert holder._fd is not None
    os.pwrite(holder._fd, b"4242" + b" " * 28 + b"junk", 0)
    other = RunLock(tmp_path, "r")
    assert other.owner() == 4242
    with pytest.raises(RunError, match=r"in use by process 4242;"):
        other.acquire()
    os.ftruncate(holder._fd, 0)
    os.pwrite(holder._fd, b"\xff\xfe12\n", 0)
    assert other.owner() == -1
    with pytest.raises(RunError, match="in use by process \ufffd\ufffd12;"):
        other.acquire()
    holder.release()


def test_the_lock_file_is_readable_by_all_and_executable_by_none(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        lock = RunLock(tmp_path, "r")
        lock.acquire()
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / LOCK_FILE).stat().st_mode) == 0o644
    lock.release()


def test_a_recorded_run_opens_where_its_plugins_are_not_installed(tmp_path: Path) -> None:
    """A run made with a plugin's miss policy is read (viewed, scored) without the plugin: its
    manifest's config is read as recorded, not checked again."""
    store = RunStore.create(tmp_path / "runs", _manifest())
    store.release()
    data = json.loads((store.path / "manifest.json").read_text())
    data["config"]["tools"]["miss_policy"] = "someones_plugin:Policy"
    (store.path / "manifest.json").write_text(json.dumps(data))
    opened = RunStore.open(store.path)
    assert opened.manifest.config.tools.miss_policy == "someones_plugin:Policy"


def test_a_manifest_the_system_cannot_read_is_named_with_the_systems_reason(
    tmp_path: Path,
) -> None:
    (tmp_path / "manifest.json").symlink_to("/proc/self/mem")  # a file whose read fails
    with pytest.raises(RunError) as caught:
        RunStore.open(tmp_path)
    file = tmp_path / "manifest.json"
    assert str(caught.value) == f"{file}: cannot read the manifest: Input/output error"
