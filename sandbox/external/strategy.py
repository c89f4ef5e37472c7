"""The ``external`` strategy: any agent, as a process (or an HTTP service), run as an episode.

``sandbox run --agent external -O command="python my_agent.py"`` (or ``-O url=http://...``)
starts the agent once per episode with the task on stdin and the sandbox's model proxy and tool
scope in its environment (docs/external-agents.md has the protocol; ``sandbox.external.episode``
runs it). Registered here by name, with its options class, as any strategy is; the project's
own ``agent_sandbox.strategies`` entry point names this module too, so the name resolves in a
process that never imported it (a Ray worker, a library caller).

This module stays light (pydantic and ``agents`` only): ``sandbox run --help`` imports it for the
option flags. The server, the proxy and the MCP SDK are imported when an episode runs.
May import ``agents`` and ``sandbox.external`` modules.
"""

from __future__ import annotations

from agents.agent import BaseAgent, EpisodeMeta
from agents.budget import Budget
from agents.model import Model
from agents.strategies import STRATEGIES, register_strategy
from agents.toolenv import ToolEnv
from agents.trajectory import Trajectory
from sandbox.external.options import ExternalOptions

__all__ = ["ExternalAgent", "ExternalOptions"]


class ExternalAgent(BaseAgent[ExternalOptions]):
    """An agent of any framework or language, run as a process or reached over HTTP."""

    name = "external"
    Options = ExternalOptions

    @property
    def overrun_grace(self) -> float:
        """How long past ``--max-seconds`` an episode may take (``sandbox.run.wall_clock``):
        stopping the agent takes up to two graces and the reading of its pipes two seconds."""
        return 2 * self.options.grace + 5.0

    async def run(
        self,
        *,
        model: Model,
        env: ToolEnv,
        query: str,
        budget: Budget,
        episode: EpisodeMeta,
    ) -> Trajectory:
        # The server, the proxy and the MCP SDK only for runs of an external agent.
        from sandbox.external.episode import run_external

        return await run_external(
            self.name, self.options, model=model, env=env, query=query, budget=budget, meta=episode
        )


if ExternalAgent.name not in STRATEGIES:
    register_strategy(
        ExternalAgent, summary="any agent as a process or HTTP service, through the proxy"
    )
