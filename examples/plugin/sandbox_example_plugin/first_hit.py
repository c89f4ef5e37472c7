"""``first-hit``: ReAct that answers with the first successful observation.

ReAct's chain (``agents.chain``) with one override point changed: a node whose calls returned a
successful observation ends the chain, answered with that observation's text.
"""

from __future__ import annotations

from agents import ChainEnd, Episode, Node, ReActAgent, successful_observations


class FirstHit(ReActAgent):
    name = "first-hit"  # ReAct's options (ReActOptions)

    def ends_chain(self, episode: Episode, node: Node, *, max_depth: int | None) -> ChainEnd | None:
        hits = successful_observations(node)
        if hits:
            return ChainEnd("answered", node, final_answer=hits[0].content)
        return super().ends_chain(episode, node, max_depth=max_depth)
