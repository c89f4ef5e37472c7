"""The suite folder's recording index as a server and a process pool use it: which occurrence
answers, calls only a slow path can key, where a broken line is reported, pickling."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path
from typing import Any

import pytest

from mock_tools import Recording, RecordingStore, Response, load_suite
from mock_tools.errors import SuiteError
from mock_tools.recording_index import IndexedRecordings, LineError, chosen_occurrence
from tests.mock_tools.conftest import write_suite


@pytest.mark.parametrize(
    ("recorded", "call", "answers"),
    [
        ({1, 3}, 3, 3),  # its own
        ({0, 2}, 1, 0),  # the one for every occurrence
        ({1, 3}, 7, 3),  # beyond the last: the last
        ({1, 2, 5}, 4, 2),  # between: the latest before it
        ({1, 3}, 2, 1),
        ({2, 3}, 1, 2),  # before them all: the earliest
    ],
)
def test_which_recorded_occurrence_answers_a_call(
    recorded: set[int], call: int, answers: int
) -> None:
    assert chosen_occurrence(recorded, call) == answers


def _rec(args: dict[str, Any], body: Any, **extra: Any) -> dict[str, Any]:
    return {"tool": "t", "api": "a", "args": args, "response": {"ok": True, "body": body}, **extra}


TOOLS = [{"name": "t", "apis": [{"name": "a"}]}]


def _suite(tmp_path: Path, lines: list[str], *, extra: list[str] | None = None) -> Path:
    root = write_suite(tmp_path / "s", tools=TOOLS, recordings=[], tasks=[])
    (root / "recordings" / "main.jsonl").write_text("".join(line + "\n" for line in lines))
    if extra is not None:
        (root / "recordings" / "more.jsonl").write_text("".join(line + "\n" for line in extra))
    return root


def test_calls_orjson_cannot_write_are_found_all_the_same(tmp_path: Path) -> None:
    """Arguments holding an integer beyond 2**53 or a lone surrogate are keyed by their
    canonical text instead; a call with the same arguments still finds its recording."""
    lines = [
        json.dumps(_rec({"n": 2**60}, "big")),
        json.dumps(_rec({"s": "\ud800"}, "surrogate")),
        json.dumps(_rec({"s": "plain"}, "plain")),
    ]
    store = RecordingStore.from_suite(load_suite(_suite(tmp_path, lines)))
    assert store.lookup("t", "a", {"n": 2**60}) == Response(body="big")
    assert store.lookup("t", "a", {"s": "\ud800"}) == Response(body="surrogate")
    assert store.lookup("t", "a", {"s": "plain"}) == Response(body="plain")
    assert store.lookup("t", "a", {"n": 2**60 + 1}) is None


def test_a_recording_without_args_answers_the_call_without_arguments(tmp_path: Path) -> None:
    line = json.dumps({"tool": "t", "api": "a", "response": {"ok": True, "body": 1}})
    store = RecordingStore.from_suite(load_suite(_suite(tmp_path, [line])))
    assert store.lookup("t", "a", {}) == Response(body=1)


def test_a_line_that_is_not_an_object_is_named_with_its_place(tmp_path: Path) -> None:
    root = _suite(tmp_path, [json.dumps(_rec({}, 1)), "[1, 2]"])
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    main = root / "recordings" / "main.jsonl"
    assert str(caught.value) == f"{main}:2: expected a mapping for Recording"


def test_a_broken_response_is_reported_at_its_file_and_line(tmp_path: Path) -> None:
    """A response that fails validation when served names its own file (the second one here)
    and line."""
    more = [
        json.dumps(_rec({"i": 1}, 1)),
        json.dumps(_rec({"i": 22}, 2)),
        json.dumps({"tool": "t", "api": "a", "args": {"i": 3}, "response": {"ok": "maybe"}}),
    ]
    root = _suite(tmp_path, [json.dumps(_rec({"i": 0}, 0))], extra=more)
    store = RecordingStore.from_suite(load_suite(root))
    with pytest.raises(SuiteError) as caught:
        store.lookup("t", "a", {"i": 3})
    message = str(caught.value)
    assert message.startswith(f"{root / 'recordings' / 'more.jsonl'}:3: response.ok: ")


def test_the_recordings_of_a_folder_compare_by_content(suite_dir: Path) -> None:
    recordings = load_suite(suite_dir).recordings
    assert isinstance(recordings, IndexedRecordings)
    as_list = list(recordings)
    assert recordings == as_list
    assert recordings != as_list[:-1]
    changed = [*as_list[:-1], Recording(tool="x", api="y", response=Response())]
    assert recordings != changed
    assert (recordings == 5) is False


def test_a_recording_is_read_by_position_from_either_end(suite_dir: Path) -> None:
    recordings = load_suite(suite_dir).recordings
    n = len(recordings)
    assert recordings[-1] == recordings[n - 1] == list(recordings)[-1]
    with pytest.raises(IndexError, match=f"^{n}$"):
        recordings[n]
    with pytest.raises(IndexError):
        recordings[-n - 1]


def test_a_line_error_reads_as_its_message() -> None:
    error = LineError("must be an object", "args")
    assert (str(error), error.message, error.field) == (
        "must be an object",
        "must be an object",
        "args",
    )


def test_an_index_pickles_as_where_it_is_or_as_its_bytes(suite_dir: Path) -> None:
    """A cached index travels to a worker as its path (and stays path-backed there); one kept in
    memory travels as its bytes. Both answer the same lookups."""
    index = load_suite(suite_dir).recordings
    assert isinstance(index, IndexedRecordings)
    cached = index.recording_index
    assert cached.path is not None
    again = pickle.loads(pickle.dumps(cached))
    assert again.path == cached.path
    assert pickle.loads(pickle.dumps(again)).path == cached.path
    memory = type(cached)(cached.root, bytes(cached._data))
    copy = pickle.loads(pickle.dumps(memory))
    assert copy.path is None
    key = '{"order_id":"A1"}'
    for each in (again, copy):
        found = each.locate(None, "shop", "order status", key, 2)
        assert found is not None and found[0] == Response(body={"status": "shipped"})


def test_an_index_whose_cache_file_is_gone_says_to_load_the_suite_again(suite_dir: Path) -> None:
    cached = load_suite(suite_dir).recordings
    assert isinstance(cached, IndexedRecordings)
    path = cached.recording_index.path
    assert path is not None
    sent = pickle.dumps(cached.recording_index)
    path.unlink()
    with pytest.raises(SuiteError) as caught:
        pickle.loads(sent)
    assert str(caught.value) == (
        f"{path}: the recordings index changed or is gone; load the suite again"
    )


def test_an_api_s_keys_are_decoded_once_and_an_api_without_recordings_has_none(
    suite_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``nearest`` reads every key of an API on every miss: each recorded line is decoded the
    first time only."""
    recordings = load_suite(suite_dir).recordings
    assert isinstance(recordings, IndexedRecordings)
    index = recordings.recording_index
    read: list[int] = []
    line = index.line

    def counted(number: int) -> Recording:
        read.append(number)
        return line(number)

    monkeypatch.setattr(index, "line", counted)
    want = ['{"city":"Oslo"}', '{"city":"Paris","days":1}', '{"city":"Parma"}']
    for _ in range(3):
        assert list(index.keys("Weather Now", "current", None))[:3] == want
    assert len(read) == len(set(read)) == 4  # Oslo, Paris, Parma, Atlantis
    assert list(index.keys("Weather Now", "no such api", None)) == []


