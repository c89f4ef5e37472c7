"""A recording is decoded when it is served: one that is broken (or changed on disk after the
suite was loaded) is answered as the suite's defect, naming file, line and field, never as a bare
500 (tests/sandbox/test_broken_recording_run.py: a run refuses such a suite, and counts one it
is served as infrastructure)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from mock_tools import create_app, in_process_client, load_suite

ROOT = Path(__file__).resolve().parents[2]
EUR = {"base": "EUR"}


def _broken_copy(tmp_path: Path) -> Path:
    """The default suite with the EUR rates' latency written as text (not an integer)."""
    suite = tmp_path / "suite"
    shutil.copytree(ROOT / "scenarios" / "default", suite, ignore=shutil.ignore_patterns(".cache"))
    path = suite / "recordings" / "currency.jsonl"
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    assert first["args"] == EUR
    first["response"]["latency_ms"] = "slow"
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    return suite


async def test_a_broken_recording_is_a_structured_error_naming_file_line_and_field(tmp_path):
    suite = load_suite(_broken_copy(tmp_path))
    async with in_process_client(create_app(suite)) as client:
        native = await client.post("/tools/currency/latest_rates", json=EUR)
        assert native.status_code == 500
        body = native.json()
        assert body["code"] == "bad_recording" and body["infra"] is True
        assert "currency.jsonl:1" in body["error"] and "response.latency_ms" in body["error"]
        virtual = await client.post(
            "/virtual",
            json={"tool_name": "currency", "api_name": "latest_rates", "tool_input": EUR},
        )
        assert virtual.status_code == 500 and "currency.jsonl:1" in virtual.json()["error"]
        # the rest of the suite is served as before
        ok = await client.post("/tools/currency/latest_rates", json={"base": "USD"})
        assert ok.status_code == 200 and ok.json()["provenance"] == "hit"
