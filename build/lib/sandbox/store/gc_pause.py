"""``paused_gc()``: the cyclic garbage collector off while a bulk job builds many objects.

Reading and scoring 10,000 trajectories makes millions of small objects (pydantic models, dicts,
lists) that live on; each automatic collection of the oldest generation walks all of them again,
which took about half of a ``sandbox eval`` of such a run. Trajectories and scores hold no
reference cycles, so reference counting frees what the job drops; the collector is switched back
on when the job ends. Only the caller that switched it off switches it on again, so nested or
concurrent bulk jobs (threads, tasks) never leave it off. Imports nothing of the project.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc(when: bool = True) -> Iterator[None]:
    """Run the block with automatic cyclic garbage collection paused (a no-op when it already
    is: the collector is then left as it was, or when ``when`` is false: a block that talks to
    the network, such as a judge's calls, makes cyclic garbage and keeps the collector on)."""
    if not when or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
