"""The defaults of a run's settings, as plain values: the command line shows them in ``--help``
without building the ``RunConfig`` model. Imports nothing."""

from __future__ import annotations

__all__ = [
    "DEFAULT_AGENT",
    "DEFAULT_CONCURRENCY",
    "DEFAULT_MAX_TOOL_REPLY",
    "DEFAULT_MODEL",
    "DEFAULT_OUT",
    "DEFAULT_SUITE",
]

DEFAULT_SUITE = "scenarios/default"
DEFAULT_AGENT = "react"
DEFAULT_MODEL = "noisy-reference"
DEFAULT_OUT = "runs"
DEFAULT_CONCURRENCY = 4
DEFAULT_MAX_TOOL_REPLY = 4 * 2**20
"""The longest tool answer read (4 MiB; ``sandbox.tool_envs.reply_cap``)."""
