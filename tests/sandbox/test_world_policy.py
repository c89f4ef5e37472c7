"""A world's policy (``World.policy``) is told to the agent: it ends the system prompt of every
episode on the world's tools, whatever the strategy's own prompt; a suite without a world keeps
the prompt as it was."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agents.prompts import DEFAULT_SYSTEM_PROMPT, POLICY_HEADER, with_policy
from agents.toolenv import env_policy
from sandbox.run import run_suite
from sandbox.store import read_trajectories
from sandbox.store.config import RunConfig

SUITES = Path(__file__).resolve().parents[1] / "fixtures" / "suites"
BANK_POLICY = "Never move money out of a frozen account."


def _system_prompts(tmp_path: Path, suite: Path, **options: object) -> list[str]:
    agent = {"name": "react", "options": options}
    config = RunConfig(suite=str(suite), agent=agent, model="reference", out=str(tmp_path / "runs"))
    run = Path(run_suite(config, show_progress=False).path)
    return [t.prompt[0]["content"] for t in read_trajectories(run)]


def test_with_policy_appends_the_rules_under_their_header() -> None:
    assert with_policy("Solve it.", "Be kind.") == f"Solve it.\n\n{POLICY_HEADER}\nBe kind."
    assert with_policy("Solve it.", "") == "Solve it."


def test_a_worlds_policy_ends_the_system_prompt_of_its_episodes(tmp_path: Path) -> None:
    suite = shutil.copytree(SUITES / "tinyworld", tmp_path / "tinyworld")
    prompts = _system_prompts(tmp_path, suite)
    rules = f"\n\n{POLICY_HEADER}\n{BANK_POLICY}"
    assert prompts and all(p.startswith(DEFAULT_SYSTEM_PROMPT) for p in prompts)
    assert all(p.endswith(rules) for p in prompts)  # last, after a conversation's note too
    assert with_policy(DEFAULT_SYSTEM_PROMPT, BANK_POLICY) in prompts


def test_a_strategys_own_prompt_gets_the_policy_too(tmp_path: Path) -> None:
    suite = shutil.copytree(SUITES / "tinyworld", tmp_path / "tinyworld")
    prompts = _system_prompts(tmp_path, suite, system_prompt="Use the tools.")
    assert with_policy("Use the tools.", BANK_POLICY) in prompts
    assert all(p.startswith("Use the tools.") and p.endswith(BANK_POLICY) for p in prompts)


@pytest.mark.parametrize("name", ["mini"])
def test_a_suite_without_a_world_keeps_the_prompt(tmp_path: Path, name: str) -> None:
    assert set(_system_prompts(tmp_path, SUITES / name)) == {DEFAULT_SYSTEM_PROMPT}


class _Env:
    def __init__(self, policy: object) -> None:
        self.policy = policy


def test_env_policy_reads_a_text_policy_only() -> None:
    assert env_policy(_Env("  Be kind.\n")) == "Be kind."
    assert env_policy(_Env(None)) == "" and env_policy(_Env(["rules"])) == ""
    assert env_policy(object()) == ""
