"""The ``mcp`` tool transport (``--mcp-server``): agents on the tools any MCP server lists.

On ``__aenter__`` the run connects once (``mcp_client.McpConnection``: streamable HTTP or a stdio
command, bounded start-up), checks what the server says it is (``server_check``: a mock tool
server must serve ``--suite``'s suite) and lists the server's tools as a suite catalog
(``mcp_catalog.ServerCatalog``: names kept, schemas and descriptions the server's). Each episode
gets an ``HttpToolEnv`` over an in-process mock tool service for that catalog, exactly as a run on
a suite does, with one difference: the service holds no recordings and its miss policy forwards
every call live to the server (``LiveMcpPolicy``), with the episode's session in ``_meta`` (a mock
tool server counts occurrences by it). So name resolution, schema validation (an invalid call is
answered locally, as offline), injected faults (``--fault-rate``, a task's ``faults``), occurrence
counting and the observation text are the same code as in a replay of the run, and a replay
against the recorded suite reproduces the observations exactly.

With ``record_into`` (``--record-into SUITE_DIR``) every answer is also written to that suite
(``mcp_record.SuiteRecorder``), with the tool docs and the run's tasks (those ``--tasks`` selects),
so ``sandbox replay`` and later runs work offline. When some of the server's tools write (their
``readOnlyHint``, or the ``writes``/``reads`` of SUITE_DIR's ``suite.yaml``, else of ``--suite``),
each answer is recorded under its episode's write history (``mock_tools.history``), which the
in-process service keeps exactly as it will when it serves the recorded suite. A call the server
does not answer (timeout, lost connection, JSON-RPC error) raises ``agents.errors.ToolEnvError``:
the episode ends with an infrastructure error, is never charged to the agent, and ``--resume`` runs
it again. An answer over ``tools.max_reply_bytes`` is the tool's: the agent observes
``fault:reply_too_large`` (``reply_cap``), and nothing of it is recorded. May import
``sandbox.store``, ``sandbox.tool_envs`` modules, ``agents`` and ``mock_tools``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio.to_thread
import yaml

from agents.errors import ToolEnvError
from agents.toolenv import Observation
from mock_tools import (
    Miss,
    MissAnswer,
    MockToolService,
    Response,
    Suite,
    Task,
    http_app,
    in_process_client,
)
from mock_tools.errors import MockToolsError
from mock_tools.history import api_kinds
from mock_tools.models import SuiteMeta
from mock_tools.yaml_text import load_yaml
from sandbox.errors import ConfigError
from sandbox.store.config import RunConfig
from sandbox.store.redact import redact
from sandbox.store.selection import select_tasks
from sandbox.tool_envs.http import HttpToolEnv
from sandbox.tool_envs.mcp_catalog import ServerCatalog
from sandbox.tool_envs.mcp_client import (
    DEFAULT_CALL_TIMEOUT,
    McpCallError,
    McpConnection,
    McpTarget,
    response_of,
)
from sandbox.tool_envs.mcp_record import SuiteRecorder
from sandbox.tool_envs.reply_cap import TOO_LARGE
from sandbox.tool_envs.server_check import check_mcp_server_info

__all__ = ["LiveMcpPolicy", "McpEpisodeEnv", "McpToolEnvs", "open_mcp"]

log = logging.getLogger(__name__)

TRANSPORT_PREFIX = "transport:"


class LiveMcpPolicy:
    """The miss policy of an MCP run: ask the server, keep its answer (never cached)."""

    name = "mcp"
    records = False  # every call of a live run goes to the server (docs/design-notes.md)

    def __init__(
        self, connection: McpConnection, catalog: ServerCatalog, recorder: SuiteRecorder | None
    ) -> None:
        self.connection = connection
        self.catalog = catalog
        self.recorder = recorder

    async def answer(self, miss: Miss) -> MissAnswer | None:
        name = self.catalog.mcp_names[(miss.tool, miss.api)]
        started = time.perf_counter()
        try:
            result = await self.connection.call(name, dict(miss.args), session=miss.scope)
        except McpCallError as e:
            failed = Response(ok=False, error=str(e))
            if e.kind == TOO_LARGE:  # the tool's broken answer, observed (``reply_cap``)
                return MissAnswer(failed, f"fault:{TOO_LARGE}", code=TOO_LARGE, status=502)
            return MissAnswer(failed, f"{TRANSPORT_PREFIX}{e.kind}", code="mcp_failed", status=502)
        response = response_of(result)
        response.latency_ms = int((time.perf_counter() - started) * 1000)
        if self.recorder is not None:
            await anyio.to_thread.run_sync(
                self.recorder.record,
                miss.tool,
                miss.api,
                dict(miss.args),
                miss.occurrence,
                response,
                miss.history,
            )
        return MissAnswer(response, "upstream")

    async def aclose(self) -> None:
        return None


class McpEpisodeEnv:
    """One episode's tools on the server: an ``HttpToolEnv`` whose unanswered calls raise."""

    def __init__(self, inner: HttpToolEnv) -> None:
        self.inner = inner
        self.task = inner.task

    @property
    def functions(self) -> list[dict[str, Any]]:
        return self.inner.functions

    def target(self, name: str) -> tuple[str, str] | None:
        return self.inner.target(name)

    async def call(self, name: str, args: dict[str, Any]) -> Observation:
        obs = await self.inner.call(name, args)
        if obs.provenance.startswith(TRANSPORT_PREFIX):
            raise ToolEnvError(obs.error, kind=obs.provenance[len(TRANSPORT_PREFIX) :])
        return obs

    async def reset(self) -> None:
        await self.inner.reset()


