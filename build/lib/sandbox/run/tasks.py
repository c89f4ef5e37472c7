"""Which tasks a run covers: ``select_tasks`` (it lives in ``sandbox.store.selection``)."""

from sandbox.store.selection import select_tasks

__all__ = ["select_tasks"]
