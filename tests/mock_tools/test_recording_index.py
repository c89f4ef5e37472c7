"""The compact recording index: built once, cached by fingerprint, rebuilt when stale or corrupt,
and answering exactly as the in-memory store of decoded recordings does."""

from __future__ import annotations

import json
import pickle
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mock_tools import RecordingStore, SuiteError, load_suite, validate_suite
from mock_tools.canonical import canonical_args, canonicaliser
from mock_tools.recording_index import CACHE_NAME, IndexedRecordings
from mock_tools.suite import Suite, iter_recordings
from tests.mock_tools.conftest import RECORDINGS, write_suite

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = sorted(
    [p for p in (ROOT / "scenarios").iterdir() if (p / "recordings").is_dir()]  # not a world's
    + [ROOT / "tests" / "fixtures" / "suites" / "mini"]
)


@pytest.fixture(autouse=True)
def _own_temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index's last cache location is the shared temp dir (``mock_tools-<uid>``), which
    outlives a test run: an index another process left there for a suite of the same content
    would be opened instead of the one these tests expect to see built. Each test gets its own."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()


def _objects(suite: Suite) -> RecordingStore:
    """The store as it was before the index: every recording decoded and kept in dicts."""
    assert suite.path is not None
    schemas = {pair: spec.parameters for pair, spec in suite.apis.items()}
    return RecordingStore(iter_recordings(suite.path / "recordings"), schemas=schemas)


def _same_answers(suite: Suite) -> None:
    indexed, objects = RecordingStore.from_suite(suite), _objects(suite)
    assert len(indexed) == len(objects)
    assert indexed.duplicates == objects.duplicates
    for tool, api in {(r.tool, r.api) for r in suite.recordings}:
        assert list(indexed.keys(tool, api)) == list(objects.keys(tool, api))
    for rec in suite.recordings:
        key = objects.key(rec.tool, rec.api, rec.args)
        for scope in (None, rec.scope, "another scope"):
            for occurrence in (1, 2, 3, 7):
                want = objects.get(rec.tool, rec.api, key, occurrence, scope=scope)
                got = indexed.get(rec.tool, rec.api, key, occurrence, scope=scope)
                assert got == want, (rec.tool, rec.api, key, occurrence, scope)
                # the place a transport caches encoded answers under is the same too
                where = indexed.locate(rec.tool, rec.api, key, occurrence, scope=scope)
                assert where == objects.locate(rec.tool, rec.api, key, occurrence, scope=scope)
            assert indexed.has(rec.tool, rec.api, key, scope=scope) == objects.has(
                rec.tool, rec.api, key, scope=scope
            )
    assert indexed.get(rec.tool, rec.api, '{"no":"such call"}') is None


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_bundled_suites_answer_as_the_object_store_did(path: Path, tmp_path: Path) -> None:
    copy = tmp_path / path.name
    shutil.copytree(path, copy, ignore=shutil.ignore_patterns(".cache", "overlay.sqlite*"))
    suite = load_suite(copy)
    assert isinstance(suite.recordings, IndexedRecordings)
    assert list(suite.recordings) == list(iter_recordings(copy / "recordings"))
    _same_answers(suite)


def _rec(args: dict[str, Any], body: Any, **extra: Any) -> dict[str, Any]:
    return {
        "tool": "shop",
        "api": "order status",
        "args": args,
        "response": {"ok": True, "body": body},
        **extra,
    }


ODD = [
    _rec({"order_id": "B"}, "b-any"),
    _rec({"order_id": "A"}, "a3", occurrence=3),
    _rec({"order_id": "A"}, "a1", occurrence=1),
    _rec({"order_id": " A "}, "a1 again", occurrence=1),  # a duplicate: the first one wins
    _rec({"order_id": "B"}, "b2", occurrence=2),
    _rec({"order_id": "B"}, "b-any twice"),  # a duplicate of the unscoped "every occurrence"
    _rec({"order_id": "C"}, "c5", occurrence=5),
    _rec({"order_id": "C"}, "c2", occurrence=2),
    _rec({"order_id": "A"}, "a-scoped", scope="episode-1"),
    _rec({"order_id": "D", "big": 2**60}, "big int"),  # orjson cannot write it: hashed as text
    _rec({"order_id": "é東😀", "n": 1.5, "deep": {"x": [1, None, "y"]}}, "unicode"),
]


