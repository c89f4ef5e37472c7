"""Model implementations: an OpenAI-compatible client, a text-ReAct adapter, offline models.

Import a model's own module (``agents.models.noisy``...) to avoid loading the others.
"""

from agents.models.fork import ForkModel
from agents.models.noisy import MISTAKE_WEIGHTS, NoisyReferenceModel
from agents.models.openai_compat import OpenAICompatModel
from agents.models.openai_errors import EndpointError
from agents.models.reference import PlanStep, ReferenceModel, ReferencePlan
from agents.models.replay import ReplayModel
from agents.models.retry import RetryPolicy
from agents.models.text_react import TextReActModel

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