class McpToolEnvs:
    """The tools of an MCP run (an async context manager, see the module docstring)."""

    def __init__(self, config: RunConfig, suite: Suite) -> None:
        assert config.tools.mcp_server is not None
        self.target = McpTarget.parse(config.tools.mcp_server)
        self.source = suite
        self.record_into = config.tools.record_into
        self.selection = config.tasks
        self.faults = config.run_faults()
        self.accept_other_suite = config.tools.accept_other_suite
        self.max_reply_bytes = config.tools.max_reply_bytes
        self.server: dict[str, Any] = {}
        """What the server said of itself (``serverInfo``), checked (``server_check``)."""
        self.catalog: ServerCatalog | None = None
        self.tasks: dict[str, Task] = {}
        self.recorder: SuiteRecorder | None = None
        self._connection: McpConnection | None = None
        self._service: MockToolService | None = None
        self._client: Any = None
        self._apis: dict[tuple[str, str], Any] = {}

    async def __aenter__(self) -> McpToolEnvs:
        self._connection = await McpConnection.open(
            self.target, max_reply_bytes=self.max_reply_bytes
        )
        try:
            self._setup(self._connection)
            await self._client.__aenter__()
        except BaseException:
            await self._close()
            raise
        return self

    def _setup(self, connection: McpConnection) -> None:
        self.server = check_mcp_server_info(
            redact(self.target.describe()),
            connection.server_name,
            connection.server_version,
            self.source,
            accept_other_suite=self.accept_other_suite,
        )
        catalog = ServerCatalog.from_tools(connection.server_name, connection.tools)
        if not catalog.apis:
            raise ConfigError(
                f"the MCP server {self.target.describe()} lists no usable tools"
                + (f" (skipped: {', '.join(catalog.skipped)})" if catalog.skipped else "")
            )
        self.catalog = catalog
        run_tasks = select_tasks(self.source.tasks, self.selection)
        self.tasks = {t.id: catalog.task(t, self.source.apis) for t in run_tasks}
        kinds = self._kinds()
        try:
            api_kinds(kinds, catalog.apis)
        except ValueError as e:
            raise ConfigError(f"the MCP server {self.target.describe()}'s tools: {e}") from None
        if self.record_into:
            self.recorder = SuiteRecorder.open(
                self.record_into,
                catalog,
                self.tasks.values(),
                source=self.target.describe(),
                kinds=kinds,
            )
        served = Suite(
            meta=SuiteMeta(name=f"mcp:{catalog.server}", writes=kinds.writes, reads=kinds.reads),
            tools=catalog.tools,
            tasks=[],
            recordings=[],
        )
        self._apis = served.apis
        self._service = MockToolService(
            served, miss_policy=LiveMcpPolicy(connection, catalog, self.recorder)
        )
        self._client = in_process_client(
            http_app(self._service), timeout=DEFAULT_CALL_TIMEOUT * 2 + 10.0
        )

    def _kinds(self) -> SuiteMeta:
        """Which of the server's tools write, besides what their annotations say: the
        ``writes``/``reads`` of the suite recorded into (it replays with its own), else of
        ``--suite``; two that disagree are a ``ConfigError``."""
        given = self.source.meta
        own = Path(self.record_into) / "suite.yaml" if self.record_into else None
        if own is None or not own.is_file():
            return given
        try:
            mine = SuiteMeta.model_validate(load_yaml(own.read_text(encoding="utf-8")))
        except (OSError, ValueError, yaml.YAMLError, MockToolsError) as e:
            raise ConfigError(f"cannot record into {self.record_into}: {own}: {e}") from None
        said = (given.writes, given.reads)
        if said != (None, None) and said != (mine.writes, mine.reads):
            raise ConfigError(
                f"--suite says writes {given.writes} and reads {given.reads}, {own} says writes "
                f"{mine.writes} and reads {mine.reads}: make them agree (the recorded suite "
                "replays with its own)"
            )
        return mine

    async def __aexit__(self, *exc: Any) -> None:
        await self._close()

    async def _close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.__aexit__(None, None, None)
        if self._service is not None:
            await self._service.aclose()
            self._service = None
        if self.recorder is not None:
            summary = self.recorder.close()
            log.info(
                "recorded %d new answers into %s (%d already recorded, %d conflicts)",
                summary.written,
                summary.path,
                summary.known,
                summary.conflicts,
            )
        if self._connection is not None:
            connection, self._connection = self._connection, None
            await connection.aclose()

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = {"transport": "mcp", "server": redact(self.target.describe())}
        if self.server:
            out["server_info"] = self.server
        if self.catalog is not None:
            out["tools"] = len(self.catalog.apis)
        if self.record_into:
            out["record_into"] = self.record_into
        return out

    def for_episode(self, task: Task, *, session: str) -> McpEpisodeEnv:
        assert self.catalog is not None and self._client is not None, "use as `async with`"
        offered = self.tasks.get(task.id) or self.catalog.task(task, self.source.apis)
        env = HttpToolEnv(self._client, offered, self._apis, session=session, faults=self.faults)
        return McpEpisodeEnv(env)


def open_mcp(
    config: RunConfig, suite: Suite, env: Mapping[str, str], options: object = None
) -> McpToolEnvs:
    """The ``mcp`` transport's opener (``env`` is unused: the server has its own; it takes no
    options)."""
    return McpToolEnvs(config, suite)
