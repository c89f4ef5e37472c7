"""What users read from the store's small helpers: the one-line validation error, redacted
secrets, task selection and its "closest ids" error, the packaged default suite, setting paths
that can or cannot be files, and bounded reads of regular files only."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError, field_validator

from mock_tools import Task
from sandbox.errors import ConfigError
from sandbox.store.defaults import DEFAULT_SUITE
from sandbox.store.error_text import first_error
from sandbox.store.gc_pause import paused_gc
from sandbox.store.paths import read_regular_file, usable_file_path
from sandbox.store.redact import holds_redacted, redact, redact_data, secret_name
from sandbox.store.selection import select_tasks
from sandbox.store.suite_folder import packaged_default_suite, suite_folder


class _Inner(BaseModel):
    depth: int


class _Outer(BaseModel):
    inner: list[_Inner]
    name: str = ""

    @field_validator("name")
    @classmethod
    def _no_x(cls, value: str) -> str:
        if "x" in value:
            raise ValueError("no   x\nplease")
        return value


class _Long(BaseModel):
    text: str

    @field_validator("text")
    @classmethod
    def _short(cls, value: str) -> str:
        raise ValueError(f"too long: {value}")


def _error(data: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        _Outer.model_validate(data)
    return caught.value


def test_a_validation_error_is_one_line_naming_where_then_what() -> None:
    """The first error only, its dotted location, pydantic's 'Value error, ' prefix dropped,
    whitespace runs (newlines included) made single spaces, no link to pydantic's pages."""
    two = _error({"inner": [{"depth": 1}, {"depth": "deep"}], "name": "x"})
    assert first_error(two) == (
        "inner.1.depth: Input should be a valid integer, unable to parse string as an integer"
    )
    assert first_error(_error({"inner": [], "name": "xx"})) == "name: no x please"
    with pytest.raises(ValidationError) as caught:
        _Inner.model_validate_json("[1]")
    assert first_error(caught.value) == "Input should be an object"  # no location: what alone


def test_a_long_validation_error_is_cut_to_the_limit_with_an_ellipsis() -> None:
    error = _error({"inner": [], "name": "x" + "y" * 300})
    assert first_error(error, limit=300) == "name: no x please"
    long = _error({"inner": "z" * 500})
    text = first_error(long, limit=30)
    assert text == "inner: Input should be a va..." and len(text) == 30
    with pytest.raises(ValidationError) as caught:
        _Long.model_validate({"text": "w" * 300})
    cut = first_error(caught.value)  # the default limit: 200 characters
    assert cut == "text: too long: " + "w" * 181 + "..." and len(cut) == 200
    exact = first_error(_error({"inner": [], "name": "x"}), limit=len("name: no x please"))
    assert exact == "name: no x please"  # exactly at the limit: whole


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("openai:m@http://user:pw@host/v1", "openai:m@http://***@host/v1"),
        ("https://h/v1?api_key=abc&x=1", "https://h/v1?api_key=***&x=1"),
        ("https://h/v1?x=1&Access-Token=abc#f", "https://h/v1?x=1&Access-Token=***#f"),
        ("u?sig=1;auth_header=2", "u?sig=***;auth_header=***"),
        ("plain text", "plain text"),
        ("a=b and no url", "a=b and no url"),
        ("git+ssh://me@h/x?page=2", "git+ssh://***@h/x?page=2"),
        ("ray://admin:pw@head:10001", "ray://***@head:10001"),
        # a command's secret-named options and environment assignments
        ("stdio:srv --api-key=sk-1 --port 3", "stdio:srv --api-key=*** --port 3"),
        ("srv --api-key sk-1 --verbose", "srv --api-key *** --verbose"),
        ("srv --hf-token 'a b' x", "srv --hf-token '***' x"),
        ("srv --auth --verbose", "srv --auth --verbose"),  # a switch, no value
        ("OPENAI_API_KEY=sk-1 node a.js", "OPENAI_API_KEY=*** node a.js"),
        ("HF_TOKEN=ABCDEF x", "HF_TOKEN=*** x"),  # a key in capitals is no placeholder
        ("u?api_key=SEKRIT&x=1", "u?api_key=***&x=1"),
        ('export HF_TOKEN="a b"; run', 'export HF_TOKEN="***"; run'),
        ("python a.py model.api_key=sk-2", "python a.py model.api_key=***"),
        ('{"api_key": "k\\"1", "n": 1}', '{"api_key": "***", "n": 1}'),
        ("Authorization: Bearer abc.def", "Authorization: Bearer ***"),
        # not secrets: names that only look alike, prose, usage text, a redacted value
        ("--max-tokens 100 --keyword kettle", "--max-tokens 100 --keyword kettle"),
        ("answer in key=value pairs", "answer in key=value pairs"),
        ("--agent-option expects KEY=VALUE, got x", "--agent-option expects KEY=VALUE, got x"),
        ("(http://***@h/?token=***): again", "(http://***@h/?token=***): again"),
    ],
)
def test_credentials_inside_urls_are_never_shown(text: str, shown: str) -> None:
    assert redact(text) == shown


