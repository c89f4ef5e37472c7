"""Agent strategies by name: ``react``, ``dfsdt``, ``react@n`` / ``react@4``.

``build_agent("react@4")`` is what a CLI flag like ``--agents react,dfsdt,react@4`` needs; options
not accepted by the chosen strategy are an error, not silently dropped.
"""

from __future__ import annotations

import inspect
from typing import Any

from agents.agent import Agent
from agents.dfsdt import DFSDTAgent
from agents.errors import AgentsError
from agents.react import ReActAgent
from agents.react_at_n import ReActAtN

STRATEGIES: dict[str, type] = {"react": ReActAgent, "dfsdt": DFSDTAgent, "react@n": ReActAtN}


class UnknownAgent(AgentsError):
    """An agent spec that names no strategy, or options the strategy does not take."""


def build_agent(spec: str, **options: Any) -> Agent:
    """The agent named by ``spec``; ``react@K`` is ReAct@N with ``n=K``."""
    name = spec.strip().lower()
    if name.startswith("react@") and name != "react@n":
        count = name.removeprefix("react@")
        if not count.isdigit() or int(count) < 1:
            raise UnknownAgent(f"agent {spec!r}: the N of react@N must be a positive integer")
        options = {"n": int(count), **options}
        name = "react@n"
    cls = STRATEGIES.get(name)
    if cls is None:
        known = ", ".join([*STRATEGIES, "react@<N>"])
        raise UnknownAgent(f"unknown agent {spec!r}; known agents: {known}")
    accepted = set(inspect.signature(cls).parameters)
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise UnknownAgent(
            f"agent {spec!r} does not take option(s) {', '.join(unknown)}; "
            f"it takes: {', '.join(sorted(accepted))}"
        )
    try:
        agent: Agent = cls(**options)
    except ValueError as e:
        raise UnknownAgent(f"agent {spec!r}: {e}") from e
    return agent
