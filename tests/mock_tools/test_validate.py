"""Suite validation and the ``python -m mock_tools`` commands."""

import json
import subprocess
import sys

from mock_tools.__main__ import main
from mock_tools.validate import find_suites, validate_suite


def test_valid_suite_reports_counts(suite_dir):
    report = validate_suite(suite_dir)
    assert report.errors == []
    assert (report.tools, report.apis, report.tasks, report.recordings) == (2, 4, 2, 8)


def test_every_problem_is_reported(make_suite, base_recordings, base_tasks):
    recordings = [
        *base_recordings,
        {"tool": "ghost", "api": "x", "args": {}, "response": {"ok": True}},
        {"tool": "Weather Now", "api": "current", "args": {"days": 0}, "response": {}},
        {"tool": "shop", "api": "id", "args": {}, "response": {"body": "again"}},
    ]
    bad_task = {
        "id": "bad-task",
        "query": "q",
        "tools": [{"tool": "Weather Now", "api": "current"}, {"tool": "nope", "api": "x"}],
        "reference": {
            "steps": [
                {"tool": "Weather Now", "api": "current", "args": {"city": "Lima"}},
                {"tool": "shop", "api": "id", "args": {}},
                {"tool": "ghost", "api": "x", "args": {}},
            ]
        },
    }
    report = validate_suite(make_suite("bad", recordings=recordings, tasks=[*base_tasks, bad_task]))
    text = "\n".join(report.errors)
    assert "ghost/x: no such API in the catalog" in text
    assert "days: 0 is less than the minimum of 1" in text
    assert "'city' is a required property" in text
    assert "shop/id {} (every occurrence) is recorded more than once" in text
    assert "offers nope/x, which is not in the catalog" in text
    assert "shop/id: the API is not offered to the agent" in text
    assert len(report.errors) == 8
    # a reference call without a recording runs (a miss), so it is a warning, not an error
    (warning,) = report.warnings
    assert 'no recording for arguments {"city":"Lima","days":1}' in warning


def test_a_duplicate_task_id_is_a_load_error_naming_the_file(make_suite, base_tasks):
    report = validate_suite(make_suite("dup", tasks=[*base_tasks, base_tasks[0]]))
    (error,) = report.errors
    assert "duplicate task id 'oslo-weather'" in error and "tasks.yaml" in error


def test_reference_occurrences_need_recordings(make_suite, base_recordings):
    only_first = [r for r in base_recordings if r.get("occurrence") != 2]
    only_first = [dict(r, occurrence=None) if r.get("occurrence") else r for r in only_first]
    report = validate_suite(make_suite("occ", recordings=only_first))
    assert report.errors == []  # occurrence None answers every call


def test_invalid_schema_and_load_errors(make_suite, tmp_path):
    tools = [
        {"name": "t", "apis": [{"name": "a", "parameters": {"properties": {"x": {"type": 3}}}}]}
    ]
    report = validate_suite(make_suite("schema", tools=tools, recordings=[], tasks=[]))
    assert any("invalid parameters schema" in e for e in report.errors)
    missing = validate_suite(tmp_path / "nowhere")
    assert missing.errors and "no such suite folder" in missing.errors[0]


def test_find_suites(tmp_path, make_suite):
    make_suite("b")
    make_suite("a")
    (tmp_path / "not-a-suite").mkdir()
    assert [p.name for p in find_suites(tmp_path)] == ["a", "b"]


def test_cli_json_and_exit_codes(suite_dir, make_suite, base_tasks, capsys):
    assert main(["validate", str(suite_dir), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == [
        {
            "suite": "tiny",
            "loaded": True,
            "tools": 2,
            "apis": 4,
            "tasks": 2,
            "recordings": 8,
            "errors": [],
            "warnings": [],
        }
    ]
    bad = make_suite("bad", tasks=[*base_tasks, base_tasks[0]])
    assert main(["validate", str(suite_dir), str(bad)]) == 1
    text = capsys.readouterr().out
    assert "tiny" in text and "1 error(s)" in text


def test_cli_bad_path_is_a_message_not_a_traceback(tmp_path, monkeypatch):
    proc = subprocess.run(
        [sys.executable, "-m", "mock_tools", "validate", str(tmp_path / "missing")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert "no such suite folder" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    monkeypatch.chdir(tmp_path)
    assert main(["validate"]) == 2  # no ./scenarios folder: a clear error, bad input


def test_cli_serve_rejects_bad_suite(tmp_path, capsys):
    assert main(["serve", str(tmp_path / "missing")]) == 2  # bad input, as sandbox serve
    assert "no such suite folder" in capsys.readouterr().err
