"""``open_tool_envs(config, suite)``: the tools of a run, one ``ToolEnv`` per episode.

Every consumer (the runner, replay, fork, probe) gets its tool environments here, whatever the
transport. A transport is registered in ``TOOL_TRANSPORTS`` with the field of ``RunConfig.tools``
that selects it; the first one whose field is set wins, else the default (``in-process``):

================  ===============  ==========================================================
transport         selected by      what it is
================  ===============  ==========================================================
``in-process``    (default)        ``mock_tools.create_app(suite)`` over ``httpx.ASGITransport``
``http``          ``url``          a running mock tool server (``sandbox serve``)
``mcp``           ``mcp_server``   any MCP server, optionally recorded into a suite
                                   (``sandbox.tool_envs.mcp``)
``recorded``      ``replay``       a recorded run's own observations (the replay of a run
                                   whose tools were live; ``sandbox.tool_envs.recorded``)
================  ===============  ==========================================================

``--transport NAME`` names one outright: a registered name, a plugin's (the
``agent_sandbox.tool_transports`` entry-point group) or ``package.module:NAME`` (a
``ToolTransport``). A transport declares its options class (``options``, validated from
``--transport-option KEY=VALUE``; ``in-process`` and ``http`` take ``timeout``), and ``open`` gets
them validated. Adding a transport is a module whose ``open`` returns a ``ToolEnvs`` and one
``register_tool_transport`` line (or an entry point). The in-process transport builds the miss
policy of the run's config with its options, its simulator (``--simulator``, through
``sandbox.models``) when the policy takes one and, for policies that record
(``MissPolicy.records``), the overlay (``--overlay``, default ``<suite>/overlay.sqlite``). May
import ``sandbox.store.config``, ``sandbox.models``, ``sandbox.tool_envs`` modules, ``agents`` and
``mock_tools`` only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

import httpx
from pydantic import BaseModel, Field

from agents.plugin_calls import broke, is_foreign, plugin_code, returned
from agents.presets import preset_values
from agents.registry import NoOptions, Registry, UnknownName, instances_of, validate_options
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
from mock_tools.miss import miss_policy_kind
from mock_tools.overlay import OVERLAY_FILE
from mock_tools.service import create_service
from sandbox.errors import ConfigError, PluginFailure
from sandbox.models.simulators import build_simulator
from sandbox.store.config import RunConfig
from sandbox.store.redact import redact
from sandbox.tool_envs.http import HttpToolEnv, WorldToolEnv
from sandbox.tool_envs.mcp import open_mcp
from sandbox.tool_envs.recorded import open_recorded
from sandbox.tool_envs.reply_cap import cap_tool_replies
from sandbox.tool_envs.server_check import check_health

__all__ = [
    "TOOL_TRANSPORTS",
    "EpisodeToolEnv",
    "HttpToolEnvs",
    "ToolEnvs",
    "ClientOptions",
    "ToolTransport",
    "open_tool_envs",
    "register_tool_transport",
    "select_transport",
]


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


Opener = Callable[[RunConfig, Suite, Mapping[str, str], Any], ToolEnvs]
"""Opens a transport's tools for a run: its config, its suite, the environment (API keys) and
the transport's validated options (an instance of its ``options`` class)."""


@dataclass(frozen=True)
class ToolTransport:
    name: str
    open: Opener
    selected_by: str | None = None
    """The field of ``RunConfig.tools`` that selects this transport when set; None: the
    default."""
    options: type[BaseModel] = NoOptions
    """Its options class (``--transport-option KEY=VALUE``)."""


class ClientOptions(BaseModel):
    """The options of the transports that talk HTTP to a mock tool server."""

    model_config = NoOptions.model_config

    timeout: float = Field(default=60.0, gt=0, description="Seconds a tool call may take.")


TOOL_TRANSPORTS: Registry[ToolTransport] = Registry(
    "tool transport",
    group="agent_sandbox.tool_transports",
    adapt=instances_of(ToolTransport),
    expected="a ToolTransport (sandbox.tool_envs)",
)


