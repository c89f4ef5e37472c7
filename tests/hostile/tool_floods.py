"""Tool servers that flood their answers, and a run measured against them (memory and time).

``flood_app(suite, megabytes)``: the mini suite's mock tool server (``/health`` and the rest as
``sandbox serve`` answers them) whose every tool call answers a JSON body of ``megabytes`` MiB,
or, with None, a body that never ends. ``measured(argv)`` runs ``sandbox ARGV`` in a subprocess
and returns its exit code, its peak resident memory (MiB, from ``wait4`` in a small parent of
its own) and its wall time.
``python -m tests.hostile.tool_floods`` prints the figures of every path (``--tools-url``, MCP
over stdio, the external agents' forwarder), the ones docs/reliability.md quotes.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mock_tools import create_service, http_app, load_suite
from tests.hostile.conftest import MINI, ROOT, serving

FLOOD_MCP = Path(__file__).with_name("flood_mcp_server.py")
CHUNK = b"x" * 65536
TIMEOUT = 60.0
"""Seconds a measured run is given before it is killed (and counted as never ending)."""


def flood_app(megabytes: float | None, *, trickle: float | None = None) -> Any:
    """The mini suite's server whose tool calls answer ``megabytes`` MiB (None: endless); with
    ``trickle``, one byte every ``trickle`` seconds instead (each read well within any timeout,
    the whole never ending)."""
    inner = http_app(create_service(load_suite(MINI)))
    size = None if megabytes is None else int(megabytes * 2**20)

    async def body() -> AsyncIterator[bytes]:
        yield b'{"ok": true, "error": "", "body": "'
        sent = 0
        while size is None or sent < size:
            if trickle is not None:
                await asyncio.sleep(trickle)
            chunk = b"x" if trickle is not None else CHUNK
            yield chunk
            sent += len(chunk)
        yield b'"}'

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/tools/"):
            await inner(scope, receive, send)
            return
        while (await receive()).get("more_body"):
            pass
        gone = asyncio.ensure_future(receive())  # the client's disconnect, when it goes
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        async for chunk in body():
            if gone.done():  # a server of its own process would go on; this one serves others
                return
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await asyncio.sleep(0)
        gone.cancel()
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    return app


@dataclass(frozen=True)
class Measured:
    code: int | None
    """None: still running at the deadline (killed)."""
    peak_mib: float
    seconds: float
    stdout: str
    stderr: str


_MEASURE = """\
import os, resource, subprocess, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))
proc = subprocess.Popen(sys.argv[3:])
_, status, usage = os.wait4(proc.pid, 0)
with open(sys.argv[2], "w") as fh:
    fh.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""
"""Runs the command as its child and writes down the child's peak RSS (KiB). The peak a process
reports counts the memory of the process it was forked from, held until its exec: measured from
the test process itself (hundreds of MiB into a test session) every run seemed that large."""


