"""``EnvUserTools``: the user's own tools of one episode (dual control), over its tool env.

A world may give the user of a conversation tools of its own (``@write(user=True)``; τ²'s
telecom phone). A tool env that has them says so with ``user_functions`` (what the user is
offered) and ``call_as_user`` (a call on the episode's session); ``user_tools`` wraps such an env
for one user turn. Before the turn's first call the env is put back in the state the turn starts
from (the state after the agent's reply, which a search may have left), as the agents' step does
before an agent's calls. A state that cannot be restored is the infrastructure's failure: an
observation marked ``infra``, which stops the episode as such. Imports the agents' env records
and errors only.
"""

from __future__ import annotations

from typing import Any

from agents.errors import ToolEnvError
from agents.toolenv import Observation, stateful

__all__ = ["EnvUserTools", "user_tools"]


class EnvUserTools:
    """The ``UserTools`` of one user turn (see the module docstring)."""

    def __init__(self, env: Any, start: str | None) -> None:
        self.env = env
        self.start = start
        """The hash of the state the turn starts from (None: the episode's initial state)."""
        self._restored = False

    @property
    def functions(self) -> list[dict[str, Any]]:
        return list(self.env.user_functions)

    async def call(self, name: str, args: dict[str, Any]) -> Observation:
        if not self._restored:
            env = stateful(self.env)
            try:
                if env is not None:
                    await env.restore_state(self.start)
            except ToolEnvError as e:
                message = f"the state could not be restored for the user: {e.kind}: {e}"
                return Observation(
                    ok=False, content=message, provenance="restore", error=message, infra=True
                )
            self._restored = True
        obs: Observation = await self.env.call_as_user(name, args)
        return obs


def user_tools(env: object, start: str | None) -> EnvUserTools | None:
    """The user's tools of ``env`` for a turn starting at ``start``, None when it has none."""
    functions = getattr(env, "user_functions", None)
    if not functions or not callable(getattr(env, "call_as_user", None)):
        return None
    return EnvUserTools(env, start)