def register_tool_transport(transport: ToolTransport) -> ToolTransport:
    return TOOL_TRANSPORTS.register(transport.name, transport)


def select_transport(config: RunConfig) -> tuple[ToolTransport, BaseModel]:
    """The transport of ``config`` (``transport``, else the first whose field is set, else the
    default) and its validated options; ``ConfigError`` for an unknown name or bad options."""
    try:
        tools = config.tools
        transport = TOOL_TRANSPORTS.get(tools.transport) if tools.transport else _selected(config)
        what = f"tool transport {transport.name!r}"
        options = validate_options(what, transport.options, tools.transport_options)
    except (UnknownName, ValueError) as e:
        raise ConfigError(f"{e} (--transport, --transport-option)") from e
    return transport, options


def _selected(config: RunConfig) -> ToolTransport:
    default: ToolTransport | None = None
    for _, transport in TOOL_TRANSPORTS.items():
        if transport.selected_by is None:
            default = default or transport
        elif getattr(config.tools, transport.selected_by, None):
            return transport
    assert default is not None, "no default tool transport registered"
    return default


def open_tool_envs(
    config: RunConfig, suite: Suite, env: Mapping[str, str] | None = None
) -> ToolEnvs:
    """The tools of a run with ``config`` on ``suite`` (use as ``async with``); ``env`` gives
    the API keys of models the tools need (a simulator). A transport of the user's own is
    called as plugin code (``agents.plugin_calls``): what it raises opening, entering, leaving
    or reporting is one line naming it (``PluginFailure``), and what it opens must be tools."""
    transport, options = select_transport(config)
    if not is_foreign(transport.open):
        return transport.open(config, suite, env or {}, options)
    what = f"tool transport {transport.name!r}"
    with plugin_code(what, PluginFailure):
        opened = transport.open(config, suite, env or {}, options)
    lacking = [
        m for m in ("__aenter__", "__aexit__", "for_episode", "report") if not hasattr(opened, m)
    ]
    if lacking:
        raise broke(
            what,
            f"open() returned a {type(opened).__name__} without {', '.join(lacking)}, not the "
            "tools of a run (ToolEnvs)",
            PluginFailure,
        )
    return _CheckedToolEnvs(opened, what)


class _CheckedToolEnvs:
    """A foreign transport's tools, entered, left and asked for their report as plugin code; an
    episode's env is its own (what it raises ends that episode, recorded)."""

    def __init__(self, inner: ToolEnvs, what: str) -> None:
        self.inner, self.what = inner, what

    async def __aenter__(self) -> _CheckedToolEnvs:
        with plugin_code(f"{self.what} (entering its tools)", PluginFailure):
            await self.inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with plugin_code(f"{self.what} (closing its tools)", PluginFailure):
            await self.inner.__aexit__(exc_type, exc, tb)

    def for_episode(self, task: Task, *, session: str) -> EpisodeToolEnv:
        return self.inner.for_episode(task, session=session)

    def report(self) -> dict[str, Any]:
        what = f"{self.what}'s report()"
        with plugin_code(what, PluginFailure):
            got = self.inner.report()
        return dict(returned(what, got, dict, "a dict", PluginFailure))

    def __getattr__(self, item: str) -> Any:
        if item in ("inner", "what"):
            raise AttributeError(item)
        return getattr(self.inner, item)


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
        call_timeout: float | None = None,
    ) -> None:
        self.client = client
        self.call_timeout = call_timeout
        """Seconds a call to a remote server may take as a whole (None in process)."""
        self.suite = suite
        self.faults = config.run_faults()
        self.remote = remote
        self.service = service
        self.suite_dir = config.suite
        self.recording_scope = config.tools.recording_scope
        self.preset_tools = preset_values(config.preset, "tools")
        self.accept_other_suite = config.tools.accept_other_suite
        self.seed = config.seed
        self.server: dict[str, Any] | None = None
        """What the remote server said of itself (``/health``), checked."""
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
        preset = self.preset_tools  # the run's preset decides over the suite
        world = self.suite.world
        env = WorldToolEnv if world is not None else HttpToolEnv
        extra: dict[str, Any] = (
            {"seed": self.seed, "policy": world.policy, "user_functions": world.user_functions()}
            if world is not None
            else {}
        )
        return env(
            self.client,
            task,
            self.suite.apis,
            session=session,
            **extra,
            faults=self.faults,
            dispatch=preset.get("dispatch", meta.dispatch),
            ascii_observations=preset.get("ascii_observations", meta.ascii_observations),
            recordings=f"{scope}/{task.id}" if scope is not None else None,
            name_lists=preset.get("name_lists", "toolbench"),
            function_names=preset.get("function_names", "unique"),
            finish_rule=preset.get("finish_rule", "first_finish"),
            call_timeout=self.call_timeout,
        )

    def report(self) -> dict[str, Any]:
        if self.service is None:
            remote: dict[str, Any] = {"transport": "http", "url": redact(self.remote or "")}
            return remote if self.server is None else {**remote, "server": self.server}
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
        """Before the first episode: the remote server must be a mock tool server serving the
        run's suite (``server_check.check_health``)."""
        try:
            self.server = await check_health(
                self.client,
                redact(self.remote or ""),
                self.suite,
                accept_other_suite=self.accept_other_suite,
            )
        except ConfigError:
            await self.client.__aexit__(None, None, None)
            raise


