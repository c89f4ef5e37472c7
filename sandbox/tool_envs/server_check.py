"""Knowing the tool server a run talks to, before its first episode.

``--tools-url``: the server must be a mock tool server, and serve the run's suite.
``check_health`` reads its ``GET /health``: it must answer 200 with a JSON object naming the
suite (``suite``) and its content fingerprint (``fingerprint``), as ``mock_tools`` does. Anything
else (another status, a body that is not JSON, no suite or fingerprint) is no mock tool server:
refused (``ConfigError``, exit 2). A suite name or fingerprint other than ``--suite``'s stops the
run too, unless ``tools.accept_other_suite`` (``--accept-other-suite``) lets it go on with a
warning. What the server said is recorded in the manifest (``tools.server``).

``--mcp-server``: any MCP server may legitimately serve a run (that is what ``--record-into`` is
for), so "checking" means what holds for every server: the connection initialises and lists its
tools before the first episode (``mcp_client.McpConnection.open``; a server that cannot, or lists
no usable tool, is refused). When the server's ``serverInfo`` says it is a mock tool server
(``mock-tools:<suite>``, as ``sandbox serve --mcp`` names itself), ``check_mcp_server_info``
compares its suite name and version with ``--suite``'s, under the same rule; the MCP handshake
carries no fingerprint, so over MCP a changed suite of the same name and version is not seen.
What the server said (``serverInfo`` name and version) is recorded in the manifest.
May import ``sandbox.store``, ``sandbox.errors`` and ``mock_tools``.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx

from mock_tools import Suite
from sandbox.errors import ConfigError

__all__ = ["MOCK_SERVER_PREFIX", "check_health", "check_mcp_server_info"]

log = logging.getLogger(__name__)

MOCK_SERVER_PREFIX = "mock-tools:"
"""How a mock tool server names itself over MCP (``serverInfo.name``: ``mock-tools:<suite>``)."""
ACCEPT_HINT = "pass --accept-other-suite to run anyway"


def _short(fingerprint: str) -> str:
    return fingerprint.removeprefix("sha256:")[:12]


def _differs(
    where: str, suite: Suite, served: str, fingerprint: str | None, accept: bool
) -> str | None:
    """The mismatch between the served suite and ``suite`` (None: the same), raised as a
    ``ConfigError`` unless ``accept``, when it is logged and returned."""
    if served == suite.name and (fingerprint is None or fingerprint == suite.fingerprint):
        return None
    theirs = f"suite {served}" + (f" ({_short(fingerprint)})" if fingerprint else "")
    mine = f"suite {suite.name} ({_short(suite.fingerprint)})"
    problem = f"the tool server at {where} serves {theirs}, the run's --suite is {mine}"
    if not accept:
        raise ConfigError(f"{problem}: its answers would not be this suite's; {ACCEPT_HINT}")
    log.warning("%s (accepted: --accept-other-suite)", problem)
    return problem


async def check_health(
    client: httpx.AsyncClient, where: str, suite: Suite, *, accept_other_suite: bool
) -> dict[str, Any]:
    """What the server at ``where`` says of itself (``/health``), checked; ``ConfigError`` when
    it is no mock tool server or serves another suite (unless ``accept_other_suite``)."""
    try:
        r = await client.get("/health", timeout=10.0)
    except httpx.HTTPError as e:
        raise ConfigError(
            f"the tool server at {where} does not answer /health ({type(e).__name__}); start it "
            f"with `sandbox serve {suite.path or suite.name}` or drop --tools-url"
        ) from e
    try:
        health = r.json() if r.status_code == 200 else None
    except ValueError:
        health = None
    if not isinstance(health, dict) or not all(
        isinstance(health.get(k), str) for k in ("suite", "fingerprint")
    ):
        raise ConfigError(
            f"the server at {where} is not a mock tool server: GET /health answered "
            f"{r.status_code} without a suite and its fingerprint; point --tools-url at "
            "`sandbox serve SUITE`"
        )
    mismatch = _differs(where, suite, health["suite"], health["fingerprint"], accept_other_suite)
    return {**health, **({"accepted_mismatch": mismatch} if mismatch else {})}


def check_mcp_server_info(
    where: str, name: str, version: str, suite: Suite, *, accept_other_suite: bool
) -> dict[str, Any]:
    """What the MCP server said of itself (``serverInfo``), checked against ``suite`` when it is
    a mock tool server (see the module doc); ``ConfigError`` on a mismatch unless accepted."""
    info: dict[str, Any] = {"name": name, "version": version}
    if not name.startswith(MOCK_SERVER_PREFIX):
        return {**info, "suite_check": "not a mock tool server: its suite is not compared"}
    served = name[len(MOCK_SERVER_PREFIX) :]
    mismatch = _differs(where, suite, served, None, accept_other_suite)
    if mismatch is None and version and suite.meta.version and version != suite.meta.version:
        mismatch = _differs(where, suite, f"{served} version {version}", None, accept_other_suite)
    check = "same suite name and version" if mismatch is None else "other suite accepted"
    return {**info, "suite_check": check, **({"accepted_mismatch": mismatch} if mismatch else {})}
