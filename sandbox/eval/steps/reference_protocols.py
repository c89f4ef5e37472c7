"""The reference step protocols: ``teval``, ``teval-v1``, ``ultratool`` and ``tooleyes``.

Each reproduces a benchmark's own evaluator arithmetic on an episode (``teval_metrics``,
``ultratool_metrics``, ``tooleyes_metrics``; the arithmetic itself in
``sandbox.eval.benchmarks``). Importing this module registers their metrics and protocols;
``default_metrics`` imports it, so every reader of the registries finds them.
"""

from __future__ import annotations

from sandbox.eval.steps.metric import (
    StepMetric,
    StepProtocol,
    register_step_metric,
    register_step_protocol,
)
from sandbox.eval.steps.teval_metrics import TEVAL_METRICS, TEVAL_PROTOCOLS
from sandbox.eval.steps.tooleyes_metrics import TOOLEYES_METRICS, TOOLEYES_PROTOCOL
from sandbox.eval.steps.ultratool_metrics import ULTRATOOL_METRICS, ULTRATOOL_PROTOCOL

__all__ = ["REFERENCE_METRICS", "REFERENCE_PROTOCOLS"]

REFERENCE_METRICS: tuple[StepMetric, ...] = (*TEVAL_METRICS, *ULTRATOOL_METRICS, *TOOLEYES_METRICS)
REFERENCE_PROTOCOLS: tuple[StepProtocol, ...] = (
    *TEVAL_PROTOCOLS,
    ULTRATOOL_PROTOCOL,
    TOOLEYES_PROTOCOL,
)

for _metric in REFERENCE_METRICS:
    register_step_metric(_metric)
for _protocol in REFERENCE_PROTOCOLS:
    register_step_protocol(_protocol)
