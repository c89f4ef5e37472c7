"""A task file: a suite of tasks only, for runs on an MCP server (``load_suite(file)``).

What it protects: queries alone (strings) or task mappings load, ids default to their position,
tools to none; the suite has a fingerprint of the file; bad files are ``SuiteError``s naming the
file; ``validate`` still requires every task of a suite folder to offer APIs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mock_tools import SuiteError, load_suite, validate_suite


def test_queries_and_tasks_load_with_default_ids(tmp_path: Path) -> None:
    file = tmp_path / "queries.yaml"
    items = [
        "What is the weather in Oslo?",
        {"id": "named", "query": "Book a flight", "checks": [{"kind": "contains", "value": "BK"}]},
        {"query": "Third"},
    ]
    file.write_text(yaml.safe_dump(items))
    suite = load_suite(file)
    assert [t.id for t in suite.tasks] == ["q1", "named", "q3"]
    assert all(t.tools == [] for t in suite.tasks)
    assert suite.tasks[1].checks[0].value == "BK"
    assert suite.name == "queries" and suite.apis == {} and suite.recordings == []
    assert suite.fingerprint.startswith("sha256:")
    file.write_text(yaml.safe_dump({"tasks": items}))
    assert len(load_suite(file).tasks) == 3


@pytest.mark.parametrize(
    "content",
    [
        "just a string",
        "- {id: x}\n",
        "- 42\n",
        "{other: []}\n",
        "- [unclosed\n",
        "[a, {id: q1, query: b}]",
    ],
)
def test_bad_task_files_name_the_file(tmp_path: Path, content: str) -> None:
    file = tmp_path / "bad.yaml"
    file.write_text(content)
    with pytest.raises(SuiteError, match="bad.yaml"):
        load_suite(file)


def test_validate_requires_tasks_of_a_suite_to_offer_apis(make_suite, base_tasks) -> None:
    base_tasks[0]["tools"] = []
    report = validate_suite(make_suite(tasks=base_tasks))
    assert any("offers no APIs" in e for e in report.errors)


def test_a_task_file_is_not_a_suite_to_serve(tmp_path: Path, capsys) -> None:
    from mock_tools.__main__ import main

    file = tmp_path / "queries.yaml"
    file.write_text(yaml.safe_dump(["What is the weather?"]))
    assert main(["serve", str(file)]) == 2  # bad input, as sandbox serve
    assert "defines no tools to serve" in capsys.readouterr().err
