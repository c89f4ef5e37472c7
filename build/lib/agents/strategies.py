"""Agent strategies by name: ``STRATEGIES`` maps a name to a strategy class and its options class.

Adding a strategy is a module with the class and one call::

    class Reflexion:                       # satisfies agents.agent.Agent
        name = "reflexion"
        Options = ReflexionOptions         # a subclass of agents.options.AgentOptions
        def __init__(self, options: ReflexionOptions) -> None: ...

    register_strategy(Reflexion)

A name may carry one option after ``@``: ``react@4`` is the ``react@n`` strategy with ``n=4``
(``register_strategy(ReActAtN, at_option="n")``). ``resolve_strategy`` validates a name and its
options (an unknown option is an error that names the strategies that take it) and returns a
``ResolvedStrategy`` whose ``build()`` makes a fresh agent per episode.

The built-in strategies are registered at the bottom of this module; their modules import
nothing from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import ValidationError

from agents.agent import Agent
from agents.dfsdt import DFSDTAgent
from agents.errors import AgentsError
from agents.options import AgentOptions
from agents.react import ReActAgent
from agents.react_at_n import ReActAtN
from agents.registry import Registry

__all__ = [
    "STRATEGIES",
    "AgentOptionsError",
    "ResolvedStrategy",
    "StrategyClass",
    "StrategyEntry",
    "UnknownAgent",
    "build_agent",
    "option_owners",
    "options_for",
    "register_strategy",
    "resolve_strategy",
    "strategy_entry",
]


class UnknownAgent(AgentsError):
    """A name that no registered strategy has."""


class AgentOptionsError(AgentsError):
    """Options that the strategy does not take, or values its options class rejects."""


class StrategyClass(Protocol):
    """What ``register_strategy`` needs of a class: a name, an options class, a constructor."""

    name: str
    Options: type[AgentOptions]

    def __call__(self, options: Any, /) -> Agent: ...


@dataclass(frozen=True)
class StrategyEntry:
    name: str
    cls: Any
    options: type[AgentOptions]
    at_option: str | None = None
    """The option a name sets after ``@`` (``react@4`` sets ``n``), if any."""

    @property
    def spelling(self) -> str:
        """How users write the name (``react@<n>``)."""
        if self.at_option is None:
            return self.name
        return self.name.rsplit("@", 1)[0] + f"@<{self.at_option}>"


STRATEGIES: Registry[StrategyEntry] = Registry("agent")


def strategy_entry(
    cls: Any,
    *,
    name: str | None = None,
    options: type[AgentOptions] | None = None,
    at_option: str | None = None,
) -> StrategyEntry:
    """The registry entry of ``cls``: ``name`` defaults to ``cls.name``, the options class to
    ``cls.Options``. With ``at_option``, the name must end in ``@<option>`` (``react@n``)."""
    entry_name = (name or cls.name).strip().lower()
    opts = options or cls.Options
    if not (isinstance(opts, type) and issubclass(opts, AgentOptions)):
        raise TypeError(f"the options of strategy {entry_name!r} must subclass AgentOptions")
    if at_option is not None:
        if not entry_name.endswith(f"@{at_option}"):
            raise ValueError(f"a strategy with at_option {at_option!r} is named '<name>@n'")
        if at_option not in opts.model_fields:
            raise ValueError(f"{opts.__name__} has no option {at_option!r}")
    return StrategyEntry(entry_name, cls, opts, at_option)


def register_strategy(
    cls: Any,
    *,
    name: str | None = None,
    options: type[AgentOptions] | None = None,
    at_option: str | None = None,
    replace: bool = False,
) -> StrategyEntry:
    """Register ``cls`` (see ``strategy_entry``); ``STRATEGIES.registered`` does it for a block."""
    entry = strategy_entry(cls, name=name, options=options, at_option=at_option)
    return STRATEGIES.register(entry.name, entry, replace=replace)


@dataclass(frozen=True)
class ResolvedStrategy:
    """A strategy name with validated options; ``build()`` makes a fresh agent."""

    name: str
    """The name as the run records it (``react@4``)."""
    entry: StrategyEntry
    options: AgentOptions

    def build(self) -> Agent:
        agent: Agent = self.entry.cls(self.options)
        return agent

    @property
    def params(self) -> dict[str, Any]:
        return self.options.model_dump(mode="json")


def _lookup(spec: str) -> tuple[StrategyEntry, dict[str, Any]]:
    key = spec.strip().lower()
    entry = STRATEGIES.find(key)
    if entry is not None:
        return entry, {}
    head, at, value = key.partition("@")
    for _, candidate in STRATEGIES.items():
        option = candidate.at_option
        if at and option is not None and candidate.name == f"{head}@{option}":
            return candidate, {option: value}
    known = ", ".join(e.spelling for _, e in STRATEGIES.items())
    raise UnknownAgent(f"unknown agent {spec!r}; known agents: {known}")


def option_owners(option: str) -> list[str]:
    """The strategies whose options class has ``option``."""
    return [e.spelling for _, e in STRATEGIES.items() if option in e.options.model_fields]


def resolve_strategy(spec: str, options: Mapping[str, Any] | None = None) -> ResolvedStrategy:
    """Validate a strategy name and its options; ``UnknownAgent`` / ``AgentOptionsError``."""
    entry, from_name = _lookup(spec)
    given = dict(options or {})
    unknown = sorted(set(given) - set(entry.options.model_fields))
    if unknown:
        problems = []
        for option in unknown:
            owners = option_owners(option)
            takers = f"taken by: {', '.join(owners)}" if owners else "no strategy takes it"
            problems.append(f"{option!r} ({takers})")
        raise AgentOptionsError(
            f"agent {entry.spelling!r} does not take option(s) {', '.join(problems)}; "
            f"it takes: {', '.join(entry.options.model_fields)}"
        )
    try:
        validated = entry.options.model_validate({**given, **from_name})
    except ValidationError as e:
        details = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'options'}: {err['msg']}"
            for err in e.errors()
        )
        raise AgentOptionsError(f"agent {spec!r}: {details}") from e
    name = entry.name
    if entry.at_option is not None:
        name = f"{name.rsplit('@', 1)[0]}@{getattr(validated, entry.at_option)}"
    return ResolvedStrategy(name=name, entry=entry, options=validated)


def options_for(spec: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The part of ``options`` that strategy ``spec`` takes (for options shared by several
    strategies, e.g. a comparison's flags); ``UnknownAgent`` for an unknown name."""
    entry, _ = _lookup(spec)
    return {k: v for k, v in options.items() if k in entry.options.model_fields}


def build_agent(spec: str, **options: Any) -> Agent:
    """A fresh agent of strategy ``spec`` with ``options`` (see ``resolve_strategy``)."""
    return resolve_strategy(spec, options).build()


register_strategy(ReActAgent)
register_strategy(DFSDTAgent)
register_strategy(ReActAtN, at_option="n")
