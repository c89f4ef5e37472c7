"""Calling code that is not the project's: what a plugin raises or returns, as one named error.

A plugin (a strategy, an evaluation protocol, a step metric, a tool transport, an executor, a
model kind: anything a registry resolved from a path or an entry point, or that code registered)
is trusted for nothing. Every place the harness calls one goes through here:

- ``plugin_code(what)``: the plugin's code runs inside; whatever it raises becomes a
  ``PluginFailed`` (or the caller's ``error`` class: the harness's exits 2) naming it
  (``what``: ``"agent 'mine' (my_pkg.Mine)"``), ``SystemExit`` and ``KeyboardInterrupt``
  included (a ``sys.exit(0)`` in a strategy must not end a run with exit 0 and nothing scored),
  and a ``CancelledError`` it raised itself. A cancellation from outside (Ctrl-C, SIGTERM, a
  timeout of the caller's: the running task is being cancelled) is left alone, so stopping a
  run still stops it.
- ``returned(what, value, kind, described)``: the value, when it is a ``kind``; else a
  ``PluginFailed`` saying what it returned instead.
- ``broke(what, rule)``: the ``PluginFailed`` of a plugin whose result breaks a rule of its
  contract (a label per episode, a rate in [0, 1]...).
- ``unit_rate(what, name, value)``: a rate checked to be a finite number in [0, 1].

The caller decides what a failure means: an episode that ends with an error record (the run goes
on), or, where nothing can go on, a one-line error naming the plugin (exit 2): each function
takes the exception class to raise (``error``, made from the one-line message). ``is_foreign``
tells code outside the project, whose results are checked, from the project's own. ``mock_tools``
cannot import this module: the miss policies have a twin (``mock_tools.plugins``).
Imports nothing of the project but ``agents.errors``.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from agents.errors import AgentsError

__all__ = [
    "PluginFailed",
    "broke",
    "cancelled_from_outside",
    "is_foreign",
    "plugin_code",
    "raised_text",
    "returned",
    "unit_rate",
]

T = TypeVar("T")


Error = Callable[[str], Exception]
"""Makes the exception a failure raises, from its one-line message."""


class PluginFailed(AgentsError):
    """Plugin code raised, or returned what its contract forbids; the message names the plugin
    and what went wrong, in one line."""


def is_foreign(obj: object) -> bool:
    """Whether ``obj`` (a class, a function, an object) comes from outside the project's three
    packages: a plugin, whose results are checked."""
    module = getattr(obj, "__module__", None) or getattr(type(obj), "__module__", "") or ""
    return module.split(".")[0] not in ("agents", "sandbox", "mock_tools")


def raised_text(e: BaseException) -> str:
    """``Type: first line of the message`` (``SystemExit: 0``), one line."""
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


def cancelled_from_outside() -> bool:
    """Whether the running task is being cancelled (Ctrl-C, SIGTERM, a caller's timeout), as
    opposed to a ``CancelledError`` that code inside it raised of its own accord. Without
    ``Task.cancelling`` (Python 3.10) every cancellation counts as one from outside."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running loop: nobody outside cancels synchronous code
        return False
    if task is None:
        return False
    cancelling = getattr(task, "cancelling", None)
    return True if cancelling is None else bool(cancelling())


@contextmanager
def plugin_code(
    what: str, error: Error = PluginFailed, passing: tuple[type[BaseException], ...] = ()
) -> Iterator[None]:
    """Run a plugin's code inside: what it raises becomes ``error`` naming ``what`` (module
    doc); a failure of an inner call (a ``PluginFailed``, an ``error``) and the ``passing``
    exceptions (the caller's own, raised by what it handed the plugin) pass as they are."""
    passed: tuple[type[BaseException], ...] = (PluginFailed, *passing)
    try:
        yield
    except passed:
        raise
    except asyncio.CancelledError as e:
        if cancelled_from_outside():
            raise
        raise error(f"{what} raised {raised_text(e)} of its own") from e
    except (Exception, SystemExit, KeyboardInterrupt) as e:
        if isinstance(error, type) and isinstance(e, error):
            raise  # an inner plugin call's failure, named already
        raise error(f"{what} raised {raised_text(e)}") from e


def returned(
    what: str,
    value: Any,
    kind: type[T] | tuple[type, ...],
    described: str,
    error: Error = PluginFailed,
) -> T:
    """``value`` when it is a ``kind``; else ``error``: ``returned int, not a list``."""
    if isinstance(value, kind):
        return value  # type: ignore[return-value]  # a tuple of kinds narrows to any of them
    raise error(f"{what} returned {type(value).__name__}, not {described}")


def broke(what: str, rule: str, error: Error = PluginFailed) -> Exception:
    """The error of a plugin whose result breaks ``rule`` of its contract."""
    return error(f"{what} broke its contract: {rule}")


def unit_rate(what: str, name: str, value: Any, error: Error = PluginFailed) -> float:
    """``value`` when it is a finite number in [0, 1] (a rate, a step score); else the error of
    ``what`` naming ``name`` and the value."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise broke(what, f"{name} is {value!r}, not a number in [0, 1]", error)
    return float(value)
