"""Knowing the tool server a run talks to (issue 23): ``--tools-url`` and ``--mcp-server`` are
checked before the first episode, a server that is not a mock tool server is refused, one that
serves another suite stops the run unless ``--accept-other-suite``, and the manifest records what
the server said."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.responses import JSONResponse

from mock_tools import create_app, load_suite
from sandbox.cli import main
from sandbox.store import RunStore
from tests.hostile.conftest import MINI, ROOT, serving

DEFAULT = ROOT / "scenarios" / "default"


def _anything_goes() -> FastAPI:
    """A server that is no mock tool server: 404 on /health, an empty answer to any call."""
    app = FastAPI()
    calls: list[str] = []
    app.state.calls = calls

    @app.api_route("/{path:path}", methods=["GET", "POST"])
    async def every(path: str) -> JSONResponse:
        calls.append(path)
        if path == "health":
            return JSONResponse({"detail": "Not Found"}, status_code=404)
        return JSONResponse({"error": "", "response": ""})

    return app


def _run(out: Path, *extra: str) -> int:
    argv = ["run", "--suite", str(MINI), "--agent", "react", "--model", "reference"]
    return main([*argv, "--no-plots", "--out", str(out), "--run-id", "r", *extra])


def test_a_server_that_is_not_a_mock_tool_server_is_refused_before_the_first_episode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``--tools-url`` at such a server exited 0 with a pass rate of 100%, every
    observation marked ``hit``."""
    app = _anything_goes()
    with serving(app) as url:
        code = _run(tmp_path, "--tools-url", url)
    err = capsys.readouterr().err
    assert code == 2 and "not a mock tool server" in err and "Traceback" not in err
    assert app.state.calls == ["health"]  # no tool was ever called: no episode started
    assert not (tmp_path / "r").exists()


def test_a_mock_server_of_another_suite_stops_the_run_unless_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a real mock server serving another suite gave all-unknown calls, no warning."""
    with serving(create_app(load_suite(DEFAULT))) as url:
        assert _run(tmp_path / "refused", "--tools-url", url) == 2
        err = capsys.readouterr().err
        assert "serves suite default" in err and "suite mini" in err
        assert "--accept-other-suite" in err
        assert _run(tmp_path / "accepted", "--tools-url", url, "--accept-other-suite") == 0
    server = RunStore.open(tmp_path / "accepted" / "r").manifest.tools["server"]
    assert server["suite"] == "default" and "accepted_mismatch" in server


def test_the_suites_own_server_runs_and_the_manifest_records_what_it_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = load_suite(MINI)
    with serving(create_app(suite)) as url:
        assert _run(tmp_path, "--tools-url", url, "--json") == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["pass_rate"] == 1.0
    server = RunStore.open(tmp_path / "r").manifest.tools["server"]
    assert server["suite"] == "mini" and server["fingerprint"] == suite.fingerprint
    assert "accepted_mismatch" not in server


def test_another_version_of_the_suite_is_another_suite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Same name, other content: the fingerprints differ, and both are named."""
    edited = tmp_path / "mini"
    shutil.copytree(MINI, edited)
    (edited / "suite.yaml").write_text((MINI / "suite.yaml").read_text() + "\n# edited\n")
    with serving(create_app(load_suite(edited))) as url:
        assert _run(tmp_path / "runs", "--tools-url", url) == 2
    err = capsys.readouterr().err
    short = load_suite(MINI).fingerprint.removeprefix("sha256:")[:12]
    theirs = load_suite(edited).fingerprint.removeprefix("sha256:")[:12]
    assert short in err and theirs in err


def test_an_mcp_mock_server_of_another_suite_is_refused_unless_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Over MCP the check is what every server gets (it initialises and lists its tools before
    the first episode) and, when its ``serverInfo`` says it is a mock tool server, the suite
    comparison by name and version; the manifest records its ``serverInfo``."""
    with serving(create_app(load_suite(DEFAULT), mcp=True)) as url:
        assert _run(tmp_path / "refused", "--mcp-server", f"{url}/mcp") == 2
        err = capsys.readouterr().err
        assert "serves suite default" in err and "--accept-other-suite" in err
        extra = ["--mcp-server", f"{url}/mcp", "--accept-other-suite", "--tasks", "mini_u_*"]
        assert _run(tmp_path / "accepted", *extra) == 0
    tools = RunStore.open(tmp_path / "accepted" / "r").manifest.tools
    assert tools["server_info"]["name"] == "mock-tools:default"
    assert tools["server_info"]["suite_check"] == "other suite accepted"


def test_an_mcp_mock_server_of_the_same_suite_is_recorded_as_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with serving(create_app(load_suite(MINI), mcp=True)) as url:
        assert _run(tmp_path, "--mcp-server", f"{url}/mcp", "--tasks", "mini_g1_track") == 0
    info = RunStore.open(tmp_path / "r").manifest.tools["server_info"]
    assert info == {
        "name": "mock-tools:mini",
        "version": "1",
        "suite_check": "same suite name and version",
    }
