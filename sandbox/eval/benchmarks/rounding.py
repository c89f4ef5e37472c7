"""``numpy.round(x, 4)`` without numpy: what the benchmarks' tables print.

numpy rounds ``x * 10**d`` half to even and divides back (not Python's correctly rounded
``round(x, d)``, which differs on a few binary ties); Python's ``round`` of a float to an
integer is half to even too, so the same float operations give the same value.
"""

from __future__ import annotations

import math

__all__ = ["np_round"]


def np_round(value: float, decimals: int = 4) -> float:
    """``numpy.round(value, decimals)`` for a Python float (nan stays nan)."""
    if math.isnan(value) or math.isinf(value):
        return value
    scale = 10.0**decimals
    return round(value * scale) / scale
