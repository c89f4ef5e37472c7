"""A real model as the user: SmolLM2-135M-Instruct plays the persona of a tiny-world conversation.

The agent is the offline ``reference`` model (ReAct); the user is ``--user-model smollm2-135m``
(native tool calls: ``end_conversation`` is a function it is offered) or ``smollm2-135m-text``
(the Thought/Action text adapter: it tends to talk for longer), which the run launches on
llama.cpp's server and stops. Its answers are recorded
(``--user-record``) and its requests kept in ``--model-cache``. Then the alias is redefined
with a server that cannot start, and:

- a second run answers the user from the record (and, for a failed turn, which is never
  recorded, from the model cache): its trajectory is the first one's, byte for byte, but for
  the clock, the run id and each user turn's ``source`` (``live``, then ``record``);
- ``sandbox replay`` of the first run reproduces it, never asking the user model.

A tiny model may well fail as a user (no answer, a tool it lacks): that is a labelled user
failure (``user_failure:<kind>``), never a harness error, and the second run fails the same
way. Whatever SmolLM2 says, the record/replay property is asserted; which outcome it gave is
printed for the record.
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

from sandbox.models import resolve_model
from tests.realmodel.sandbox_processes import run_env, sandbox, servers_of

pytestmark = pytest.mark.realmodel

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "fixtures" / "suites" / "tinyworld"
TASK = "chat_freeze_which"
USERS = ["smollm2-135m", "smollm2-135m-text"]
VOLATILE = {"started_at", "ended_at", "wall_seconds", "run_id", "latency_ms", "source"}
"""What a second run measures again or names anew: the clock, the run, where a user turn came
from; everything else must be the first run's bytes."""


def _stripped(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stripped(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stripped(v) for v in value]
    return value


def _trajectory(run: Path) -> dict[str, Any]:
    (line,) = (run / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    return dict(json.loads(line))


def _dead_alias(tmp_path: Path, user: str) -> Path:
    """The user's alias on a port nothing serves, with a server that cannot start."""
    spec = resolve_model(user)
    entry = {
        "kind": "openai",
        "model": spec.model,
        "base_url": "http://127.0.0.1:9/v1",
        "tool_calls": spec.tool_calls,
        "retry": {"retry_timeouts": False},
        "params": spec.params,
        "unescape_html": spec.unescape_html,
        "launch": {"server": "llamacpp", "gguf": str(tmp_path / "absent.gguf")},
    }
    models = tmp_path / "models.yaml"
    models.write_text(json.dumps({"models": {user: entry}}))
    return models


@pytest.mark.parametrize("user", USERS)
def test_smollm2_plays_a_user_recorded_then_replayed_with_its_server_stopped(
    tmp_path: Path, user: str
) -> None:
    mark = uuid.uuid4().hex  # every process this test starts inherits it: finds its servers
    suite = Path(shutil.copytree(TINY, tmp_path / "bank"))
    record, cache = tmp_path / "users.jsonl", tmp_path / "cache.sqlite"
    args = ["run", "--suite", str(suite), "--tasks", TASK, "--agent", "react"]
    args += ["--model", "reference", "--user-model", user, "--user-record", str(record)]
    args += ["--model-cache", str(cache), "--max-user-turns", "4", "--no-plots", "--json"]

    done = sandbox([*args, "--out", str(tmp_path / "one")], run_env(mark))
    assert done.returncode == 0, done.stderr[-3000:]
    first_run = Path(json.loads(done.stdout.splitlines()[-1])["run"])
    first = _trajectory(first_run)
    assert servers_of(mark) == []  # the run stopped the server it launched
    users = [n for n in first["nodes"] if n["kind"] == "user"]
    assert users and all(u["user"]["source"] == "live" for u in users)
    failed = [e for e in first["errors"] if e["kind"] == "user"]
    assert all(e["kind"] == "user" for e in first["errors"]), first["errors"]
    if failed:  # SmolLM2 failed as the user: labelled, the last turn, never recorded
        assert first["status"] == "error" and first["end_reason"].startswith("user_failure:")
        assert failed[0]["node"] == users[-1]["id"]
    else:
        assert first["status"] in ("answered", "gave_up", "budget_exhausted")
    recorded = record.read_text(encoding="utf-8").splitlines()
    assert len(recorded) == len(users) - len(failed)
    print(f"{user} as the user: {first['status']} ({first['end_reason']}), {len(users)} turns")

    dead = run_env(mark) | {"SANDBOX_MODELS_FILE": str(_dead_alias(tmp_path, user))}
    done = sandbox([*args, "--out", str(tmp_path / "two")], dead)
    assert done.returncode == 0, done.stderr[-3000:]
    second = _trajectory(Path(json.loads(done.stdout.splitlines()[-1])["run"]))
    assert _stripped(second) == _stripped(first)
    answered = [n["user"]["source"] for n in second["nodes"] if n["kind"] == "user"]
    assert answered[: len(recorded)] == ["record"] * len(recorded)

    done = sandbox(["replay", str(first_run), "--out", str(tmp_path / "replayed")], dead)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "REPRODUCED: 1/1 episodes identical" in " ".join(done.stdout.split())
    assert servers_of(mark) == []
