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
================  ===============  ==========================================================

Adding a transport is a module whose ``open`` returns a ``ToolEnvs`` and one
``register_tool_transport`` line. May import ``sandbox.store.config``, ``sandbox.tool_envs``
modules, ``agents`` and ``mock_tools`` only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol

import httpx

from agents.registry import Registry
from agents.toolenv import ToolEnv
from mock_tools import MockToolsError, Suite, Task, create_app, in_process_client
from sandbox.errors import ConfigError
from sandbox.store.config import RunConfig
from sandbox.tool_envs.http import HttpToolEnv
from sandbox.tool_envs.mcp import open_mcp

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


@dataclass(frozen=True)
class ToolTransport:
    name: str
    open: Callable[[RunConfig, Suite], ToolEnvs]
    selected_by: str | None = None
    """The ``RunConfig`` field that selects this transport when set; None: the default."""


TOOL_TRANSPORTS: Registry[ToolTransport] = Registry("tool transport")


def register_tool_transport(transport: ToolTransport) -> ToolTransport:
    return TOOL_TRANSPORTS.register(transport.name, transport)


def open_tool_envs(config: RunConfig, suite: Suite) -> ToolEnvs:
    """The tools of a run with ``config`` on ``suite`` (use as ``async with``)."""
    default: ToolTransport | None = None
    for _, transport in TOOL_TRANSPORTS.items():
        if transport.selected_by is None:
            default = default or transport
        elif getattr(config, transport.selected_by, None):
            return transport.open(config, suite)
    assert default is not None, "no default tool transport registered"
    return default.open(config, suite)


class HttpToolEnvs:
    """Per-episode ``HttpToolEnv``s over one shared ``httpx.AsyncClient``."""

    def __init__(
        self, client: httpx.AsyncClient, config: RunConfig, suite: Suite, *, remote: str | None
    ) -> None:
        self.client = client
        self.suite = suite
        self.faults = config.run_faults()
        self.remote = remote
        self.suite_dir = config.suite

    async def __aenter__(self) -> HttpToolEnvs:
        await self.client.__aenter__()
        if self.remote is not None:
            await self._check_remote()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.client.__aexit__(*exc)

    def for_episode(self, task: Task, *, session: str) -> HttpToolEnv:
        return HttpToolEnv(self.client, task, self.suite.apis, session=session, faults=self.faults)

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


def _in_process(config: RunConfig, suite: Suite) -> HttpToolEnvs:
    try:
        app = create_app(suite, miss_policy=config.miss_policy)
    except MockToolsError as e:
        raise ConfigError(
            f"cannot build the mock tool server: {e}; start `python -m mock_tools serve "
            f"{config.suite} --miss-policy {config.miss_policy} ...` and pass --tools-url"
        ) from e
    return HttpToolEnvs(in_process_client(app, timeout=60.0), config, suite, remote=None)


def _remote(config: RunConfig, suite: Suite) -> HttpToolEnvs:
    assert config.tools_url is not None
    url = config.tools_url.rstrip("/")
    client = httpx.AsyncClient(base_url=url, timeout=60.0)
    return HttpToolEnvs(client, config, suite, remote=url)


register_tool_transport(ToolTransport("in-process", _in_process))
register_tool_transport(ToolTransport("http", _remote, selected_by="tools_url"))
register_tool_transport(ToolTransport("mcp", open_mcp, selected_by="mcp_server"))