def _in_process(
    config: RunConfig, suite: Suite, env: Mapping[str, str], options: ClientOptions
) -> HttpToolEnvs:
    tools = config.tools
    try:
        policy = build_miss_policy(tools.miss_policy, _miss_options(config, env))
        overlay = None
        if policy.records or tools.overlay:
            overlay = tools.overlay or _default_overlay(config, suite)
        service = create_service(suite, miss_policy=policy, overlay=overlay)
    except MockToolsError as e:
        raise ConfigError(f"cannot build the mock tool server: {e}") from e
    app = http_app(service)
    client = cap_tool_replies(
        in_process_client(app, timeout=options.timeout), config.tools.max_reply_bytes
    )
    return HttpToolEnvs(client, config, suite, remote=None, service=service)


def _miss_options(config: RunConfig, env: Mapping[str, str]) -> dict[str, Any]:
    """The miss policy's options: the simulator (built through ``sandbox.models``) and the
    upstream URL when the policy takes those options, then ``tools.miss_options``."""
    tools = config.tools
    takes = miss_policy_kind(tools.miss_policy).options.model_fields
    options: dict[str, Any] = {}
    if tools.simulator and "simulator" in takes:
        options["simulator"] = build_simulator(tools.simulator, env=env)
    if tools.upstream_url and "upstream_url" in takes:
        options["upstream_url"] = tools.upstream_url
    return {**options, **tools.miss_options}


def _default_overlay(config: RunConfig, suite: Suite) -> Path:
    return Path(suite.path or config.suite) / OVERLAY_FILE


def _remote(
    config: RunConfig, suite: Suite, env: Mapping[str, str], options: ClientOptions
) -> HttpToolEnvs:
    if not config.tools.url:
        raise ConfigError("the http tool transport needs --tools-url (a running sandbox serve)")
    url = config.tools.url.rstrip("/")
    client = httpx.AsyncClient(base_url=url, timeout=options.timeout)
    capped = cap_tool_replies(client, config.tools.max_reply_bytes)
    return HttpToolEnvs(capped, config, suite, remote=url, call_timeout=options.timeout)


register_tool_transport(ToolTransport("in-process", _in_process, options=ClientOptions))
register_tool_transport(ToolTransport("http", _remote, selected_by="url", options=ClientOptions))
register_tool_transport(ToolTransport("mcp", open_mcp, selected_by="mcp_server"))
register_tool_transport(ToolTransport("recorded", open_recorded, selected_by="replay"))
