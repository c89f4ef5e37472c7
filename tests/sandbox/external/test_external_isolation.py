"""One external episode is its agent's alone, and ends whole (issue 40 item 3).

What it protects:
- an agent that reads a sibling episode's ``SANDBOX_TOOLS_URL`` from ``/proc/<pid>/environ``
  and posts ``Finish`` there is refused (403): the episode answers only its own agent's
  processes, and the sibling keeps its own answer;
- a child the agent started in a session of its own (a daemon whose parent is gone) is stopped
  when the episode ends;
- after the end nothing answers: ``/tools``, ``/health``, ``/openapi.json``, ``/v1/models``;
- an answer line longer than 64 KiB is the episode's answer; one longer than ``STDOUT_KEPT``
  ends it ``agent_answer_too_long``, never a silent ``agent_no_answer``;
- a history with ``tool_calls: "nope"``, or a body nested 100,000 deep, is a 400 that says why,
  not a traceback and an internal error.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents.trajectory import Trajectory
from sandbox.external.process import STDOUT_KEPT
from sandbox.run import run_suite
from sandbox.store import read_trajectories
from sandbox.store.config import RunConfig
from tests.sandbox.external.processes import gone
from tests.sandbox.external.test_external_scope import Scripted, episode

ROOT = Path(__file__).resolve().parents[3]
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"
KETTLE, TRACK = "mini_g1_kettle_price", "mini_g1_track"


def _run(tmp_path: Path, script: str, tasks: list[str], **options: Any) -> list[Trajectory]:
    agent = tmp_path / "agent.py"
    agent.write_text(textwrap.dedent(script))
    config = RunConfig(
        suite=str(MINI),
        agent="external",
        agent_options={"command": f"{sys.executable} {agent}", "grace": 0.5, **options},
        model="reference",
        tasks=tasks,
        out=str(tmp_path / "runs"),
        concurrency=len(tasks),
    )
    result = run_suite(config, show_progress=False)
    return sorted(read_trajectories(result.path), key=lambda t: t.scenario_id)


SIBLING = """\
import json, os, sys, time, urllib.error, urllib.request
task = json.loads(sys.stdin.readline())["task_id"]
mine = os.environ["SANDBOX_TOOLS_URL"]
flag = os.path.join(os.path.dirname(__file__), "attacked")
def others():
    for pid in os.listdir("/proc"):
        try:
            env = open(f"/proc/{pid}/environ", "rb").read().split(b"\\0")
        except OSError:
            continue
        if b"ISOLATION_RUN=" + os.environ["ISOLATION_RUN"].encode() not in env:
            continue  # another run's agent (other test sessions may run on the machine)
        for item in env:
            if item.startswith(b"SANDBOX_TOOLS_URL=") and item[18:].decode() != mine:
                yield item[18:].decode()
if task == "mini_g1_kettle_price":  # the attacker
    deadline = time.monotonic() + 20
    url = None
    while url is None and time.monotonic() < deadline:
        url = next(others(), None)
        time.sleep(0.05)
    body = json.dumps({"name": "Finish", "arguments": {"return_type": "give_answer",
                                                      "final_answer": "hijacked"}}).encode()
    request = urllib.request.Request(url + "/call", body, {"content-type": "application/json"})
    try:
        status = urllib.request.urlopen(request, timeout=10).status
    except urllib.error.HTTPError as e:
        status = e.code
    open(flag, "w").write(str(status))
    print(json.dumps({"answer": f"attack answered {status}"}))
else:  # the victim waits for the attack, then answers on its own
    deadline = time.monotonic() + 20
    while not os.path.exists(flag) and time.monotonic() < deadline:
        time.sleep(0.05)
    print(json.dumps({"answer": "my own answer"}))
"""


@pytest.fixture
def one_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Marks this test's agents (they inherit the run's environment), so the attacker looks for
    its sibling only: an agent of another test session on the machine has another URL."""
    monkeypatch.setenv("ISOLATION_RUN", str(tmp_path))


@pytest.mark.usefixtures("one_run")
def test_an_agent_cannot_finish_a_sibling_episode_through_its_url(tmp_path: Path) -> None:
    attacker, victim = _run(tmp_path, SIBLING, [KETTLE, TRACK])
    assert attacker.final_answer == "attack answered 403"
    assert (victim.status.value, victim.final_answer) == ("answered", "my own answer")


