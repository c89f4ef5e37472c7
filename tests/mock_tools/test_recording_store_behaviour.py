"""The recording store, its occurrence counter and the writer of runtime recordings, as a server
and a crash-recovering run rely on them."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

import mock_tools.store as store_module
from mock_tools import OccurrenceCounter, Recording, RecordingStore, RecordingWriter, Response
from mock_tools.errors import MockToolsError
from mock_tools.suite import load_suite

ORDER = ("shop", "order status")


@pytest.fixture
def indexed(suite_dir: Path) -> RecordingStore:
    """The tiny suite's store, served from its folder's recording index."""
    return RecordingStore.from_suite(load_suite(suite_dir))


def test_counts_forgotten_for_memory_also_forget_their_scope() -> None:
    """When the least recently used counts are dropped (the limit), a scope whose every count is
    gone is no longer listed; one with counts left still is."""
    counter = OccurrenceCounter(limit=2)
    counter.next("a", "t", "x", "{}")
    counter.next("a", "t", "y", "{}")
    counter.next("b", "t", "z", "{}")  # drops (a, x)
    assert counter.scopes() == ["a", "b"]
    counter.next("b", "t", "w", "{}")  # drops (a, y): nothing of a is left
    assert counter.scopes() == ["b"]
    assert (len(counter), counter.peek("a", "t", "y", "{}")) == (2, 0)
    assert counter.reset("a") == 0  # already gone: nothing to drop
    assert counter.reset("b") == 1


def test_a_call_is_served_from_its_first_occurrence_by_default(indexed: RecordingStore) -> None:
    key = indexed.key(*ORDER, {"order_id": "A1"})
    assert indexed.get(*ORDER, key) == Response(body={"status": "pending"})
    assert indexed.lookup(*ORDER, {"order_id": "A1"}) == Response(body={"status": "pending"})
    assert indexed.lookup(*ORDER, {"order_id": "A1"}, 2) == Response(body={"status": "shipped"})
    memory = RecordingStore(
        [
            Recording(tool="t", api="a", args={}, response=Response(body=1), occurrence=1),
            Recording(tool="t", api="a", args={}, response=Response(body=2), occurrence=2),
        ]
    )
    assert memory.lookup("t", "a", {}) == Response(body=1)
    assert memory.lookup("t", "a", {}, 2) == Response(body=2)


def test_adding_a_call_already_recorded_is_refused_and_reported(indexed: RecordingStore) -> None:
    """The first recording of a call wins: adding one the suite's index holds, or one added
    before, returns False, keeps the first and lists the duplicate."""
    key = indexed.key(*ORDER, {"order_id": "A1"})
    assert indexed.add_keyed(*ORDER, key, Response(body="late"), 1) is False
    fresh = indexed.key(*ORDER, {"order_id": "B7"})
    assert indexed.add_keyed(*ORDER, fresh, Response(body="first")) is True
    assert indexed.add_keyed(*ORDER, fresh, Response(body="second")) is False
    assert indexed.get(*ORDER, fresh) == Response(body="first")
    assert indexed.get(*ORDER, key) == Response(body={"status": "pending"})
    assert indexed.duplicates == [(*ORDER, key, 1), (*ORDER, fresh, None)]


def test_keys_of_an_api_list_the_suite_s_then_the_added_ones(indexed: RecordingStore) -> None:
    recorded = ['{"order_id":"A1"}']
    assert list(indexed.keys(*ORDER)) == recorded
    added = indexed.key(*ORDER, {"order_id": "Z9"})
    indexed.add_keyed(*ORDER, added, Response(body=0))
    assert list(indexed.keys(*ORDER)) == [*recorded, added]


def test_the_store_gives_each_api_s_schema(indexed: RecordingStore, suite_dir: Path) -> None:
    suite = load_suite(suite_dir)
    assert indexed.schema(*ORDER) == suite.apis[ORDER].parameters
    assert indexed.schema("shop", "no such api") is None


# -- RecordingWriter ------------------------------------------------------------------------------


def test_a_recording_is_one_compact_utf_8_line_with_every_field(tmp_path: Path) -> None:
    """Each line is the whole recording (defaults included, so a reader of another version sees
    every field), compact JSON with non-ASCII text as itself, in new folders if needed."""
    path = tmp_path / "new" / "nested" / "made.jsonl"
    rec = Recording(tool="météo", api="now", args={"city": "Zürich"}, response=Response(body=1))
    with RecordingWriter(path) as writer:
        writer.append(rec)
    line = path.read_bytes()
    expected = {
        "tool": "météo",
        "api": "now",
        "args": {"city": "Zürich"},
        "response": {"ok": True, "body": 1, "error": "", "latency_ms": 0},
    }
    data = json.loads(line)
    assert {k: data[k] for k in expected} == expected
    assert set(data) == set(Recording.model_fields)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert b", " not in line and b'": ' not in line
    assert "Zürich".encode() in line and b"\\u" not in line


def test_a_new_recordings_file_is_readable_by_everyone_writable_by_its_owner(
    tmp_path: Path,
) -> None:
    old = os.umask(0)
    try:
        RecordingWriter(tmp_path / "r.jsonl").close()
    finally:
        os.umask(old)
    assert (tmp_path / "r.jsonl").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (b'{"a":1}\n', b'{"a":1}\n'),
        (b"l1\nl2\npart", b"l1\nl2\n"),
        (b"\npartial", b"\n"),
        (b"\n" + b"x" * 65536, b"\n"),  # the last newline in the second block read
        (b"l1\n" + b"y" * 70000, b"l1\n"),
        (b"no newline at all", b""),
    ],
)
def test_opening_cuts_only_a_torn_last_line(
    tmp_path: Path, before: bytes, after: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(before)
    with caplog.at_level(logging.WARNING, logger="mock_tools.store"):
        RecordingWriter(path).close()
    assert path.read_bytes() == after
    torn = len(before) - len(after)
    warnings = [r.getMessage() for r in caplog.records]
    assert warnings == ([f"{path}: cutting a torn last line ({torn} bytes)"] if torn else [])


def test_a_short_write_is_rolled_back_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write the disk took only part of (full disk) leaves the file as it was, and the error
    says how much was written."""
    path = tmp_path / "r.jsonl"
    rec = Recording(tool="t", api="a", args={}, response=Response(body=1))
    writer = RecordingWriter(path)
    writer.append(rec)
    before = path.read_bytes()
    real_write = os.write

    def short(fd: int, data: Any) -> int:
        return real_write(fd, bytes(data)[:3])

    monkeypatch.setattr(store_module.os, "write", short)
    with pytest.raises(MockToolsError) as caught:
        writer.append(rec)
    monkeypatch.undo()
    writer.close()
    assert path.read_bytes() == before
    assert str(caught.value) == f"{path}: short write (3/{len(before)} bytes)"


def test_closing_a_writer_twice_closes_its_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = RecordingWriter(tmp_path / "r.jsonl")
    closed: list[int] = []
    real_close = os.close

    def close(fd: int) -> None:
        closed.append(fd)
        real_close(fd)

    monkeypatch.setattr(store_module.os, "close", close)
    writer.close()
    writer.close()
    monkeypatch.undo()
    assert len(closed) == 1 and closed[0] > 2  # its own descriptor, never a standard one
