"""Servers sharing one overlay make one miss-policy call per distinct miss: the process that
claims a miss answers it, the others serve what it stored; a claim of a dead process is taken
over."""

from __future__ import annotations

import asyncio
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from mock_tools.overlay import OverlayStore
from tests.mock_tools.serve_process import COUNTING_POLICY, ROOT, start_server

MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"


def _serve(suite: Path, overlay: Path, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    flags = ("--miss-policy", COUNTING_POLICY, "--overlay", str(overlay), "--log-level", "warning")
    return start_server(suite, log, *flags)


async def _call(client: httpx.AsyncClient, port: int, n: int) -> dict:
    """An unrecorded call of the mini suite's ``shipping/track_parcel`` (valid arguments)."""
    url = f"http://127.0.0.1:{port}/tools/shipping/track_parcel"
    response = await client.post(url, json={"parcel_id": f"NEVER-{n}"})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_two_servers_on_one_overlay_ask_the_policy_once_per_distinct_miss(tmp_path: Path) -> None:
    """Six identical unrecorded calls, three to each server at once, and one more distinct call
    to each: the policy runs once per distinct call, and every answer is the stored one."""
    suite = tmp_path / "mini"
    shutil.copytree(MINI, suite, ignore=shutil.ignore_patterns(".cache"))
    overlay, log = tmp_path / "overlay.sqlite", tmp_path / "policy.log"
    servers = [_serve(suite, overlay, log) for _ in range(2)]
    try:

        async def calls() -> list[dict]:
            async with httpx.AsyncClient(timeout=30) as client:
                same = [_call(client, servers[i % 2][1], 0) for i in range(6)]
                other = [_call(client, port, n) for n, (_, port) in enumerate(servers, 1)]
                return await asyncio.gather(*same, *other)

        answers = asyncio.run(calls())
    finally:
        for proc, _ in servers:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=20)
    asked = log.read_text().splitlines()
    assert len(asked) == 3, asked  # call 0 once, calls 1 and 2 once each
    same = [a["body"] for a in answers[:6]]
    assert all(a == same[0] for a in same)  # one answer, whichever server was asked
    assert len(OverlayStore(overlay)) == 3


def test_a_claim_of_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    overlay = tmp_path / "overlay.sqlite"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from mock_tools.overlay import OverlayStore\n"
            "assert OverlayStore(sys.argv[1]).claim('t', 'a', '{}')\n"
            "print('claimed', flush=True)\n"
            "time.sleep(60)\n",
            str(overlay),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
    )
    assert holder.stdout is not None and holder.stdout.readline() == b"claimed\n"
    store = OverlayStore(overlay)
    assert not store.claim("t", "a", "{}")  # a live process holds it
    assert store.claim("t", "a", "{other}")  # another miss is free
    holder.kill()
    holder.wait()
    assert store.claim("t", "a", "{}")  # its process is gone
    store.release("t", "a", "{}")
    assert store.claim("t", "a", "{}")
