"""Exceptions of the agents package.

AgentsError
├── ModelError            the model could not produce a turn (after retries): infrastructure
│   └── ModelUnreachable  the endpoint does not answer at all (raised by probes)
├── ToolEnvError          the tools could not answer a call at all: infrastructure
└── ReplayDivergence      a replay model was asked something its recording does not hold
Imports nothing.
"""

from __future__ import annotations


class AgentsError(Exception):
    """Base class; the message says what to do."""


class ModelError(AgentsError):
    """An infrastructure failure of the model endpoint, never an agent mistake.

    ``kind`` is one of ``rate_limit``, ``server``, ``timeout``, ``connection``, ``bad_request``,
    ``auth``, ``other``.
    """

    def __init__(self, message: str, *, kind: str = "other", attempts: int = 1) -> None:
        super().__init__(message)
        self.kind = kind
        self.attempts = attempts


class ModelUnreachable(ModelError):
    def __init__(self, message: str) -> None:
        super().__init__(message, kind="connection")


class ToolEnvError(AgentsError):
    """A tool environment got no answer for a call (its server is gone, timed out, broke the
    protocol): an infrastructure failure, never an agent mistake. A tool that answers with an
    error is an ``Observation``, not this. ``kind``: ``timeout``, ``connection``, ``protocol``...
    """

    def __init__(self, message: str, *, kind: str = "other") -> None:
        super().__init__(message)
        self.kind = kind


class ReplayDivergence(AgentsError):
    """The conversation left the recorded trajectory; the message says where."""
