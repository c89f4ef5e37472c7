"""The manifest of a run: what it is (config, suite, agent, model, episodes) and how it went.

``manifest.json`` is rewritten atomically by ``RunStore``; ``make_run_id`` names new runs.
May import ``sandbox.store.config``, ``sandbox.store.setting`` and ``agents`` only.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import re
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sandbox.store.config import RunConfig
from sandbox.store.setting import RedactedData, RedactedText

__all__ = [
    "MANIFEST_SCHEMA",
    "EpisodeKey",
    "Manifest",
    "RunStatus",
    "SuiteInfo",
    "git_sha",
    "make_run_id",
    "package_versions",
]

MANIFEST_SCHEMA = "agent-sandbox/run@1"

EpisodeKey = tuple[str, int]
"""``(scenario_id, trial)``: the identity of an episode within a run."""

RunStatus = Literal["running", "completed", "failed", "interrupted", "stopped"]
"""``stopped``: a run budget (``max_run_cost``) ended it; ``--resume`` continues it."""

_VERSIONED = ("agent-sandbox", "pydantic", "httpx", "fastapi", "openai", "networkx", "rich")


def _now() -> datetime:
    return datetime.now(timezone.utc)


class SuiteInfo(BaseModel):
    name: str
    version: str = ""
    path: str = ""
    fingerprint: str = ""


class Manifest(BaseModel):
    """What a run is and how it went; enough to resume or re-run it."""

    model_config = ConfigDict(populate_by_name=True)

    schema_: str = Field(default=MANIFEST_SCHEMA, alias="schema")
    run_id: str
    config: RunConfig
    suite: SuiteInfo
    agent: Annotated[dict[str, Any], RedactedData] = Field(
        default_factory=dict, description="Name and params (credentials redacted)."
    )
    model: Annotated[dict[str, Any], RedactedData] = Field(
        default_factory=dict, description="Resolved model, no secrets."
    )
    tools: Annotated[dict[str, Any], RedactedData] = Field(
        default_factory=dict,
        description="The tools' transport, the overlay at the start and the end of the run, "
        "and what a tool simulator used.",
    )
    episodes: list[EpisodeKey] = Field(
        default_factory=list, description="Every selected (task, trial), in run order."
    )
    seed: int = 0
    versions: dict[str, str] = Field(default_factory=dict)
    git_sha: str | None = None
    status: RunStatus = "running"
    started_at: datetime = Field(default_factory=_now)
    ended_at: datetime | None = None
    resumed_at: list[datetime] = Field(default_factory=list)
    error: Annotated[str | None, RedactedText] = None

    def episode_keys(self) -> list[EpisodeKey]:
        """``episodes`` as ``(task id, trial)`` tuples, in run order (how the readers key them)."""
        return [(str(k[0]), int(k[1])) for k in self.episodes]


def make_run_id(config: RunConfig, when: datetime | None = None) -> str:
    """``<UTC timestamp>-<agent>-<model>-<hash>``, readable and safe as a folder name."""
    when = when or _now()
    digest = hashlib.sha256(
        (config.model_dump_json() + when.isoformat()).encode("utf-8")
    ).hexdigest()[:6]
    parts = [
        when.strftime("%Y%m%d-%H%M%S"),
        _slug(config.agent.name),
        _model_slug(config.model.name),
        digest,
    ]
    return "-".join(p for p in parts if p)


def _slug(text: str, limit: int = 32) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-").lower()[:limit]


def _model_slug(name: str) -> str:
    """``openai:Qwen/Qwen2.5-7B-Instruct@http://...`` -> ``qwen2.5-7b-instruct``."""
    if "@" in name and ":" in name.split("@", 1)[0]:
        name = name.split("@", 1)[0].split(":", 1)[1]
    return _slug(name.rsplit("/", 1)[-1])


def package_versions() -> dict[str, str]:
    """Versions of the packages that decide a run's behaviour, for the manifest."""
    out: dict[str, str] = {}
    for dist in _VERSIONED:
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def git_sha() -> str | None:
    """The commit of the checkout this package runs from, when it is a git checkout."""
    root = Path(__file__).resolve().parents[2]
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = done.stdout.strip()
    return sha if done.returncode == 0 and sha else None
