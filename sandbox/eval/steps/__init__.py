"""Step-level scores of episodes: what each step of a trajectory did against the task's reference.

The names a step metric or step protocol of your own needs are exported here (``StepEpisode``,
``Measure``, ``StepMetric``, ``register_step_metric``, ``StepProtocol``,
``register_step_protocol``, the registries); docs/architecture.md has the recipe. The modules:

- ``metric``: step metrics and step protocols, their registries (``STEP_METRICS``,
  ``STEP_PROTOCOLS``; exported here through ``default_metrics``, so with the built-ins in them)
  and entry-point group names;
- ``episode``: what a metric reads (``StepEpisode``) and what a suite's scoring shares
  (``ScoringContext``);
- ``default_metrics``: the project's metrics and the ``default`` step protocol;
- ``selection``: which protocols, added metrics and options an evaluation runs
  (``StepSelection``);
- ``step_scores``: scoring episodes and runs with given metrics, and the summary;
- ``dimensions``: the dimension names tables list, in the registries' order;
- what the built-in metrics compose: ``actions`` (calls as canonical actions, the chosen path,
  matching to the reference), ``format_score`` (instruct), ``tool_selection``, ``arg_scores``
  (understand), ``plan_score``, ``reason_score`` (with ``similarity``), ``review_score``,
  ``efficiency``, ``matching`` and ``measure``.

Pure functions; importing a metric stays cheap. May import ``sandbox.store``, ``sandbox.errors``
and ``eval`` modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.lazy import lazy_package

if TYPE_CHECKING:
    from sandbox.eval.steps.default_metrics import STEP_METRICS, STEP_PROTOCOLS
    from sandbox.eval.steps.episode import ScoringContext, StepEpisode
    from sandbox.eval.steps.measure import Measure
    from sandbox.eval.steps.metric import (
        DEFAULT_STEP_PROTOCOL,
        STEP_METRICS_GROUP,
        STEP_PROTOCOLS_GROUP,
        NoOptions,
        StepMetric,
        StepProtocol,
        register_step_metric,
        register_step_protocol,
    )
    from sandbox.eval.steps.selection import StepSelection

_EXPORTS: dict[str, str] = {
    "DEFAULT_STEP_PROTOCOL": "sandbox.eval.steps.metric",
    "Measure": "sandbox.eval.steps.measure",
    "NoOptions": "sandbox.eval.steps.metric",
    "STEP_METRICS": "sandbox.eval.steps.default_metrics",
    "STEP_METRICS_GROUP": "sandbox.eval.steps.metric",
    "STEP_PROTOCOLS": "sandbox.eval.steps.default_metrics",
    "STEP_PROTOCOLS_GROUP": "sandbox.eval.steps.metric",
    "ScoringContext": "sandbox.eval.steps.episode",
    "StepEpisode": "sandbox.eval.steps.episode",
    "StepMetric": "sandbox.eval.steps.metric",
    "StepProtocol": "sandbox.eval.steps.metric",
    "StepSelection": "sandbox.eval.steps.selection",
    "register_step_metric": "sandbox.eval.steps.metric",
    "register_step_protocol": "sandbox.eval.steps.metric",
}

__all__ = [
    "DEFAULT_STEP_PROTOCOL",
    "STEP_METRICS",
    "STEP_METRICS_GROUP",
    "STEP_PROTOCOLS",
    "STEP_PROTOCOLS_GROUP",
    "Measure",
    "NoOptions",
    "ScoringContext",
    "StepEpisode",
    "StepMetric",
    "StepProtocol",
    "StepSelection",
    "register_step_metric",
    "register_step_protocol",
]

lazy_package(__name__, _EXPORTS)
