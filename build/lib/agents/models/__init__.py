"""Model implementations: an OpenAI-compatible client, a text-ReAct adapter, offline models.

Import a model's own module (``agents.models.noisy``...) to avoid loading the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.lazy import lazy_package

if TYPE_CHECKING:
    from agents.models.fork import ForkModel
    from agents.models.noisy import MISTAKE_WEIGHTS, NoisyReferenceModel
    from agents.models.openai_compat import OpenAICompatModel
    from agents.models.openai_errors import EndpointError
    from agents.models.reference import PlanStep, ReferenceModel, ReferencePlan
    from agents.models.replay import ReplayModel
    from agents.models.retry import RetryPolicy
    from agents.models.text_react import TextReActModel

_EXPORTS: dict[str, str] = {
    "EndpointError": "agents.models.openai_errors",
    "ForkModel": "agents.models.fork",
    "MISTAKE_WEIGHTS": "agents.models.noisy",
    "NoisyReferenceModel": "agents.models.noisy",
    "OpenAICompatModel": "agents.models.openai_compat",
    "PlanStep": "agents.models.reference",
    "ReferenceModel": "agents.models.reference",
    "ReferencePlan": "agents.models.reference",
    "ReplayModel": "agents.models.replay",
    "RetryPolicy": "agents.models.retry",
    "TextReActModel": "agents.models.text_react",
}

__all__ = [
    "MISTAKE_WEIGHTS",
    "EndpointError",
    "ForkModel",
    "NoisyReferenceModel",
    "OpenAICompatModel",
    "PlanStep",
    "ReferenceModel",
    "ReferencePlan",
    "ReplayModel",
    "RetryPolicy",
    "TextReActModel",
]

lazy_package(__name__, _EXPORTS)
