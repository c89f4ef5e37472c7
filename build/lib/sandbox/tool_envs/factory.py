"""``open_tool_envs(config, suite)``: the tools of a run, one ``ToolEnv`` per episode.

Every consumer (the runner, replay, fork, probe) gets its tool environments here, whatever the
transport. A transport is registered in ``TOOL_TRANSPORTS`` with the ``RunConfig`` field that
selects it; the first one whose field is set wins, else the default (``in-process``):

================  ===============  ==========================================================
transport         selected by      what it is
================  ===============  ==========================================================
``in-process``    (default)        ``mock_tools.create_app(suite)`` over ``httpx.ASGITransport``
``http``          ``tools_url``    a running mock tool server (``sandbox serve``)
``mcp``           ``mcp_server``   any MCP server, optionally recorded into a suite
                                   (``sandbox.tool_envs.mcp``)
``recorded``      ``tools_replay`` a recorded run's own observations (the replay of a run
                                   whose tools were live; ``sandbox.tool_envs.recorded``)
================  ===============  ==========================================================

Adding a transport is a module whose ``open`` returns a ``ToolEnvs`` and one
``register_tool_transport`` line. The in-process transport builds the miss policy of the run's
config, with its simulator (``--simulator``, through ``sandbox.models``) and, for policies that
record, the overlay (``--overlay``, default ``<suite>/overlay.sqlite``). May import
``sandbox.store.config``, ``sandbox.models``, ``sandbox.tool_envs`` modules, ``agents`` and
``mock_tools`` only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

import httpx

from agents.registry import Registry
from agents.toolenv import ToolEnv
from mock_tools import (
    MockToolsError,
    MockToolService,
    Suite,
    Task,
    build_miss_policy,
    http_app,
    in_process_client,
)
from mock_tools.overlay import OVERLAY_FILE
from mock_tools.service import create_service
from sandbox.errors import ConfigError
from sandbox.models.simulators import build_simulator
from sandbox.store.config import RunConfig
from sandbox.store.redact import redact
from sandbox.tool_envs.http import HttpToolEnv
from sandbox.tool_envs.mcp import open_mcp
from sandbox.tool_envs.recorded import open_recorded

__all__ = [
    "TOOL_TRANSPORTS",
    "EpisodeToolEnv",
    "HttpToolEnvs",
    "ToolEnvs",
    "ToolTransport",
    "open_tool_envs",
    "register_tool_transport",
]

log = logging.getLogger(__name__)


class EpisodeToolEnv(ToolEnv, Protocol):
    """A ``ToolEnv`` scoped to one episode."""

    async def reset(self) -> None:
        """Forget the episode's occurrence counts (call when the episode ends)."""
        ...


class ToolEnvs(Protocol):
    """The tools of a run: an async context manager that hands out per-episode envs."""

    async def __aenter__(self) -> ToolEnvs: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    def for_episode(self, task: Task, *, session: str) -> EpisodeToolEnv: ...

    def report(self) -> dict[str, Any]:
        """What the run should record about its tools (transport, overlay, simulator usage)."""
        ...


Opener = Callable[[RunConfig, Suite, Mapping[str, str]], ToolEnvs]
"""Opens a transport's tools for a run: its config, its suite, the environment (API keys)."""


@dataclass(frozen=True)
class ToolTransport:
    name: str
    open: Opener
    selected_by: str | None = None
    """The ``RunConfig`` field that selects this transport when set; None: the default."""


TOOL_TRANSPORTS: Registry[ToolTransport] = Registry("tool transport")


def register_tool_transport(transport: ToolTransport) -> ToolTransport:
    return TOOL_TRANSPORTS.register(transport.name, transport)


def open_tool_envs(
    config: RunConfig, suite: Suite, env: Mapping[str, str] | None = None
) -> ToolEnvs:
    """The tools of a run with ``config`` on ``suite`` (use as ``async with``); ``env`` gives
    the API keys of models the tools need (a simulator)."""
    default: ToolTransport | None = None
    for _, transport in TOOL_TRANSPORTS.items():
        if transport.selected_by is None:
            default = default or transport
        elif getattr(config, transport.selected_by, None):
            return transport.open(config, suite, env or {})
    assert default is not None, "no default tool transport registered"
    return default.open(config, suite, env or {})


