"""YAML as the project reads it, and the checks every command that uses a suite makes.

What it protects: a key written twice is an error naming both lines (merge keys may still be
overridden); aliases may add at most MAX_YAML_EXPANSION values (a bomb, or an alias inside the
node it names, is refused at its line); a file over MAX_YAML_BYTES is refused before it is read;
an error line is at most ERROR_CHARS; a suite found valid is remembered by fingerprint, and a
marker that is not this suite's or this code's is not trusted."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from mock_tools import SuiteError, load_suite
from mock_tools.validate import (
    ERROR_CHARS,
    VALIDATED_FILE,
    SuiteInvalid,
    load_valid_suite,
    validate_suite,
)
from mock_tools.yaml_text import (
    MAX_YAML_BYTES,
    MAX_YAML_EXPANSION,
    YamlLimitExceeded,
    load_yaml,
    yaml_error_line,
)

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "mini"


def test_a_key_written_twice_names_both_lines() -> None:
    with pytest.raises(yaml.MarkedYAMLError) as e:
        load_yaml("a: 1\nb: 2\na: 3\n")
    assert "duplicate key 'a' (first on line 1)" in str(e.value)
    assert e.value.problem_mark is not None and e.value.problem_mark.line == 2


def test_merge_keys_may_still_be_overridden_and_lists_of_maps_are_fine() -> None:
    text = "base: &b {k: 1, j: 2}\nd:\n  <<: *b\n  k: 3\nl: [{a: 1}, {a: 2}]\n"
    assert load_yaml(text) == {
        "base": {"k": 1, "j": 2},
        "d": {"k": 3, "j": 2},
        "l": [{"a": 1}, {"a": 2}],
    }


def _fan(levels: int, width: int) -> str:
    lines = [f"a0: &a0 [{', '.join(['x'] * width)}]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_aliases_may_add_up_to_the_limit_and_no_more() -> None:
    # 10 + 100 + 1,000 + 10,000 values written once each: aliases add about 11,000 (fine)
    assert len(load_yaml(_fan(4, 10))["a3"]) == 10
    with pytest.raises(YamlLimitExceeded) as e:  # 10^6 values: far over the limit
        load_yaml(_fan(6, 10))
    assert e.value.limit == "yaml_expansion" and e.value.line is not None
    assert f"{MAX_YAML_EXPANSION:,}" in e.value.message


def test_an_alias_inside_the_node_it_names_is_refused() -> None:
    with pytest.raises(YamlLimitExceeded) as e:
        load_yaml("a: &x\n  b: *x\n")
    assert "recursive" in e.value.message


def test_text_that_merely_mentions_stars_and_ampersands_loads() -> None:
    text = 'd: "R&D * 3 *bold* &co"\nurl: https://x.test/?a=1&b=2\n'
    assert load_yaml(text)["url"] == "https://x.test/?a=1&b=2"


def _copy(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    shutil.copytree(MINI, suite, ignore=shutil.ignore_patterns(".cache"))
    return suite


def test_a_yaml_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    suite = _copy(tmp_path)
    big = suite / "tools" / "big.yaml"
    with big.open("wb") as fh:
        fh.truncate(MAX_YAML_BYTES + 1)  # sparse: nothing is written, nothing would be read
    with pytest.raises(SuiteError) as e:
        load_suite(suite)
    assert "big.yaml" in str(e.value) and "yaml_size" in str(e.value)


def test_a_long_error_line_is_cut(tmp_path: Path) -> None:
    suite = _copy(tmp_path)
    tasks = suite / "tasks" / "tasks.yaml"
    long_id = "Z" * 5_000
    tasks.write_text(tasks.read_text().replace("{parcel_id: PX-100}", f"{{parcel_id: {long_id}}}"))
    report = validate_suite(suite)
    assert report.ok and report.warnings
    assert all(len(w) <= ERROR_CHARS for w in report.warnings)
    assert any("more characters" in w for w in report.warnings)


def test_a_valid_suite_is_remembered_and_an_edit_is_checked_again(tmp_path: Path) -> None:
    suite = _copy(tmp_path)
    load_valid_suite(suite)
    marker = suite / ".cache" / VALIDATED_FILE
    assert load_suite(suite).fingerprint in marker.read_text()
    tools = suite / "tools" / "shipping.yaml"
    tools.write_text(
        tools.read_text().replace(
            "{type: string, description: Parcel", "{type: 3, description: Parcel"
        )
    )
    with pytest.raises(SuiteInvalid):
        load_valid_suite(suite)


def test_a_marker_that_is_not_this_code_s_is_not_trusted(tmp_path: Path) -> None:
    suite = _copy(tmp_path)
    tools = suite / "tools" / "shipping.yaml"
    tools.write_text(
        tools.read_text().replace(
            "{type: string, description: Parcel", "{type: 3, description: Parcel"
        )
    )
    marker = suite / ".cache" / VALIDATED_FILE
    marker.parent.mkdir(exist_ok=True)
    marker.write_text(f"0123456789abcdef0123456789abcdef {load_suite(suite).fingerprint}\n")
    with pytest.raises(SuiteInvalid) as e:
        load_valid_suite(suite)
    assert "invalid parameters schema" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: 1\na: 2\n", "found duplicate key 'a' (first on line 1) at line 2"),
        ("a: [1\n", "at line 2"),
        ("a: \x1f\n", "control characters are not allowed"),
        ("a: &x\n  b: *x\n", "recursive document) at line 1"),
    ],
)
def test_a_yaml_error_is_one_line_saying_what_and_where(text: str, expected: str) -> None:
    with pytest.raises(yaml.YAMLError) as e:
        load_yaml(text)
    line = yaml_error_line(e.value)
    assert expected in line and "\n" not in line
