"""A trajectory's description of its run, redacted before it is stored.

A trajectory names the strategy and the model it ran with, their parameters, the errors that
ended it and an external agent's command line; any of these may carry what a run was given in
secret (a command with ``OPENAI_API_KEY=...``, a model option ``api_key``, a URL's user info
inside an error).
``redact_trajectory`` passes them through ``sandbox.store.redact``, the rule the manifest and
``--print-config`` use; what the model and the tools said (the steps) is left as it was.
May import ``sandbox.store.redact`` and ``agents``.
"""

from __future__ import annotations

from agents.trajectory import Component, Trajectory
from sandbox.store.redact import redact, redact_data

__all__ = ["redact_trajectory"]


def _component(component: Component) -> Component:
    return Component(name=redact(component.name), params=redact_data(component.params))


def redact_trajectory(traj: Trajectory) -> Trajectory:
    """``traj`` (changed in place, and returned) with its agent, model, error messages and an
    external agent's process record (``tree["external"]``) redacted."""
    traj.agent = _component(traj.agent)
    traj.model = _component(traj.model)
    for error in traj.errors:
        error.message = redact(error.message)
    process = traj.tree.get("external")
    if isinstance(process, dict):  # an external agent's command, exit and output tails
        traj.tree = {**traj.tree, "external": redact_data(process)}
    return traj
