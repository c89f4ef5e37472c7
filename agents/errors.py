"""Exceptions of the agents package.

AgentsError
├── ModelError            the model could not produce a turn (after retries): infrastructure,
│   │                     unless its kind says otherwise (``configuration``, ``context_length``)
│   └── ModelUnreachable  the endpoint does not answer at all (raised by probes)
├── ToolEnvError          the tools could not answer a call at all: infrastructure
└── ReplayDivergence      a replay model was asked something its recording does not hold
Imports nothing.
"""

from __future__ import annotations


class AgentsError(Exception):
    """Base class; the message says what to do."""


CONFIGURATION_KINDS = frozenset({"auth", "model_not_found"})
"""Kinds of ``ModelError`` that say the run is set up wrong (a refused key, a model the endpoint
does not serve): every request would fail the same way, so a run stops at the first one."""

CONTEXT_LENGTH = "context_length"
"""The kind of a request longer than the model's context: no failure of the endpoint; the
episode's history outgrew what the model reads (its loop ends it as ``context_overflow``)."""

BAD_REQUEST = "bad_request"
"""The kind of a request the endpoint refused as malformed (a 4xx, or a 5xx whose text says the
request caused it): sending it again would fail again, so it is never retried."""

REPLY_TOO_LARGE = "reply_too_large"
"""The kind of a completion over the reply cap (``model.max_reply_bytes``): the endpoint answered,
with more than the cap. It is the model's outcome, not the infrastructure's: the episode ends
``error`` / ``model_error:reply_too_large`` counted unsolved (a model that floods is not left out
of the pass rate), and ``--resume`` does not run it again."""


class ModelError(AgentsError):
    """The model endpoint could not produce a turn (after retries), never an agent mistake.

    ``kind`` is one of ``rate_limit``, ``server``, ``timeout``, ``connection``, ``malformed``
    (a body that is no valid completion), ``bad_request``, ``other``: infrastructure failures;
    ``auth``, ``model_not_found``: configuration errors (``configuration``); or
    ``context_length`` (``CONTEXT_LENGTH``).
    """

    def __init__(self, message: str, *, kind: str = "other", attempts: int = 1) -> None:
        super().__init__(message)
        self.kind = kind
        self.attempts = attempts

    @property
    def configuration(self) -> bool:
        """The run is set up wrong (``CONFIGURATION_KINDS``): no request can succeed."""
        return self.kind in CONFIGURATION_KINDS


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
