"""How an external agent's episode ends, through ``run_suite``: every way is a named status.

What it protects: an answer printed on stdout, a give-up, a crash (its stderr's end kept in the
trajectory and the error, an agent error: unsolved, never an infrastructure error), an exit
without an answer, the budget's ``--max-seconds`` (``budget_exhausted``) and the strategy's own
timeout (``agent_timeout``), a budget spent through the proxy (``budget_exhausted`` whatever the
agent does next), and an agent served over HTTP (an answer through ``/call``, an error status,
an agent that cannot be reached: an infrastructure error). No agent process outlives its
episode: the agent's whole process group is gone when the episode ends.
"""

from __future__ import annotations

import json
import sys
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agents.trajectory import Trajectory
from sandbox.eval.pass_rate import label_episode
from sandbox.run import run_suite
from sandbox.store import read_trajectories
from sandbox.store.config import RunConfig
from tests.sandbox.external.processes import gone

ROOT = Path(__file__).resolve().parents[3]
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"
KETTLE = "mini_g1_kettle_price"
KETTLE_ANSWER = "The cheapest kettle is the Steel Kettle (K-1) at 29.90 EUR."
OPENAI_LOOP = f"{sys.executable} {ROOT / 'examples' / 'agents' / 'openai_loop.py'}"


def run_one(tmp_path: Path, options: dict[str, Any], **settings: Any) -> Trajectory:
    config = RunConfig(
        suite=str(MINI),
        agent="external",
        agent_options={"grace": 0.5, **options},
        model=settings.pop("model", "reference"),
        tasks=[settings.pop("task", KETTLE)],
        out=str(tmp_path / "runs"),
        **settings,
    )
    result = run_suite(config, show_progress=False)
    (traj,) = read_trajectories(result.path)
    return traj


def test_an_answer_printed_on_stdout_is_the_episodes_answer(tmp_path: Path) -> None:
    line = json.dumps({"answer": KETTLE_ANSWER})
    traj = run_one(tmp_path, {"command": f"cat > /dev/null; echo noise; echo '{line}'"})
    assert (traj.status.value, traj.end_reason, traj.final_answer) == (
        "answered",
        "answered",
        KETTLE_ANSWER,
    )
    assert traj.nodes[-1].kind == "finish" and traj.usage.model_calls == 0
    assert traj.tree["external"]["exit_code"] == 0


def test_an_agent_that_leaves_a_process_behind_ends_when_it_exits(tmp_path: Path) -> None:
    """What it left running (holding the agent's stdout open) neither delays the episode nor
    outlives it."""
    pids, line = tmp_path / "pids", json.dumps({"answer": KETTLE_ANSWER})
    traj = run_one(tmp_path, {"command": f"sleep 60 & echo $! > {pids}; echo '{line}'"})
    assert (traj.status.value, traj.final_answer) == ("answered", KETTLE_ANSWER)
    assert traj.tree["external"]["seconds"] < 30 and not traj.tree["external"]["timed_out"]
    assert gone(int(pids.read_text()))


def test_a_give_up_printed_on_stdout_gives_up_with_its_reason(tmp_path: Path) -> None:
    traj = run_one(tmp_path, {"command": 'echo \'{"give_up": true, "reason": "no tool for it"}\''})
    assert (traj.status.value, traj.final_answer) == ("gave_up", "no tool for it")


def test_a_crash_is_an_agent_error_with_its_stderr_kept(tmp_path: Path) -> None:
    command = "echo 'Traceback: something broke' >&2; exit 3"
    traj = run_one(tmp_path, {"command": command})
    assert (traj.status.value, traj.end_reason) == ("error", "agent_crashed")
    (error,) = traj.errors
    assert error.kind == "agent" and "exited with code 3" in error.message
    assert "something broke" in error.message
    assert traj.tree["external"]["stderr_tail"].strip() == "Traceback: something broke"
    assert not traj.infra_error  # the agent's failure: unsolved, and a resume keeps it
    label = label_episode(traj, next(t for t in _tasks() if t.id == KETTLE))
    assert label.label == "unsolved" and label.excluded is None


def _tasks() -> list[Any]:
    from mock_tools import load_suite

    return load_suite(MINI).tasks


def test_an_exit_without_an_answer_is_named(tmp_path: Path) -> None:
    traj = run_one(tmp_path, {"command": "echo 'I think the answer is 4'"})
    assert (traj.status.value, traj.end_reason) == ("error", "agent_no_answer")
    assert "I think the answer is 4" in traj.errors[0].message


