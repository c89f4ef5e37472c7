"""External agents: any framework, any language, run as an episode (``--agent external``).

The strategy (``strategy``: ``ExternalAgent``; its options in ``options``) starts the agent once
per episode (``process``; an agent served over HTTP: ``http_agent``) with the task on stdin and
a per-episode server in its environment (``gateway``): an OpenAI-compatible model proxy
(``proxy``) over the run's model, and the episode's tools (``/call``, MCP in ``mcp_tools``, the
suite's REST routes). Both are answered by the episode's scope (``scope``) under its budget,
and recorded as the usual trajectory (``record``); how the episode ends is ``ending``.
docs/external-agents.md describes the protocol.

Above ``tool_envs``; only the command line imports it (and the strategies' entry point names
``sandbox.external.strategy``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.lazy import lazy_package

if TYPE_CHECKING:
    from sandbox.external.episode import run_external, task_input
    from sandbox.external.options import ExternalOptions
    from sandbox.external.strategy import ExternalAgent

_EXPORTS: dict[str, str] = {
    "ExternalAgent": "sandbox.external.strategy",
    "ExternalOptions": "sandbox.external.options",
    "run_external": "sandbox.external.episode",
    "task_input": "sandbox.external.episode",
}

__all__ = ["ExternalAgent", "ExternalOptions", "run_external", "task_input"]

lazy_package(__name__, _EXPORTS)