def test_data_hides_whole_values_under_secret_names_and_redacts_other_text() -> None:
    data = {
        "api_key": "k",
        "apiKey": 5,
        "X-Api-Key": ["a"],
        "env": {"HF_TOKEN": "t", "HOME": "/root"},
        "command": "PASSWORD=p run",
        "max_tokens": 100,
        "token": None,
        "secret": "",
    }
    assert redact_data(data) == {
        "api_key": "***",
        "apiKey": "***",
        "X-Api-Key": "***",
        "env": {"HF_TOKEN": "***", "HOME": "/root"},
        "command": "PASSWORD=*** run",
        "max_tokens": 100,
        "token": None,
        "secret": "",
    }
    assert holds_redacted(redact_data(data)) and not holds_redacted(data)
    assert [
        n
        for n in ("access_token", "passwd", "auth_header", "Cookie", "oauth")
        if not secret_name(n)
    ] == []
    assert [
        n for n in ("max_tokens", "keyword", "author", "design", "tokens") if secret_name(n)
    ] == []


def _tasks(*ids: str) -> list[Task]:
    return [Task(id=i, query="q") for i in ids]


def test_tasks_are_selected_by_id_or_glob_in_suite_order() -> None:
    tasks = _tasks("flight_1", "flight_2", "hotel_1", "Hotel_2")
    assert select_tasks(tasks, []) == tasks
    picked = select_tasks(tasks, ["hotel_1, flight_*", " "])
    assert [t.id for t in picked] == ["flight_1", "flight_2", "hotel_1"]
    assert [t.id for t in select_tasks(tasks, ["hotel_?"])] == ["hotel_1"]  # case counts
    assert [t.id for t in select_tasks(tasks, ["[a-z]*_2"])] == ["flight_2"]


def test_a_selection_that_names_nothing_says_so_with_the_closest_ids() -> None:
    tasks = _tasks("flight_1", "flight_2", "hotel_1")
    with pytest.raises(ConfigError) as caught:
        select_tasks(tasks, [" , "])
    assert str(caught.value) == (
        "--tasks names no task (it is empty); leave it out to run every task"
    )
    with pytest.raises(ConfigError) as caught:
        select_tasks(tasks, ["hotel_1", "flihgt_1", "car_*"])
    message = str(caught.value)
    assert message.startswith("no task matches flihgt_1, car_*; closest task ids: flight_1, ")
    assert sorted(message.split("closest task ids: ")[1].split(", ")) == [
        "flight_1",
        "flight_2",
        "hotel_1",
    ]
    with pytest.raises(ConfigError) as caught:
        select_tasks([], ["a"])
    assert str(caught.value) == "no task matches a; closest task ids: (the suite has no tasks)"