def test_max_seconds_ends_a_hung_agent_and_its_whole_process_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    command = f"sleep 60 & echo $! > {pids}; echo $$ >> {pids}; wait"
    traj = run_one(tmp_path, {"command": command}, max_seconds=1)
    assert (traj.status.value, traj.end_reason) == ("budget_exhausted", "budget:max_seconds")
    assert traj.tree["external"]["timed_out"] == "budget"
    assert traj.usage.wall_seconds < 10
    assert all(gone(int(p)) for p in pids.read_text().split())


def test_the_strategys_timeout_is_an_agent_error(tmp_path: Path) -> None:
    traj = run_one(tmp_path, {"command": "sleep 60", "timeout": 0.5})
    assert (traj.status.value, traj.end_reason) == ("error", "agent_timeout")
    assert traj.errors[0].kind == "agent"


def test_a_budget_spent_through_the_proxy_ends_the_episode_budget_exhausted(tmp_path: Path) -> None:
    traj = run_one(tmp_path, {"command": OPENAI_LOOP}, max_model_calls=1)
    assert (traj.status.value, traj.end_reason) == ("budget_exhausted", "budget:max_model_calls")
    assert traj.usage.model_calls == 1 and len(traj.exchanges) == 1
    assert "budget" in traj.tree["external"]["stderr_tail"]  # the agent was told why


# -- an agent served over HTTP ------------------------------------------------------------------


class _Agent(BaseHTTPRequestHandler):
    """Answers the kettle task: one search through /call, then Finish through /call."""

    def do_POST(self) -> None:  # noqa: N802 (the http.server API)
        task = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/broken":
            self._reply(500, b"agent exploded")
            return
        base = task["env"]["SANDBOX_TOOLS_URL"]
        self.server.seen.append(task)  # type: ignore[attr-defined]
        for name, arguments in (
            ("search_products_for_shop", {"query": "kettle"}),
            ("Finish", {"return_type": "give_answer", "final_answer": KETTLE_ANSWER}),
        ):
            body = json.dumps({"name": name, "arguments": arguments}).encode()
            request = urllib.request.Request(
                f"{base}/call", data=body, headers={"Content-Type": "application/json"}
            )
            urllib.request.urlopen(request, timeout=30).read()
        self._reply(200, b'{"done": true}')

    def _reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture
def http_agent() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Agent)
    server.seen = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", server.seen  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()


def test_an_agent_served_over_http_answers_through_call(
    tmp_path: Path, http_agent: tuple[str, list[dict[str, Any]]]
) -> None:
    url, seen = http_agent
    traj = run_one(tmp_path, {"url": f"{url}/episode"})
    assert (traj.status.value, traj.final_answer) == ("answered", KETTLE_ANSWER)
    (task,) = seen
    assert task["task_id"] == KETTLE and task["tools"][-1]["function"]["name"] == "Finish"
    assert set(task["env"]) >= {"OPENAI_BASE_URL", "SANDBOX_TOOLS_URL", "SANDBOX_MCP_URL"}
    assert traj.nodes[0].calls[0].observation.ok


def test_an_http_agents_error_status_is_a_crash_and_no_agent_is_infra(
    tmp_path: Path, http_agent: tuple[str, list[dict[str, Any]]]
) -> None:
    url, _ = http_agent
    broken = run_one(tmp_path / "a", {"url": f"{url}/broken"})
    assert (broken.status.value, broken.end_reason) == ("error", "agent_crashed")
    assert "agent exploded" in broken.errors[0].message
    down = run_one(tmp_path / "b", {"url": "http://127.0.0.1:9/episode"})
    assert (down.status.value, down.end_reason) == ("error", "agent_unreachable")
    assert down.infra_error  # not the agent's answer: --resume runs it again


def test_a_crash_says_why_on_the_console(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The progress line of a failed external episode names its end reason and the last line
    its stderr wrote (it said only "error unsolved")."""
    command = "echo 'first line' >&2; echo 'ModuleNotFoundError: no module x' >&2; exit 1"
    config = RunConfig(
        suite=str(MINI),
        agent="external",
        agent_options={"grace": 0.5, "command": command},
        model="reference",
        tasks=[KETTLE],
        out=str(tmp_path / "runs"),
    )
    run_suite(config, show_progress=True)
    err = capsys.readouterr().err
    line = next(ln for ln in err.splitlines() if ln.startswith("[1/1]"))
    assert "error unsolved: agent_crashed; stderr: ModuleNotFoundError: no module x" in line
    assert "first line" not in err
