"""The suite's YAML documents cached by fingerprint: a second load validates them from the cache
(the same objects, no YAML parsed), a changed suite reads its YAML again, a damaged cache is
ignored, an unwritable suite caches elsewhere, and documents JSON cannot carry are not cached."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mock_tools import load_suite
from mock_tools.suite import fingerprint
from mock_tools.suite_cache import CACHE_NAME, cached_docs, store_docs
from mock_tools.validate import load_valid_suite

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "mini"


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    dest = tmp_path / "mini"
    shutil.copytree(MINI, dest, ignore=shutil.ignore_patterns(".cache"))
    return dest


def _state(suite: object) -> tuple[object, ...]:
    """What a loaded suite's models hold, with which fields each was given."""
    s = suite
    tasks = [(t, t.model_fields_set, t.reference.model_fields_set) for t in s.tasks]  # type: ignore[attr-defined]
    tools = [(t, t.model_fields_set) for t in s.tools.values()]  # type: ignore[attr-defined]
    return (s.meta, s.meta.model_fields_set, tools, tasks, s.fingerprint)  # type: ignore[attr-defined]


def test_a_second_load_comes_from_the_cache_with_the_same_objects(suite_dir: Path) -> None:
    """The first load writes the cache beside the recording index; the second is equal, model
    for model, to the first (fields given included)."""
    first = load_suite(suite_dir)
    cache = suite_dir / ".cache" / CACHE_NAME
    assert cache.is_file()
    stamp = cache.stat().st_mtime_ns
    again = load_suite(suite_dir)
    assert cache.stat().st_mtime_ns == stamp  # read, not written again
    assert _state(again) == _state(first)
    assert load_valid_suite(suite_dir).tasks == first.tasks


def test_what_loads_is_the_cache_not_the_yaml(suite_dir: Path) -> None:
    """Documents cached under the suite's fingerprint are what the next load validates (so no
    YAML is parsed), and they go through the same models and checks as the YAML's."""
    suite = load_suite(suite_dir)
    docs = cached_docs(suite_dir, suite.fingerprint, None)
    assert docs is not None
    name, file_docs = docs["tasks"][0]
    file_docs[0][1]["query"] = "A query only the cache holds."
    store_docs(suite_dir, suite.fingerprint, None, docs)
    assert load_suite(suite_dir).tasks[0].query == "A query only the cache holds."
    file_docs[0][1]["group"] = "G7"  # a group the model refuses
    store_docs(suite_dir, suite.fingerprint, None, docs)
    with pytest.raises(Exception, match="G7"):
        load_suite(suite_dir)


def test_a_changed_suite_reads_its_yaml_again(suite_dir: Path) -> None:
    before = load_suite(suite_dir)
    task_file = sorted((suite_dir / "tasks").glob("*.yaml"))[0]
    text = task_file.read_text()
    first_query = before.tasks[0].query
    task_file.write_text(text.replace(first_query, "A changed query.", 1))
    after = load_suite(suite_dir)
    assert after.fingerprint != before.fingerprint
    assert after.tasks[0].query == "A changed query."
    assert cached_docs(suite_dir, after.fingerprint, None) is not None


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "header"])
def test_a_damaged_cache_is_ignored_and_written_again(suite_dir: Path, damage: str) -> None:
    first = load_suite(suite_dir)
    cache = suite_dir / ".cache" / CACHE_NAME
    data = bytearray(cache.read_bytes())
    if damage == "flip":
        data[-5] ^= 0x01
    elif damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "empty":
        data = bytearray()
    else:
        data[0:5] = b"xxxxx"
    cache.write_bytes(bytes(data))
    assert cached_docs(suite_dir, first.fingerprint, None) is None
    again = load_suite(suite_dir)
    assert _state(again) == _state(first)
    assert cached_docs(suite_dir, first.fingerprint, None) is not None


def test_an_unwritable_suite_folder_caches_elsewhere(suite_dir: Path, tmp_path: Path) -> None:
    (suite_dir / ".cache").write_text("a file where the cache folder would be")
    elsewhere = tmp_path / "cache-home"
    first = load_suite(suite_dir, cache_dir=elsewhere)
    cached = sorted(elsewhere.glob("suite-docs-*.json"))
    assert len(cached) == 1
    assert cached_docs(suite_dir, first.fingerprint, elsewhere) is not None
    assert _state(load_suite(suite_dir, cache_dir=elsewhere)) == _state(first)


def test_documents_json_cannot_carry_are_not_cached(suite_dir: Path) -> None:
    """A YAML date in a reference call's arguments stays a date: such a suite is read from its
    YAML every time, and loads the same each time."""
    task_file = sorted((suite_dir / "tasks").glob("*.yaml"))[0]
    text = task_file.read_text()
    assert "args: {query: kettle}" in text
    task_file.write_text(text.replace("{query: kettle}", "{query: kettle, when: 2030-05-14}", 1))
    first = load_suite(suite_dir)
    assert cached_docs(suite_dir, first.fingerprint, None) is None
    assert not (suite_dir / ".cache" / CACHE_NAME).exists()
    again = load_suite(suite_dir)
    dates = [s.args.get("when") for t in again.tasks for s in t.reference.steps]
    assert any(d is not None and not isinstance(d, str) for d in dates)
    assert _state(again) == _state(first)
    assert fingerprint(suite_dir) == first.fingerprint
