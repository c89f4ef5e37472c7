"""BFCL's multi-turn API classes as a world (docs/benchmarks.md).

``BfclSource`` reads the user's copy of ``bfcl-eval`` (a wheel, an unpacked or installed copy);
``BfclEngine`` answers calls with its API classes, loaded from that copy at run time, behind the
interface of ``WorldEngine``; ``load_bfcl_engine`` is what a suite whose ``world_adapter`` is
``bfcl`` loads.
"""

from __future__ import annotations

from mock_tools.worlds.bfcl.encode import bfcl_result_text, instance_records
from mock_tools.worlds.bfcl.engine import (
    ERROR_PREFIX,
    BfclEngine,
    BfclState,
    load_bfcl_engine,
    long_context,
)
from mock_tools.worlds.bfcl.functions import offered_function
from mock_tools.worlds.bfcl.source import CATEGORIES, BfclSource, BfclSourceError

__all__ = [
    "CATEGORIES",
    "ERROR_PREFIX",
    "BfclEngine",
    "BfclSource",
    "BfclSourceError",
    "BfclState",
    "bfcl_result_text",
    "instance_records",
    "load_bfcl_engine",
    "long_context",
    "offered_function",
]