@pytest.mark.usefixtures("one_run")
def test_with_bind_process_off_the_token_alone_guards(tmp_path: Path) -> None:
    """The documented escape hatch (an agent in a container): the check is off, so the
    sibling's token is enough, as before."""
    attacker, victim = _run(tmp_path, SIBLING, [KETTLE, TRACK], bind_process=False)
    assert attacker.final_answer == "attack answered 200"
    assert victim.final_answer == "hijacked"


DAEMON = """\
import json, os, subprocess, sys
sys.stdin.readline()
pidfile = os.path.join(os.path.dirname(__file__), "daemon.pid")
subprocess.run(["/bin/sh", "-c", f"setsid sleep 600 & echo $! > {pidfile}"], check=True)
print(json.dumps({"answer": "done"}))
"""


def test_a_child_in_a_session_of_its_own_does_not_outlive_its_episode(tmp_path: Path) -> None:
    (traj,) = _run(tmp_path, DAEMON, [KETTLE])
    assert traj.final_answer == "done"
    daemon = int((tmp_path / "daemon.pid").read_text())
    assert gone(daemon), "the agent's daemon outlived its episode"


AFTER_END = """\
import json, os, sys, urllib.error, urllib.request
sys.stdin.readline()
base = os.environ["SANDBOX_TOOLS_URL"]
def status(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data, {"content-type": "application/json"},
                                     method=method)
    try:
        return urllib.request.urlopen(request, timeout=10).status
    except urllib.error.HTTPError as e:
        return e.code
before = [status("GET", p) for p in ("/tools", "/health", "/v1/models")]
finish = {"name": "Finish", "arguments": {"return_type": "give_answer", "final_answer": "ok"}}
done = status("POST", "/call", finish)
after = [status("GET", p) for p in ("/tools", "/health", "/openapi.json", "/v1/models")]
after.append(status("POST", "/call", {"name": "search_products_for_shop", "arguments": {}}))
out = os.path.join(os.path.dirname(__file__), "statuses.json")
open(out, "w").write(json.dumps({"before": before, "finish": done, "after": after}))
"""


def test_nothing_answers_after_the_episode_ended(tmp_path: Path) -> None:
    (traj,) = _run(tmp_path, AFTER_END, [KETTLE])
    assert (traj.status.value, traj.final_answer) == ("answered", "ok")
    seen = json.loads((tmp_path / "statuses.json").read_text())
    assert seen["before"] == [200, 200, 200] and seen["finish"] == 200
    assert seen["after"] == [400] * 5


LONG = """\
import json, sys
sys.stdin.readline()
print("noise")
print(json.dumps({"answer": "x" * int(sys.argv[1])}))
"""


def test_an_answer_line_longer_than_64_kib_is_the_answer(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(LONG)
    (traj,) = _run(tmp_path, LONG, [KETTLE], command=f"{sys.executable} {tmp_path}/agent.py 100000")
    assert traj.status.value == "answered" and traj.final_answer == "x" * 100000


def test_an_answer_line_past_the_limit_is_a_named_end(tmp_path: Path) -> None:
    size = STDOUT_KEPT + 10
    (traj,) = _run(tmp_path, LONG, [KETTLE], command=f"{sys.executable} {tmp_path}/agent.py {size}")
    assert (traj.status.value, traj.end_reason) == ("error", "agent_answer_too_long")
    assert f"longer than {STDOUT_KEPT} bytes" in traj.errors[-1].message


@pytest.mark.parametrize(
    ("route", "body", "says"),
    [
        (
            "/v1/chat/completions",
            {"messages": [{"role": "assistant", "tool_calls": "nope"}]},
            "messages[0].tool_calls must be an array",
        ),
        (
            "/v1/chat/completions",
            {"messages": [{"role": "assistant", "tool_calls": [{"function": "f"}]}]},
            "messages[0].tool_calls[0] must be",
        ),
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": 5}]}, "content must"),
        ("/v1/chat/completions", "[" * 100_000 + "]" * 100_000, "nested deeper than 64"),
        ("/call", "[" * 100_000 + "]" * 100_000, "nested deeper than 64"),
        ("/reply", "[" * 100_000 + "]" * 100_000, "nested deeper than 64"),
        ("/reply", "not json", "not JSON"),
    ],
)
async def test_a_malformed_history_or_a_deep_body_is_a_400_not_a_traceback(
    route: str, body: Any, says: str
) -> None:
    async with episode(Scripted()) as (scope, urls):
        content = body if isinstance(body, str) else json.dumps(body)
        async with httpx.AsyncClient() as http:
            resp = await http.post(f"{urls.base}{route}", content=content, timeout=30)
    assert scope.fatal is None and not scope.over
    assert resp.status_code == 400, resp.text
    assert says in resp.text