class HttpToolEnvs:
    """Per-episode ``HttpToolEnv``s over one shared ``httpx.AsyncClient``."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        config: RunConfig,
        suite: Suite,
        *,
        remote: str | None,
        service: MockToolService | None = None,
    ) -> None:
        self.client = client
        self.suite = suite
        self.faults = config.run_faults()
        self.remote = remote
        self.service = service
        self.suite_dir = config.suite
        self.recording_scope = config.recording_scope
        self._overlay_at_start: dict[str, Any] | None = None

    async def __aenter__(self) -> HttpToolEnvs:
        await self.client.__aenter__()
        if self.remote is not None:
            await self._check_remote()
        overlay = self.service.overlay if self.service is not None else None
        if overlay is not None:
            self._overlay_at_start = {
                "path": str(overlay.path),
                "entries_at_start": len(overlay),
                "fingerprint_at_start": overlay.fingerprint(),
            }
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.client.__aexit__(*exc)
        if self.service is not None:  # in process: no ASGI lifespan closes it
            await self.service.aclose()

    def for_episode(self, task: Task, *, session: str) -> HttpToolEnv:
        meta = self.suite.meta
        scope = self.recording_scope
        return HttpToolEnv(
            self.client,
            task,
            self.suite.apis,
            session=session,
            faults=self.faults,
            dispatch=meta.dispatch,
            ascii_observations=meta.ascii_observations,
            recordings=f"{scope}/{task.id}" if scope is not None else None,
        )

    def report(self) -> dict[str, Any]:
        if self.service is None:
            return {"transport": "http", "url": redact(self.remote or "")}
        out: dict[str, Any] = {
            "transport": "in-process",
            "miss_policy": self.service.miss_policy.name,
        }
        if self.service.overlay is not None:
            out["overlay"] = {
                **(self._overlay_at_start or {}),
                "entries_at_end": len(self.service.overlay),
            }
        usage = getattr(getattr(self.service.miss_policy, "simulator", None), "usage", None)
        if usage is not None:
            out["simulator"] = usage.model_dump()
        return out

    async def _check_remote(self) -> None:
        """One ``/health`` call: a remote tool server must answer and serve the same suite."""
        url = self.remote
        try:
            r = await self.client.get("/health", timeout=10.0)
            health = r.json()
        except (httpx.HTTPError, ValueError) as e:
            await self.client.__aexit__(None, None, None)
            raise ConfigError(
                f"the tool server at {url} does not answer /health ({type(e).__name__}); start "
                f"it with `sandbox serve {self.suite_dir}` or drop --tools-url"
            ) from e
        served = health.get("fingerprint") if isinstance(health, dict) else None
        if served and served != self.suite.fingerprint:
            log.warning(
                "the tool server at %s serves a different suite version than %s",
                url,
                self.suite_dir,
            )


def _in_process(config: RunConfig, suite: Suite, env: Mapping[str, str]) -> HttpToolEnvs:
    simulator = build_simulator(config.simulator, env=env) if config.simulator else None
    try:
        policy = build_miss_policy(
            config.miss_policy, simulator=simulator, upstream_url=config.upstream_url
        )
        overlay = None
        if policy.records or config.overlay:
            overlay = config.overlay or _default_overlay(config, suite)
        service = create_service(suite, miss_policy=policy, overlay=overlay)
    except MockToolsError as e:
        raise ConfigError(f"cannot build the mock tool server: {e}") from e
    app = http_app(service)
    client = in_process_client(app, timeout=60.0)
    return HttpToolEnvs(client, config, suite, remote=None, service=service)


def _default_overlay(config: RunConfig, suite: Suite) -> Path:
    return Path(suite.path or config.suite) / OVERLAY_FILE


def _remote(config: RunConfig, suite: Suite, env: Mapping[str, str]) -> HttpToolEnvs:
    assert config.tools_url is not None
    url = config.tools_url.rstrip("/")
    client = httpx.AsyncClient(base_url=url, timeout=60.0)
    return HttpToolEnvs(client, config, suite, remote=url)


register_tool_transport(ToolTransport("in-process", _in_process))
register_tool_transport(ToolTransport("http", _remote, selected_by="tools_url"))
register_tool_transport(ToolTransport("mcp", open_mcp, selected_by="mcp_server"))
register_tool_transport(ToolTransport("recorded", open_recorded, selected_by="tools_replay"))
