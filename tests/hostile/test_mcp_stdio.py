"""Hardening, round two (issue 27), item 16: MCP over stdio, both sides.

The server (`serve --mcp-stdio`) answers every line, as the official SDK's streamable-HTTP
transport does (-32700 for a line that is not JSON, -32600 for JSON that is not one JSON-RPC
message), and answers the requests in flight when stdin closes before it stops. The client
(`run --mcp-server stdio:...`) shows why a server failed to start: the last line of its stderr."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from sandbox.cli import main as sandbox_main
from tests.hostile.conftest import MINI, serving
from tests.hostile.mcp_stdio import StdioServer, call

ODD_SERVER = Path(__file__).with_name("odd_mcp_server.py")
TRACK = "track_parcel_for_shipping"


def test_37_a_line_that_is_not_one_message_gets_a_json_rpc_error_and_the_server_goes_on() -> None:
    server = StdioServer(MINI)
    try:
        server.initialize()
        server.send("this is not json")
        assert server.receive(timeout=10) == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "Parse error: the line is not JSON"},
        }
        server.send(json.dumps([call(1, TRACK, {"parcel_id": "PX-100"})]))  # a batch
        batch = server.receive(timeout=10)
        assert batch["id"] is None and batch["error"]["code"] == -32600
        server.send('{"jsonrpc": "2.0", "id": 7, "method": 3}')  # a broken envelope, its id
        broken = server.receive(timeout=10)
        assert broken["id"] == 7 and broken["error"]["code"] == -32600
        for odd_id in ("true", '{"x": 1}', "null", "1.5"):  # the SDK took these for notifications
            server.send(f'{{"jsonrpc": "2.0", "id": {odd_id}, "method": "tools/list"}}')
            odd = server.receive(timeout=10)
            assert odd["id"] is None and odd["error"]["code"] == -32600, odd
        server.send("[" * 100_000 + "]" * 100_000)  # too deep to read
        assert server.receive(timeout=10)["error"]["code"] == -32700
        server.send("   ")  # blank lines are no message: nothing to answer
        server.send(call(8, TRACK, {"parcel_id": "PX-100"}))
        answer = server.receive(timeout=10)
        assert answer["id"] == 8 and answer["result"]["structuredContent"]["provenance"] == "hit"
    finally:
        server.stop()


async def _slow_api(request: Request) -> JSONResponse:
    await asyncio.sleep(1.0)
    return JSONResponse({"parcel_id": (await request.json())["parcel_id"], "status": "slow"})


def test_37_requests_in_flight_when_stdin_closes_are_answered(tmp_path: Path) -> None:
    """Calls that wait for a slow upstream API when the client closes stdin still get their
    answers, and then the server exits."""
    suite = tmp_path / "suite"
    shutil.copytree(MINI, suite, ignore=shutil.ignore_patterns(".cache"))
    upstream = Starlette(routes=[Route("/{tool}/{api}", _slow_api, methods=["POST"])])
    with serving(upstream) as url:
        server = StdioServer(suite, "--miss-policy", "upstream", "--upstream-url", url)
        try:
            server.initialize()
            for n in (1, 2, 3):
                server.send(call(n, TRACK, {"parcel_id": f"ZZ-{n}"}))
            answers = {a["id"]: a for a in server.close_input()}
        finally:
            server.stop()
    assert sorted(answers) == [1, 2, 3], answers
    for n in (1, 2, 3):
        content = answers[n]["result"]["structuredContent"]
        assert content["provenance"] == "upstream" and content["body"]["parcel_id"] == f"ZZ-{n}"
    assert server.proc.returncode == 0


def test_37_a_stdio_server_that_fails_to_start_is_reported_with_its_stderr(
    tmp_path: Path, capsys
) -> None:
    """The error line says what the server said before it died, whatever the terminal showed
    (a progress bar may overwrite the server's own lines)."""
    code = sandbox_main(
        [
            "run",
            "--suite",
            str(MINI),
            "--mcp-server",
            f"stdio:{sys.executable} {ODD_SERVER} crash",
            "--out",
            str(tmp_path / "runs"),
            "--no-plots",
        ]
    )
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if x.startswith("error:")]
    assert code == 2
    assert "cannot use the MCP server" in line
    assert "its stderr ends: error: config file odd.toml not found" in line
    assert "Traceback" not in err
