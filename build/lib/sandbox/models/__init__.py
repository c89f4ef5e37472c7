"""Models of a run: names (``models.yaml``, ad hoc endpoints) -> specs -> kinds -> providers.

``resolve_model(name, options=, env=)`` gives a ``ModelSpec``; ``build_models(spec, settings)``
the run's ``ModelProvider`` through the kind registry (``MODEL_KINDS``); ``RequestCache`` is the
SQLite cache the judge and the opt-in agent cache use. Importing this package registers the
built-in kinds (``sandbox.models.kinds``). Below ``run``, ``eval`` and ``commands``; imports
``sandbox.store``, ``agents`` and ``mock_tools`` only.
"""

from sandbox.models.cache import CachedModel, RequestCache, request_key
from sandbox.models.kinds import build_models
from sandbox.models.offline import reference_plan
from sandbox.models.provider import (
    MODEL_KINDS,
    ModelKind,
    ModelProvider,
    ModelSettings,
    register_model_kind,
)
from sandbox.models.specs import (
    DEFAULT_MODELS_FILE,
    ModelEntry,
    ModelSpec,
    base_url_env_var,
    load_model_entries,
    resolve_model,
)

__all__ = [
    "DEFAULT_MODELS_FILE",
    "MODEL_KINDS",
    "CachedModel",
    "ModelEntry",
    "ModelKind",
    "ModelProvider",
    "ModelSettings",
    "ModelSpec",
    "RequestCache",
    "base_url_env_var",
    "build_models",
    "load_model_entries",
    "reference_plan",
    "register_model_kind",
    "request_key",
    "resolve_model",
]
