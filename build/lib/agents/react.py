"""ReAct: one chain of steps, ending on Finish, give-up, budget, depth limit or model error.

A chain follows ToolBench's ``single_chain`` (its ``CoT`` method): thoughts and invalid turns stay
in the chain; a node whose depth (in the options' ``depth_unit``) reaches ``max_depth`` without
an answer ends it. The loop is ``agents.chain.run_chain`` with this agent as its hooks (a
subclass overrides ``before_model_call``, ``after_observation`` or ``ends_chain``), and the
episode ends as ``agents.outcome.episode_end`` maps the chain's end. Imports the chain loop and
the agents' records; never ``sandbox`` or ``mock_tools``.
"""

from __future__ import annotations

from agents.agent import BaseAgent, EpisodeMeta
from agents.budget import Budget
from agents.chain import ChainHooks, run_chain
from agents.model import Model
from agents.options import AgentOptions
from agents.outcome import episode_end
from agents.step import Episode
from agents.toolenv import ToolEnv
from agents.trajectory import Trajectory

__all__ = ["ReActAgent", "ReActOptions", "run_chain"]


class ReActOptions(AgentOptions):
    """ReAct takes the shared options only."""


class ReActAgent(ChainHooks, BaseAgent[ReActOptions]):
    """One chain (ToolBench's CoT/ReAct baseline)."""

    name = "react"
    Options = ReActOptions

    async def run(
        self,
        *,
        model: Model,
        env: ToolEnv,
        query: str,
        budget: Budget,
        episode: EpisodeMeta,
    ) -> Trajectory:
        ep = Episode.begin(
            self.name, self.options, model=model, env=env, query=query, budget=budget, meta=episode
        )
        end = await run_chain(ep, max_depth=budget.max_depth, hooks=self)
        return ep.close(episode_end(ep.trajectory, end))
