"""The manifest's own facts: a new run's id (time, agent, model, a digest of the config), the
episodes as keys, the versions of the packages that decide behaviour, and the checkout's commit."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from sandbox.store import manifest as manifest_module
from sandbox.store.config import RunConfig
from sandbox.store.manifest import Manifest, SuiteInfo, git_sha, make_run_id, package_versions

WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def _digest(config: RunConfig, when: datetime) -> str:
    text = config.model_dump_json() + when.isoformat()
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:6]


@pytest.mark.parametrize(
    ("agent", "model", "middle"),
    [
        ("dfsdt", "openai:Qwen/Qwen2.5-7B-Instruct@http://h:8000/v1", "dfsdt-qwen2.5-7b-instruct"),
        ("react@4", "noisy-reference:0.5", "react-4-noisy-reference-0.5"),
        ("pkg.mod:My_Agent", "org/sub/Model", "pkg.mod-my-agent-model"),
        ("react", "openai:x@y", "react-x"),
        ("react", "alias@notes", "react-alias-notes"),  # no kind before the @: a plain name
        ("react", "alias@v2:beta", "react-alias-v2-beta"),  # a colon after the @ only
        ("react", "alias@v2:beta@x", "react-alias-v2-beta-x"),  # ... and a second @
        ("react", "openai:org:m@http://h/v1", "react-org-m"),  # the kind ends at the first colon
        ("react", "openai:m@http://u@h/v1", "react-m"),  # the URL starts at the first @
        ("Xagent", "X-model", "xagent-x-model"),
    ],
)
def test_a_run_id_is_the_time_the_agent_the_model_and_a_config_digest(
    agent: str, model: str, middle: str
) -> None:
    config = RunConfig(agent={"name": agent}, model={"name": model})
    assert make_run_id(config, WHEN) == f"20260102-030405-{middle}-{_digest(config, WHEN)}"


def test_run_id_parts_are_cut_to_32_characters_and_empty_ones_left_out() -> None:
    config = RunConfig(agent={"name": "A" * 40}, model={"name": "--"})
    assert make_run_id(config, WHEN) == f"20260102-030405-{'a' * 32}-{_digest(config, WHEN)}"
    other = RunConfig(agent={"name": "react"}, seed=1)
    assert _digest(other, WHEN) != _digest(RunConfig(agent={"name": "react"}), WHEN)


def test_a_run_id_made_now_starts_with_the_current_time() -> None:
    before = datetime.now(timezone.utc).replace(microsecond=0)
    run_id = make_run_id(RunConfig())
    after = datetime.now(timezone.utc)
    stamp = datetime.strptime(run_id[:15], "%Y%m%d-%H%M%S").replace(tzinfo=timezone.utc)
    assert before <= stamp <= after
    assert run_id[15:].startswith("-react-noisy-reference-")


def test_the_episodes_read_back_as_task_and_trial_keys() -> None:
    text = json.dumps(
        {
            "run_id": "r",
            "config": {},
            "suite": {"name": "s"},
            "episodes": [["a", 0], ["b", 2]],
        }
    )
    manifest = Manifest.model_validate_json(text)
    assert manifest.episode_keys() == [("a", 0), ("b", 2)]
    assert all(isinstance(k, tuple) for k in manifest.episode_keys())
    fresh = Manifest(run_id="r", config=RunConfig(), suite=SuiteInfo(name="s"))
    assert fresh.started_at.utcoffset() == timedelta(0)  # run times are UTC
    assert (fresh.status, fresh.episode_keys(), fresh.ended_at) == ("running", [], None)
    assert json.loads(fresh.model_dump_json(by_alias=True))["schema"] == "agent-sandbox/run@1"


def test_the_versions_recorded_are_those_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    versions = package_versions()
    assert versions["pydantic"] == importlib.metadata.version("pydantic")
    assert versions["httpx"] == importlib.metadata.version("httpx")
    assert set(versions) <= {
        "agent-sandbox",
        "pydantic",
        "httpx",
        "fastapi",
        "openai",
        "networkx",
        "rich",
    }
    real = importlib.metadata.version

    def without_openai(name: str) -> str:
        if name == "openai":  # a package in the middle of the list
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "version", without_openai)
    assert package_versions() == {k: v for k, v in versions.items() if k != "openai"}
    assert {"openai", "networkx", "rich"} <= set(versions)  # installed: those after it count


def test_the_commit_is_that_of_the_checkout_the_package_runs_from(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = Path(manifest_module.__file__).resolve().parents[2]
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    assert git_sha() == (done.stdout.strip() if done.returncode == 0 else None)
    calls: list[dict[str, object]] = []

    def failing(*args: object, **kwargs: object) -> subprocess.CompletedProcess[str]:
        calls.append(kwargs)
        return subprocess.CompletedProcess(["git"], 128, stdout="", stderr="not a git repository")

    monkeypatch.setattr(subprocess, "run", failing)
    assert git_sha() is None
    assert calls[0]["cwd"] == root and calls[0]["timeout"] == 5

    def empty(*args: object, **kwargs: object) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(["git"], 0, stdout="\n", stderr="")

    monkeypatch.setattr(subprocess, "run", empty)
    assert git_sha() is None

    def missing(*args: object, **kwargs: object) -> subprocess.CompletedProcess[str]:
        raise FileNotFoundError("git")

    monkeypatch.setattr(subprocess, "run", missing)
    assert git_sha() is None

    def slow(*args: object, **kwargs: object) -> subprocess.CompletedProcess[str]:
        raise subprocess.TimeoutExpired("git", 5)

    monkeypatch.setattr(subprocess, "run", slow)
    assert git_sha() is None
