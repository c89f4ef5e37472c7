"""The chain loop every strategy shares, and its three override points.

A chain grows one node at a time under the previous one (``chain_step``): the shared step
(``Episode.step``) with the hooks of a ``ChainHooks`` around it. ``run_chain`` repeats that until
the chain ends and returns how it ended (an ``agents.outcome.ChainEnd``); ReAct runs one chain,
ReAct@N up to N, and DFSDT calls ``chain_step`` for every child it generates (its tree walk is its
own: it decides which node grows next and how far a dead end climbs).

The override points, each a method of ``ChainHooks`` with ReAct's behaviour as the default.
ReActAgent, ReActAtN and DFSDTAgent are ``ChainHooks`` themselves and pass ``hooks=self``, so a
subclass of any of them changes a chain by overriding one method:

- ``before_model_call(episode, parent) -> Stop | None``: called before every model call, with
  the node the call continues (``None`` for a chain's first node). A ``Stop`` ends the chain
  there, with outcome ``stopped`` and no model call; every built-in then ends the episode with the
  stop's status and reason.
- ``after_observation(episode, node) -> None``: called once for every node the chain adds, after
  its tool calls ran (``node.calls[i].observation``); also for thoughts, invalid turns and failed
  model calls, and for a node whose step stopped the episode. It watches: it must not change the
  node (the trajectory is what the model saw, and replays rebuild it).
- ``ends_chain(episode, node, *, max_depth) -> ChainEnd | None``: the stop predicate, asked after
  every node whose step did not stop the episode. In a conversation (a tool env with a ``user``,
  ``agents.user``) a reply (a thought, a ``Finish``) is answered by the user before it is asked,
  so it is asked about the ``user`` node: ``done`` answers with the last reply, another signal
  (``transfer``, ``out_of_scope``) gives up, no signal goes on. ``None`` grows the chain
  further; a ``ChainEnd`` ends it with the outcome it names:
  ``ChainEnd("answered", node, final_answer=text)`` answers
  with ``text``, ``"gave_up"`` gives up (with an optional explanation), ``"depth_limit"`` is a
  dead end at the depth limit. The default answers on ``Finish(give_answer)``, gives up on
  ``Finish(give_up_and_restart)`` and ends at ``max_depth`` (in the options' depth unit).

A strategy that answers with the first successful observation is then::

    class FirstHit(ReActAgent):
        name = "first-hit"

        def ends_chain(self, episode, node, *, max_depth):
            hits = successful_observations(node)  # agents.outcome
            if hits:
                return ChainEnd("answered", node, final_answer=hits[0].content)
            return super().ends_chain(episode, node, max_depth=max_depth)

Hooks are plain methods, not coroutines: they decide from the record and never call the model or
the tools (everything the model and the tools do goes through the step, so a replay can rebuild
it). ``agents.outcome.episode_end`` turns the ``ChainEnd`` into the episode's end. Imports the
shared step and ``agents.outcome``; never a strategy, ``sandbox`` or ``mock_tools``.
"""

from __future__ import annotations

from agents.outcome import ChainEnd, give_up_text
from agents.step import Episode, Stop
from agents.trajectory import Node


class ChainHooks:
    """The override points of a chain (see the module docstring), with ReAct's behaviour."""

    def before_model_call(self, episode: Episode, parent: Node | None) -> Stop | None:
        """A ``Stop`` to end the chain before the model is asked to continue ``parent``."""
        return None

    def after_observation(self, episode: Episode, node: Node) -> None:
        """Watch ``node``, just added, its calls run."""

    def ends_chain(self, episode: Episode, node: Node, *, max_depth: int | None) -> ChainEnd | None:
        """How the chain ends after ``node``, or ``None`` when it goes on."""
        if node.kind == "user":
            signal = (node.user or {}).get("signal")
            if signal == "done":
                return ChainEnd("answered", node, final_answer=episode.last_reply(node))
            if signal is not None:  # transfer, out of scope: ended without the user's goal
                return ChainEnd("gave_up", node, final_answer=episode.last_reply(node))
            return None
        if node.kind == "finish":
            assert node.finish is not None
            return ChainEnd("answered", node, final_answer=node.finish.answer)
        if node.kind == "give_up":
            return ChainEnd("gave_up", node, final_answer=give_up_text(node))
        if max_depth is not None and episode.level(node) >= max_depth:
            return ChainEnd("depth_limit", node)
        return None


async def chain_step(
    episode: Episode,
    parent: Node | None,
    hooks: ChainHooks,
    *,
    max_depth: int | None,
    diversity_prompt: str | None = None,
) -> tuple[Node | None, ChainEnd | None]:
    """Grow the chain by one node under ``parent``: the node added (if any) and, when the chain
    ends there, how. A failed model call ends it as ``model_error``, any other stop of the step
    as ``stopped``; otherwise ``hooks.ends_chain`` decides."""
    stop = hooks.before_model_call(episode, parent)
    if stop is not None:
        return None, ChainEnd("stopped", parent, stop)
    parent_id = parent.id if parent is not None else None
    result = await episode.step(parent_id, diversity_prompt=diversity_prompt)
    node = result.node
    if node is not None:
        hooks.after_observation(episode, node)
    if result.stop is None and node is not None and _replied(episode, node):
        reply = node
        result = await episode.user_step(reply)  # the user answers: the chain goes on there
        node = result.node if result.node is not None else reply
        if result.node is not None:
            hooks.after_observation(episode, result.node)
    if result.stop is not None:
        failed = node is not None and node.kind == "error"
        last = node if node is not None else parent
        return node, ChainEnd("model_error" if failed else "stopped", last, result.stop)
    assert node is not None
    return node, hooks.ends_chain(episode, node, max_depth=max_depth)


def _replied(episode: Episode, node: Node) -> bool:
    """In a conversation, a node that is a reply to the user: a thought or a ``Finish``."""
    return episode.user is not None and node.kind in ("thought", "finish")


async def run_chain(
    episode: Episode, *, max_depth: int | None, hooks: ChainHooks | None = None
) -> ChainEnd:
    """Grow one root-level chain until it ends; return how.

    Thoughts and invalid turns stay in the chain. With the default hooks a chain ends on
    ``Finish`` (``answered`` / ``gave_up``), on a node whose depth reaches ``max_depth``
    (``depth_limit``), on a failed model call (``model_error``: its ``stop`` says why; the caller
    decides whether the episode goes on) or on any other stop of the step (``stopped``)."""
    hooks = hooks if hooks is not None else ChainHooks()
    last: Node | None = None
    while True:
        node, end = await chain_step(episode, last, hooks, max_depth=max_depth)
        if end is not None:
            return end
        last = node
