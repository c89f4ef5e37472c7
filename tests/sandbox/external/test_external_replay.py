"""The replay of a black box says where it diverged: at the first model request that differs.

What it protects: an external agent whose code changed after its run (here, one word of its
system prompt) is replayed on the recorded answers and stopped at its first request, which is
not the recorded one; the report names the request and the field (``messages[0].content``),
and the episode is a divergence, never a silent pass. An agent that asks for more than the
recording holds diverges too, naming how many requests were recorded.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from sandbox.replay import replay_run
from sandbox.run import run_suite
from sandbox.store.config import RunConfig

ROOT = Path(__file__).resolve().parents[3]
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"


def _run_copy(tmp_path: Path) -> tuple[Path, str]:
    agent = tmp_path / "agent.py"
    shutil.copy(ROOT / "examples" / "agents" / "openai_loop.py", agent)
    config = RunConfig(
        suite=str(MINI),
        agent="external",
        agent_options={"command": f"{sys.executable} {agent}", "grace": 0.5},
        model="reference",
        tasks=["mini_g1_track"],
        out=str(tmp_path / "runs"),
    )
    return agent, run_suite(config, show_progress=False).path


def test_a_changed_agent_diverges_at_its_first_request_that_differs(tmp_path: Path) -> None:
    agent, run = _run_copy(tmp_path)
    assert replay_run(run).ok
    agent.write_text(agent.read_text().replace("Call one function", "Call a single function"))
    report = replay_run(run)
    (verdict,) = report.verdicts
    assert not report.ok and verdict.first_diff is not None
    where = str(verdict.first_diff.got)
    assert "model request 1 of 2: messages[0].content" in where
    assert "Call a single function" in where


def test_an_agent_that_asks_more_than_was_recorded_diverges(tmp_path: Path) -> None:
    agent, run = _run_copy(tmp_path)
    text = agent.read_text().replace(
        "        if not message.tool_calls:\n",
        "        client.chat.completions.create(model=model, messages=messages)\n"
        "        if not message.tool_calls:\n",
    )
    agent.write_text(text)
    (verdict,) = replay_run(run).verdicts
    assert verdict.first_diff is not None
    assert "model request 2" in str(verdict.first_diff.got)
