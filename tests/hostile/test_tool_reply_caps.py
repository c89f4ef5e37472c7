"""Tool answers are capped on every path (issue 38 item 10, issue 40 item 10).

Before: 50 MiB through ``--tools-url`` took a run to 293 MiB and 31 s, an endless answer had no
end after 60 s; 50 MiB over MCP stdio never ended its call within 60 s (the SDK's reader joins
the line in quadratic time); the external agents' forwarder read an endless answer for ever. Now
each path reads at most ``tools.max_reply_bytes`` (``--max-tool-reply-bytes``, 4 MiB) of one
answer and ends the call with its own outcome, ``fault:reply_too_large``, which the agent
observes; the run goes on, in bounded memory and time (``python -m tests.hostile.tool_floods``
prints the figures).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents.trajectory import Trajectory
from sandbox.store import read_trajectories
from tests.agents.models.openai_server import ScriptedOpenAIServer
from tests.hostile.tool_floods import (
    Measured,
    _policy,
    forwarder_case,
    mcp_case,
    tools_url_case,
)

PEAK_MIB = 200
"""Far under what the floods cost before (293 MiB for 50), far over a run's own (about 100)."""
SECONDS = 240
"""Loose: the bound says the call ends, not how fast a loaded machine is (a run of one
episode took 20 to 40 s with four test suites on two cores; before, these never ended)."""


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        server.default = _policy
        yield server


def _trajectory(out: Path, got: Measured) -> Trajectory:
    assert got.code == 0, got.stderr[-2000:]
    run = json.loads(got.stdout.splitlines()[-1])["run"]
    (traj,) = read_trajectories(Path(run))
    return traj


def _calls(traj: Trajectory) -> list[Any]:
    return [c for n in traj.nodes for c in n.calls if c.observation is not None]


@pytest.mark.parametrize("megabytes", [50.0, None], ids=["50MiB", "endless"])
def test_a_flooding_tools_url_answer_is_cut_at_the_cap(
    tmp_path: Path, megabytes: float | None
) -> None:
    got = tools_url_case(megabytes, tmp_path, timeout=SECONDS)
    traj = _trajectory(tmp_path, got)
    (first, *_) = _calls(traj)
    assert first.observation.provenance == "fault:reply_too_large"
    assert "larger than 4194304 bytes" in first.observation.error
    assert got.peak_mib < PEAK_MIB and got.seconds < SECONDS, got


@pytest.mark.parametrize("megabytes", [50.0, None], ids=["50MiB", "endless"])
def test_a_flooding_mcp_stdio_answer_is_cut_at_the_cap(
    tmp_path: Path, megabytes: float | None, model: ScriptedOpenAIServer
) -> None:
    got = mcp_case(megabytes, tmp_path, model.base_url, timeout=SECONDS)
    traj = _trajectory(tmp_path, got)
    (call,) = _calls(traj)
    assert call.observation.provenance == "fault:reply_too_large", call.observation
    assert "larger than 4194304 bytes" in call.observation.error
    assert traj.status.value == "answered"  # the agent saw the failure and went on
    assert got.peak_mib < PEAK_MIB and got.seconds < SECONDS, got


@pytest.mark.parametrize("megabytes", [50.0, None], ids=["50MiB", "endless"])
def test_a_flooding_answer_to_an_external_agents_own_call_is_cut_at_the_cap(
    tmp_path: Path, megabytes: float | None
) -> None:
    got = forwarder_case(megabytes, tmp_path, timeout=SECONDS)
    traj = _trajectory(tmp_path, got)
    assert traj.final_answer == "status 502"  # the agent got the refusal, at once
    (call,) = _calls(traj)
    assert call.observation.provenance == "fault:reply_too_large"
    assert got.peak_mib < PEAK_MIB and got.seconds < SECONDS, got


def test_the_cap_is_a_setting(tmp_path: Path) -> None:
    """``--max-tool-reply-bytes`` sets it: 1 MiB cuts a 2 MiB answer a 4 MiB cap lets through."""
    small = tools_url_case(
        2.0, tmp_path / "small", "--max-tool-reply-bytes", str(2**20), timeout=SECONDS
    )
    (call, *_) = _calls(_trajectory(tmp_path, small))
    assert call.observation.provenance == "fault:reply_too_large"
    assert "larger than 1048576 bytes" in call.observation.error
    default = tools_url_case(2.0, tmp_path / "default", timeout=SECONDS)
    (call, *_) = _calls(_trajectory(tmp_path, default))
    assert call.observation.provenance != "fault:reply_too_large"


def test_an_answer_that_trickles_for_ever_ends_at_the_call_timeout(tmp_path: Path) -> None:
    """A byte every 0.2 s keeps every read within httpx's read timeout: before, such a call
    never ended. A call to a remote server is bounded as a whole by the transport's timeout."""
    got = tools_url_case(
        None, tmp_path, "--transport-option", "timeout=2", trickle=0.2, timeout=SECONDS
    )
    traj = _trajectory(tmp_path, got)
    (first, *_) = _calls(traj)
    assert first.observation.provenance == "transport:timeout"
    assert traj.status.value == "error" and got.seconds < SECONDS, got
