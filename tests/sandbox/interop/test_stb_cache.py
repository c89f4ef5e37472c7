from __future__ import annotations

import json
from pathlib import Path

import pytest

from mock_tools.canonical import canonical_key
from mock_tools.suite import load_suite
from sandbox.errors import SandboxError
from sandbox.interop.stb_cache import import_stb_cache, invalid_reason, parse_cache_key
from sandbox.interop.toolbench_queries import import_queries


def _cache(root: Path) -> Path:
    folder = root / "cache" / "Finance" / "currency_converter_for_finance"
    folder.mkdir(parents=True)
    entries = {
        "{'amount': '5', 'from': 'USD'}": {"error": "", "response": "{'result': 4.6}"},
        "{'amount': 7, 'from': 'USD', 'flag': True, 'note': None}": {
            "error": "Rate limit",
            "response": "",
        },
        "__import__('os')": {"error": "", "response": "never"},
        "['a list']": {"error": "", "response": "never"},
    }
    (folder / "convert.json").write_text(json.dumps(entries), encoding="utf-8")
    (folder / "broken.json").write_text("{", encoding="utf-8")
    return root / "cache"


def test_keys_are_literals_never_code() -> None:
    assert parse_cache_key("{'a': 1, 'b': True, 'c': None}") == {"a": 1, "b": True, "c": None}
    assert parse_cache_key('{"a": true}') == {"a": True}
    with pytest.raises(ValueError):
        parse_cache_key("__import__('os').system('true')")
    with pytest.raises(ValueError):
        parse_cache_key("[1, 2]")


def test_cache_into_new_suite(tmp_path: Path) -> None:
    summary = import_stb_cache(_cache(tmp_path), tmp_path / "suite", keep_errors=True)
    suite = load_suite(tmp_path / "suite")
    assert list(suite.apis) == [("currency_converter", "convert")]
    assert summary.read == {"files": 2, "entries": 4}
    assert summary.written["recordings"] == 2 == len(suite.recordings)
    assert sorted(s.reason.split(":")[0] for s in summary.skipped) == [
        "malformed cache file",
        "malformed key",
        "malformed key",
    ]
    ok, failed = sorted(suite.recordings, key=lambda r: r.response.ok, reverse=True)
    assert (ok.response.body, ok.provenance.source) == ("{'result': 4.6}", "stabletoolbench")
    assert (failed.response.ok, failed.response.error) == (False, "Rate limit")


@pytest.mark.parametrize(
    ("value", "kept"),
    [
        ({"error": "", "response": {"price": 12.5}}, True),
        ({"error": "", "response": "got an unexpected keyword argument 'x'"}, True),
        ({"error": "Rate limit", "response": ""}, False),
        ({"response": "no error key"}, False),
        ({"error": "", "response": "You have exceeded the rate limit per minute"}, False),
        ({"error": "", "response": "Request timed out"}, False),
        ({"error": "", "response": {"message": "You are not subscribed. Unauthorized"}}, False),
        ({"error": "", "response": "Invalid parameter: date"}, False),
        ({"error": "", "response": ""}, False),
        ({"error": "", "response": "<Response status_code=503>"}, False),
        ({"error": "", "response": {"total": 1500}}, False),  # StableToolBench's own substring rule
    ],
)
def test_stabletoolbench_validity_rule(value: dict, kept: bool) -> None:
    assert (invalid_reason(value) is None) is kept


def test_responses_stabletoolbench_would_simulate_are_left_out_unless_kept(tmp_path: Path) -> None:
    summary = import_stb_cache(_cache(tmp_path), tmp_path / "suite")
    suite = load_suite(tmp_path / "suite")
    assert [r.response.ok for r in suite.recordings] == [True]
    assert summary.to_json()["skipped_by_reason"]["a miss for StableToolBench"] == 1


def test_cache_merges_onto_imported_queries(tmp_path: Path) -> None:
    query = {
        "query": "Convert 5 USD",
        "query_id": 1,
        "relevant APIs": [["Currency Converter", "Convert"]],
        "api_list": [
            {
                "category_name": "Finance",
                "tool_name": "Currency Converter",
                "api_name": "Convert",
                "required_parameters": [{"name": "amount", "type": "NUMBER", "default": ""}],
                "optional_parameters": [{"name": "from", "type": "STRING", "default": ""}],
            }
        ],
    }
    src = tmp_path / "G1_instruction.json"
    src.write_text(json.dumps([query]), encoding="utf-8")
    import_queries([src], tmp_path / "suite")
    summary = import_stb_cache(_cache(tmp_path), tmp_path / "suite", keep_errors=True)
    assert summary.written["tools"] == 0
    suite = load_suite(tmp_path / "suite")
    assert {(r.tool, r.api) for r in suite.recordings} == {("Currency Converter", "Convert")}
    schema = suite.api("Currency Converter", "Convert").parameters
    keys = {canonical_key(r.args, schema) for r in suite.recordings}
    assert canonical_key({"from": "USD", "amount": 5}, schema) in keys


def test_missing_cache_folder(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="not a folder"):
        import_stb_cache(tmp_path / "nope", tmp_path / "suite")
