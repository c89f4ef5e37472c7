"""The benchmarks' means and roundings, as their code computes them.

- ``np_mean``: ``numpy.mean`` of the values in their order (numpy sums a float array pairwise,
  in blocks, starting from its first element, so its mean of the same values can differ from
  Python's left-to-right ``sum(values) / len(values)`` in the last bit, and a figure that lands
  on a rounding tie rounds the other way: 32 values summing to 13 give numpy 0.40625 exactly and
  Python 0.40625000000000006). numpy is imported when a mean is taken, never at start-up.
- ``np_round``: ``numpy.round(x, 4)`` (what ``np.round`` and ``round()`` of a numpy float do):
  ``x * 10**d`` rounded half to even, divided back.
- ``py_round``: Python's ``round(x, 4)`` of a Python float, correctly rounded from the float's
  exact binary value (``round(0.00625, 4)`` is 0.0063: the float is a hair above the tie, where
  numpy's scaled product is the tie itself and rounds to 0.0062). UltraTool rounds its list
  accuracy, a Python float, this way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["np_mean", "np_round", "py_round"]


def np_round(value: float, decimals: int = 4) -> float:
    """``numpy.round(value, decimals)`` for a Python float (nan stays nan)."""
    if math.isnan(value) or math.isinf(value):
        return value
    scale = 10.0**decimals
    return round(value * scale) / scale


def py_round(value: float, decimals: int = 4) -> float:
    """Python's ``round(value, decimals)`` (nan stays nan)."""
    if math.isnan(value) or math.isinf(value):
        return value
    return round(value, decimals)


def np_mean(values: Sequence[float]) -> float:
    """``numpy.mean(values)`` as a Python float: the values as one float64 array, summed as
    numpy sums it; nan for no values (without numpy's warning)."""
    if not values:
        return float("nan")
    import numpy as np  # heavy: imported by the benchmarks' arithmetic only

    return float(np.mean(np.asarray(values, dtype=np.float64)))
