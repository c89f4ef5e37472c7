"""The step dimensions tables show, by name and in report order, read from the registries.

``step_dimensions`` orders the measure names found in scores: the ``default`` step protocol's
measures first (in its metrics' order), then each registered step metric's measures as
``METRIC.MEASURE`` (how an added metric is named outside its own key), then each other registered
step protocol's measures as ``PROTOCOL:MEASURE`` (``teval:instruct``), then any other name (a
metric no longer registered, or an older name) alphabetically. ``headline_dimensions`` is the
short list a narrow table shows: each metric's ``headline`` measure. No table lists dimensions
by hand. May import ``eval.steps`` modules.
"""

from __future__ import annotations

from collections.abc import Iterable

from sandbox.eval.steps import default_metrics  # noqa: F401  (registers the built-ins)
from sandbox.eval.steps.metric import DEFAULT_STEP_PROTOCOL, STEP_METRICS, STEP_PROTOCOLS

__all__ = ["headline_dimensions", "qualified", "step_dimensions", "under_protocol"]


def qualified(metric: str, measure: str) -> str:
    """An added metric's measure as tables name it: ``METRIC.MEASURE``."""
    return f"{metric}.{measure}"


def under_protocol(protocol: str, dimension: str) -> str:
    """A dimension of a step protocol other than ``default`` as tables name it:
    ``PROTOCOL:DIMENSION`` (``teval:instruct``); the default protocol's keep their names."""
    return dimension if protocol == DEFAULT_STEP_PROTOCOL else f"{protocol}:{dimension}"


def _known(headline: bool) -> list[str]:
    protocol = STEP_PROTOCOLS.get(DEFAULT_STEP_PROTOCOL)
    out: list[str] = []
    for name in protocol.metrics:
        metric = STEP_METRICS.get(name)
        out += [metric.main_measure] if headline else list(metric.measures)
    for name, metric in STEP_METRICS.items():
        if name not in protocol.metrics:
            measures = [metric.main_measure] if headline else list(metric.measures)
            out += [qualified(metric.name, m) for m in measures]
    for name, other in STEP_PROTOCOLS.items():
        if name == DEFAULT_STEP_PROTOCOL:
            continue
        for metric_name in other.metrics:
            metric = STEP_METRICS.get(metric_name)
            measures = [metric.main_measure] if headline else list(metric.measures)
            out += [under_protocol(name, m) for m in measures]
    return out


def step_dimensions(present: Iterable[str]) -> list[str]:
    """The names in ``present``, in the registries' report order (module doc)."""
    names = set(present)
    known = [d for d in _known(headline=False) if d in names]
    return known + sorted(names - set(known))


def headline_dimensions(present: Iterable[str]) -> list[str]:
    """The headline measure of each metric that ``present`` has, in report order."""
    names = set(present)
    return [d for d in _known(headline=True) if d in names]