def test_the_default_suite_is_the_packaged_one_outside_the_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    packaged = packaged_default_suite()
    assert packaged.parts[-2:] == ("suites", "default") and (packaged / "suite.yaml").is_file()
    monkeypatch.chdir(tmp_path)
    assert suite_folder(DEFAULT_SUITE) == str(packaged)
    assert suite_folder(Path(DEFAULT_SUITE)) == str(packaged)
    assert suite_folder("scenarios/other") == "scenarios/other"
    (tmp_path / DEFAULT_SUITE).mkdir(parents=True)  # a default suite of the folder's own wins
    assert suite_folder(DEFAULT_SUITE) == DEFAULT_SUITE


def test_a_setting_path_is_refused_only_when_it_can_never_be_a_file(tmp_path: Path) -> None:
    assert usable_file_path(None) is None
    assert usable_file_path(str(tmp_path / "new" / "deeper" / "c.sqlite")) is not None
    (tmp_path / "f").write_text("")
    assert usable_file_path(str(tmp_path / "f")) == str(tmp_path / "f")
    with pytest.raises(ValueError) as caught:
        usable_file_path(str(tmp_path))
    assert str(caught.value) == f"{tmp_path} is a folder, not a file"
    below = str(tmp_path / "f" / "x" / "c.sqlite")
    with pytest.raises(ValueError) as caught:
        usable_file_path(below)
    assert str(caught.value) == f"{below} cannot be a file: {tmp_path / 'f'} is not a folder"


def test_only_a_regular_file_within_its_limit_is_read(tmp_path: Path) -> None:
    file = tmp_path / "p.txt"
    file.write_bytes(b"12345")
    assert read_regular_file(file, 5) == b"12345"
    with pytest.raises(ValueError) as caught:
        read_regular_file(file, 4)
    assert str(caught.value) == f"{file} is over 4 bytes, the most it may hold"
    with pytest.raises(ValueError) as caught:
        read_regular_file("/dev/zero", 10)
    assert str(caught.value) == "/dev/zero is not a regular file"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="is not a regular file"):
        read_regular_file(fifo, 10)  # opened without blocking, refused unread
    with pytest.raises(FileNotFoundError):
        read_regular_file(tmp_path / "absent", 10)


def test_the_collector_is_off_only_inside_a_bulk_job_that_switched_it_off() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner job did not switch it back on
    assert gc.isenabled()
    with paused_gc(False):
        assert gc.isenabled()
    assert gc.isenabled()


def test_the_closest_ids_are_the_five_nearest_to_the_patterns_first_200_characters() -> None:
    """At most five ids are offered; a very long pattern is compared by its first 200
    characters (what is past them neither costs time nor changes the ids offered)."""
    tasks = _tasks(*(f"flight_{i}" for i in range(7)))
    with pytest.raises(ConfigError) as caught:
        select_tasks(tasks, ["flight_x"])
    assert len(str(caught.value).split("closest task ids: ")[1].split(", ")) == 5
    pattern = "q" * 199 + "ba"
    with pytest.raises(ConfigError) as caught:
        select_tasks(_tasks("ab", "ba"), [pattern])
    # by its first 200 characters, "q" * 199 + "b", the id starting with b is not nearer
    assert str(caught.value) == f"no task matches {pattern}; closest task ids: ab, ba"


def test_a_huge_regular_file_is_refused_after_reading_one_byte_past_the_limit(
    tmp_path: Path,
) -> None:
    """A 1 TiB sparse file (no disk used) is refused at once: only limit + 1 bytes are read,
    never the whole file."""
    huge = tmp_path / "huge"
    with huge.open("wb") as fh:
        fh.truncate(1 << 40)
    with pytest.raises(ValueError) as caught:
        read_regular_file(huge, 1024)
    assert str(caught.value) == f"{huge} is over 1024 bytes, the most it may hold"
