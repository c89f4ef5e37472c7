"""The built-in evaluation protocols, registered by name, and ``get_protocol``.

========================  ==========================================================
protocol                  what it is
========================  ==========================================================
``default``               the project's: checks, rules, then a judge (``protocol_default``)
``toolbench``             ToolEval (StableToolBench), label for label (``protocol_toolbench``)
``toolbench-normalized``  ``toolbench``'s pass rate, ToolEval's normalized preference
========================  ==========================================================

Importing this module registers them. A new protocol is a module with a class like theirs and one
``register_protocol`` line here (or in the caller's own code).
May import ``eval`` modules only.
"""

from __future__ import annotations

from agents.registry import UnknownName
from sandbox.errors import ConfigError
from sandbox.eval.checked_protocol import checked
from sandbox.eval.protocol import PROTOCOLS, EvalProtocol, register_protocol
from sandbox.eval.protocol_default import DefaultProtocol
from sandbox.eval.tooleval.protocol_toolbench import ToolbenchProtocol
from sandbox.eval.tooleval.protocol_toolbench_normalized import ToolbenchNormalizedProtocol

__all__ = ["DEFAULT_PROTOCOL", "PROTOCOLS", "get_protocol", "protocol_names"]

DEFAULT_PROTOCOL = "default"

register_protocol(DefaultProtocol())
register_protocol(ToolbenchProtocol())
register_protocol(ToolbenchNormalizedProtocol())


def get_protocol(name: str) -> EvalProtocol:
    """The protocol registered as ``name`` (one of the user's own checked: ``checked``); a
    ``ConfigError`` listing the known names."""
    try:
        return checked(PROTOCOLS.get(name))
    except UnknownName as e:
        raise ConfigError(str(e)) from e


def protocol_names() -> list[str]:
    return PROTOCOLS.names()