def measured(argv: list[str], *, timeout: float = TIMEOUT, cwd: Path = ROOT) -> Measured:
    """``sandbox ARGV`` in a subprocess: its exit, peak RSS (MiB) and wall time. The run is the
    child of a small Python (``_MEASURE``) that reads its peak, so the figure is the run's own."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryDirectory() as tmp,
    ):
        peak_file = Path(tmp) / "peak"
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-c", _MEASURE, str(MEMORY_LIMIT), str(peak_file)]
            + [sys.executable, "-m", "sandbox", *argv],
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        code: int | None = None
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the run with its measurer
            proc.wait()
        seconds = time.monotonic() - started
        peak = int(peak_file.read_text()) if peak_file.exists() else 0
        out.seek(0)
        err.seek(0)
        return Measured(code, peak / 1024, seconds, out.read().decode(), err.read().decode())


MEMORY_LIMIT = 6 * 2**30
"""The address space a measured run may take (a flood must not take the machine with it)."""


def run_argv() -> list[str]:
    return ["run", "--suite", str(MINI), "--model", "reference", "--tasks", "mini_g1_kettle_price"]


def tools_url_case(
    megabytes: float | None,
    out: Path,
    *extra: str,
    trickle: float | None = None,
    timeout: float = TIMEOUT,
) -> Measured:
    """A run of one episode through ``--tools-url`` against a flooding server."""
    with serving(flood_app(megabytes, trickle=trickle)) as url:
        argv = run_argv() + ["--tools-url", url, "--out", str(out), "--no-plots", "--json"]
        return measured([*argv, *extra], timeout=timeout)


def mcp_case(
    megabytes: float | None, out: Path, model_url: str, *extra: str, timeout: float = TIMEOUT
) -> Measured:
    """A run of one episode on the flooding MCP server over stdio (a scripted model calls
    ``measure``, then answers)."""
    tasks = out / "queries.yaml"
    tasks.parent.mkdir(parents=True, exist_ok=True)
    tasks.write_text("- measure the kettle\n")
    size = "endless" if megabytes is None else str(megabytes)
    argv = ["run", "--suite", str(tasks), "--model", f"openai:scripted-model@{model_url}"]
    argv += ["--mcp-server", f"stdio:{sys.executable} {FLOOD_MCP} {size}"]
    argv += ["--out", str(out), "--no-plots", "--json"]
    return measured([*argv, *extra], timeout=timeout)


AGENT = """\
import json, os, sys, urllib.request
sys.stdin.readline()
request = urllib.request.Request(os.environ["SANDBOX_TOOLS_URL"] + "/tools/shop/search_products",
                                 b'{"query": "kettle"}', {"content-type": "application/json"})
try:
    status = urllib.request.urlopen(request, timeout=300).status
except urllib.error.HTTPError as e:
    status = e.code
print(json.dumps({"answer": f"status {status}"}))
"""


def forwarder_case(
    megabytes: float | None, out: Path, *extra: str, timeout: float = TIMEOUT
) -> Measured:
    """An external agent calling the suite's REST route itself, through the forwarder, with
    ``--tools-url`` on a flooding server."""
    out.mkdir(parents=True, exist_ok=True)
    agent = out / "agent.py"
    agent.write_text(AGENT)
    with serving(flood_app(megabytes)) as url:
        argv = run_argv() + ["--tools-url", url, "--out", str(out), "--no-plots", "--json"]
        argv += ["--agent", "external", "-O", f"command={sys.executable} {agent}"]
        return measured([*argv, *extra], timeout=timeout)


def _policy(body: dict[str, Any]) -> Any:
    from tests.agents.models.openai_server import finish_reply, tool_call_reply

    if any(m.get("role") == "tool" for m in body["messages"]):
        return finish_reply("measured")
    return tool_call_reply("measure", {"item": "kettle"})


def main() -> None:
    from tests.agents.models.openai_server import ScriptedOpenAIServer

    with tempfile.TemporaryDirectory() as tmp, ScriptedOpenAIServer() as model:
        model.default = _policy
        rows = []
        for name, size in (("50 MiB", 50.0), ("200 MiB", 200.0), ("endless", None)):
            for path, case in (
                ("--tools-url", tools_url_case),
                ("mcp stdio", lambda s, o: mcp_case(s, o, model.base_url)),
                ("forwarder", forwarder_case),
            ):
                if path == "mcp stdio" and size == 200.0:
                    continue
                got = case(size, Path(tmp) / f"{path}-{name}".replace(" ", "_"))
                line = json.loads(got.stdout.splitlines()[-1]) if got.code == 0 else {}
                rows.append(
                    (path, name, got.code, got.peak_mib, got.seconds, line.get("by_status"))
                )
        for path, name, code, peak, seconds, status in rows:
            print(
                f"{path:12} {name:8} exit {code}  peak {peak:7.0f} MiB  {seconds:6.1f} s  {status}"
            )


if __name__ == "__main__":
    main()