def test_duplicates_occurrences_and_scopes_keep_their_meaning(make_suite) -> None:
    suite = load_suite(make_suite("odd", recordings=[*RECORDINGS, *ODD]))
    _same_answers(suite)
    store = RecordingStore.from_suite(suite)
    key = store.key("shop", "order status", {"order_id": "A"})
    assert [store.get("shop", "order status", key, n).body for n in (1, 2, 3, 4)] == [
        "a1",
        "a1",
        "a3",
        "a3",
    ]
    assert store.get("shop", "order status", key, 1, scope="episode-1").body == "a-scoped"
    assert store.lookup("shop", "order status", {"order_id": "D", "big": 2**60}).body == "big int"
    assert [d[2] for d in store.duplicates] == ['{"order_id":"A"}', '{"order_id":"B"}']
    assert store.keys("shop", "order status")[:3] == [
        '{"order_id":"A1"}',
        '{"order_id":"B"}',
        '{"order_id":"A"}',
    ]


def test_built_once_then_reopened_from_the_cache(suite_dir: Path) -> None:
    first = load_suite(suite_dir)
    cache = suite_dir / ".cache" / CACHE_NAME
    assert isinstance(first.recordings, IndexedRecordings)
    assert first.recordings.recording_index.path == cache
    stamp = cache.stat().st_mtime_ns
    again = load_suite(suite_dir)
    assert cache.stat().st_mtime_ns == stamp  # opened, not rebuilt
    assert again.fingerprint == first.fingerprint
    _same_answers(again)


def test_a_changed_suite_rebuilds_its_index(suite_dir: Path) -> None:
    load_suite(suite_dir)
    changed = dict(RECORDINGS[0], response={"ok": True, "body": {"temp_c": -40}})
    (suite_dir / "recordings" / "main.jsonl").write_text(json.dumps(changed) + "\n")
    suite = load_suite(suite_dir)
    assert len(suite.recordings) == 1
    store = RecordingStore.from_suite(suite)
    assert store.lookup("Weather Now", "current", {"city": "Oslo"}).body == {"temp_c": -40}
    assert store.lookup("Weather Now", "current", {"city": "Paris"}) is None


# header fields: 96 entries, 104 lines, 128 metadata length, 136 hash bits
HEADER_FIELDS = {"entries": 96, "lines": 104, "meta_len": 128, "bits": 136}


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "garbage", *HEADER_FIELDS])
def test_a_corrupt_cache_is_rebuilt(suite_dir: Path, damage: str) -> None:
    load_suite(suite_dir)
    cache = suite_dir / ".cache" / CACHE_NAME
    data = bytearray(cache.read_bytes())
    if damage == "flip":
        data[-3] ^= 0xFF
    elif damage in HEADER_FIELDS:  # a count or length in the header, not the arrays
        data[HEADER_FIELDS[damage]] ^= 0x03
    elif damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "empty":
        data = bytearray()
    else:
        data = bytearray(b"not an index at all" * 10)
    cache.write_bytes(bytes(data))
    suite = load_suite(suite_dir)
    _same_answers(suite)
    assert cache.read_bytes() != bytes(data)  # written again, whole