def test_closing_an_index_closes_its_files_and_a_later_lookup_reopens_them(
    suite_dir: Path,
) -> None:
    recordings = load_suite(suite_dir).recordings
    assert isinstance(recordings, IndexedRecordings)
    index = recordings.recording_index
    key = '{"order_id":"A1"}'
    assert index.locate(None, "shop", "order status", key, 1) is not None
    opened = list(index._fds)
    assert opened
    index.close()
    for fd in opened:
        with pytest.raises(OSError):
            os.fstat(fd)
    found = index.locate(None, "shop", "order status", key, 2)
    assert found is not None and found[0] == Response(body={"status": "shipped"})


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ({"tool": 1, "api": "a", "response": {}}, "tool: 'tool' and 'api' must be strings"),
        ({"tool": "t", "api": "a", "args": [], "response": {}}, "args: must be an object"),
        ({"tool": "t", "api": "a", "response": "ok"}, "response: must be an object"),
        *(
            (
                {"tool": "t", "api": "a", "occurrence": bad, "response": {}},
                "occurrence: must be an integer in 1..2147483647",
            )
            for bad in (True, 0, 2**31, "2")
        ),
    ],
)
def test_a_bad_key_field_is_named_with_its_place_and_the_rule(
    tmp_path: Path, line: dict[str, Any], problem: str
) -> None:
    root = _suite(tmp_path, [json.dumps(_rec({}, 1)), json.dumps(line)])
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    assert str(caught.value) == f"{root / 'recordings' / 'main.jsonl'}:2: {problem}"


def test_the_last_allowed_occurrence_is_indexed(tmp_path: Path) -> None:
    line = _rec({}, "late", occurrence=2**31 - 1)
    store = RecordingStore.from_suite(load_suite(_suite(tmp_path, [json.dumps(line)])))
    assert store.lookup("t", "a", {}, 2**31 - 1) == Response(body="late")