def test_a_symlinked_recordings_folder_is_fingerprinted_by_its_content(
    suite_dir: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "kept-elsewhere"
    (suite_dir / "recordings").rename(elsewhere)
    (suite_dir / "recordings").symlink_to(elsewhere, target_is_directory=True)
    (elsewhere / "loop").symlink_to(elsewhere, target_is_directory=True)  # no endless walk
    before = load_suite(suite_dir)
    city = {"city": "Reykjavik"}
    assert RecordingStore.from_suite(before).lookup("Weather Now", "current", city) is None
    lines = (elsewhere / "main.jsonl").read_text()
    added = json.loads(lines.splitlines()[0])
    assert (added["tool"], added["api"]) == ("Weather Now", "current")
    added["args"] = city
    (elsewhere / "main.jsonl").write_text(lines + json.dumps(added) + "\n")
    after = load_suite(suite_dir)
    assert after.fingerprint != before.fingerprint
    assert len(after.recordings) == len(before.recordings) + 1
    assert RecordingStore.from_suite(after).lookup("Weather Now", "current", city) is not None


def test_an_unwritable_suite_folder_caches_elsewhere(suite_dir: Path, tmp_path: Path) -> None:
    (suite_dir / ".cache").write_text("a file where the cache folder would be")
    elsewhere = tmp_path / "cache-home"
    suite = load_suite(suite_dir, cache_dir=elsewhere)
    assert isinstance(suite.recordings, IndexedRecordings)
    cached = suite.recordings.recording_index.path
    assert cached is not None and cached.parent == elsewhere
    stamp = cached.stat().st_mtime_ns
    again = load_suite(suite_dir, cache_dir=elsewhere)
    assert isinstance(again.recordings, IndexedRecordings)
    assert again.recordings.recording_index.path == cached
    assert cached.stat().st_mtime_ns == stamp
    _same_answers(again)


def test_the_cache_dir_comes_from_the_environment(
    suite_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (suite_dir / ".cache").write_text("not a folder")
    monkeypatch.setenv("MOCK_TOOLS_CACHE_DIR", str(tmp_path / "env-cache"))
    suite = load_suite(suite_dir)
    assert isinstance(suite.recordings, IndexedRecordings)
    path = suite.recordings.recording_index.path
    assert path is not None and path.parent == tmp_path / "env-cache"


def test_a_bad_line_names_its_file_and_line(make_suite) -> None:
    path = make_suite("bad", recordings=RECORDINGS[:2])
    with (path / "recordings" / "main.jsonl").open("a") as fh:
        fh.write("\n" + json.dumps({"tool": "shop", "api": "id", "args": []}) + "\n")
    with pytest.raises(SuiteError, match=r"main\.jsonl:4: args: must be an object"):
        load_suite(path)


def test_a_line_that_breaks_the_model_is_reported_when_read(make_suite) -> None:
    bad = _rec({"order_id": "Z"}, "z", provenance={"source": "nowhere"})
    suite = load_suite(make_suite("late", recordings=[*RECORDINGS, bad]))
    with pytest.raises(SuiteError, match=r"main\.jsonl:9: provenance\.source"):
        list(suite.recordings)


def test_pickled_recordings_reopen_the_same_index(suite: Suite) -> None:
    copy = pickle.loads(pickle.dumps(suite))
    assert list(copy.recordings) == list(suite.recordings)
    _same_answers(copy)


def test_recordings_are_a_sequence(suite: Suite) -> None:
    recs = suite.recordings
    assert len(recs) == len(RECORDINGS)
    assert recs[-1] == recs[len(recs) - 1] and recs[1:3] == list(recs)[1:3]
    with pytest.raises(IndexError):
        recs[len(recs)]


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
)
_TYPES = st.sampled_from([None, "string", "integer", "number", "boolean", "array", ["integer"]])


# generation, not the code under test, is slow on a loaded machine: no time limits (they failed
# the health check under mutmut's tracing run on a shared 2-core machine)
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    args=st.dictionaries(
        st.sampled_from(["a", "b", "c", "d"]),
        st.one_of(_SCALARS, st.lists(_SCALARS, max_size=2), st.dictionaries(st.text(), _SCALARS)),
        max_size=4,
    ),
    types=st.dictionaries(st.sampled_from(["a", "b", "c"]), _TYPES, max_size=3),
    defaults=st.dictionaries(st.sampled_from(["a", "c"]), _SCALARS, max_size=2),
)
def test_the_short_canonical_path_agrees_with_canonical_args(args, types, defaults) -> None:
    props: dict[str, Any] = {k: ({"type": t} if t is not None else {}) for k, t in types.items()}
    for k, v in defaults.items():
        props.setdefault(k, {})["default"] = v
    schema = {"type": "object", "properties": props}
    assert canonicaliser(schema)(args) == canonical_args(args, schema)


def test_a_suite_without_recordings(make_suite) -> None:
    suite = load_suite(make_suite("none", recordings=[]))
    assert len(suite.recordings) == 0 and list(suite.recordings) == []
    store = RecordingStore.from_suite(suite)
    assert len(store) == 0 and store.lookup("shop", "id", {}) is None
    assert list(store.keys("shop", "id")) == []


def test_written_suites_are_reindexed_after_more_lines(tmp_path: Path) -> None:
    path = write_suite(tmp_path / "grow", recordings=RECORDINGS[:1])
    assert len(load_suite(path).recordings) == 1
    with (path / "recordings" / "main.jsonl").open("a") as fh:
        fh.write(json.dumps(RECORDINGS[1]) + "\n")
    assert len(load_suite(path).recordings) == 2


def test_a_jsonl_cut_short_after_indexing_is_an_error_not_garbage(suite_dir: Path) -> None:
    suite = load_suite(suite_dir)
    jsonl = suite_dir / "recordings" / "main.jsonl"
    jsonl.write_bytes(jsonl.read_bytes()[:40])
    store = RecordingStore.from_suite(suite)
    with pytest.raises(SuiteError, match="cut short since it was indexed"):
        store.lookup("Weather Now", "current", {"city": "Oslo"})


def test_a_jsonl_cut_short_while_served_is_an_error_not_garbage(suite_dir: Path) -> None:
    store = RecordingStore.from_suite(load_suite(suite_dir))
    assert store.lookup("Weather Now", "current", {"city": "Oslo"}) is not None  # files open
    jsonl = suite_dir / "recordings" / "main.jsonl"
    data = jsonl.read_bytes()
    last = json.loads(data.splitlines()[-1])
    with jsonl.open("r+b") as f:  # cut in place, as a careless editor would, while open
        f.truncate(len(data) // 2)
    with pytest.raises(SuiteError, match="cut short since it was indexed"):
        store.lookup(last["tool"], last["api"], last["args"], last.get("occurrence") or 1)


def test_validate_reports_a_line_that_breaks_the_model(make_suite) -> None:
    bad = _rec({"order_id": "Z"}, "z", response={"ok": "maybe"})
    report = validate_suite(make_suite("invalid", recordings=[*RECORDINGS, bad]))
    assert not report.ok and "main.jsonl:9" in report.errors[0]


def test_the_temp_dir_is_the_last_place_and_only_a_private_folder_there(
    suite_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (suite_dir / ".cache").write_text("not a folder")
    blocked = tmp_path / "blocked"
    blocked.write_text("not a folder either")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    suite = load_suite(suite_dir, cache_dir=blocked)
    assert isinstance(suite.recordings, IndexedRecordings)
    path = suite.recordings.recording_index.path
    assert path is not None and path.parent.parent == tmp_path / "tmp"
    assert path.parent.stat().st_mode & 0o777 == 0o700
    # a folder there that others may write is never trusted: the index stays in memory
    shutil.rmtree(path.parent)
    path.parent.mkdir(mode=0o777)
    path.parent.chmod(0o777)
    again = load_suite(suite_dir, cache_dir=blocked)
    assert isinstance(again.recordings, IndexedRecordings)
    assert again.recordings.recording_index.path is None
    assert not any(path.parent.iterdir())
    _same_answers(again)
