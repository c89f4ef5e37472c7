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

A strategy of the user's own code needs no registration: ``--agent my_pkg.agents:SecondChance``
imports it, and a package that declares it in the ``agent_sandbox.strategies`` entry-point group
makes its name usable (``--agent second-chance``); both are adapted by ``strategy_entry``, as
``register_strategy`` would (``agents.registry``).

The built-in strategies are registered at the bottom of this module; their modules import
nothing from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agents.agent import Agent
from agents.dfsdt import DFSDTAgent
from agents.errors import AgentsError
from agents.options import AgentOptions
from agents.react import ReActAgent
from agents.react_at_n import ReActAtN
from agents.registry import Registry, UnknownName, validate_options

__all__ = [
    "STRATEGIES",
    "AgentOptionsError",
    "ResolvedStrategy",
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


@dataclass(frozen=True)
class StrategyEntry:
    name: str
    cls: Any
    options: type[AgentOptions]
    at_option: str | None = None
    """The option a name sets after ``@`` (``react@4`` sets ``n``), if any."""
    summary: str = ""
    """One line for ``--help`` and the docs (default: the first line of the class docstring)."""

    @property
    def spelling(self) -> str:
        """How users write the name (``react@<n>``)."""
        if self.at_option is None:
            return self.name
        return self.name.rsplit("@", 1)[0] + f"@<{self.at_option}>"


def _adapt(obj: Any, name: str | None) -> StrategyEntry:
    """A plugin's entry: a ``StrategyEntry`` as it is, a class through ``strategy_entry`` (named
    by its entry point, else by its own ``name``)."""
    if isinstance(obj, StrategyEntry):
        return obj
    if not isinstance(obj, type):
        raise TypeError(f"got {type(obj).__name__}, not a class")
    return strategy_entry(obj, name=name)


STRATEGIES: Registry[StrategyEntry] = Registry(
    "agent",
    group="agent_sandbox.strategies",
    adapt=_adapt,
    expected="a strategy class (with name, Options subclassing AgentOptions, and run)",
)


def strategy_entry(
    cls: Any,
    *,
    name: str | None = None,
    options: type[AgentOptions] | None = None,
    at_option: str | None = None,
    summary: str | None = None,
) -> StrategyEntry:
    """The registry entry of ``cls``: ``name`` defaults to ``cls.name``, the options class to
    ``cls.Options``, the summary to the docstring's first line. With ``at_option``, the name
    must end in ``@<option>`` (``react@n``)."""
    entry_name = (name or cls.name).strip().lower()
    opts = options or cls.Options
    if not (isinstance(opts, type) and issubclass(opts, AgentOptions)):
        raise TypeError(f"the options of strategy {entry_name!r} must subclass AgentOptions")
    if at_option is not None:
        if not entry_name.endswith(f"@{at_option}"):
            raise ValueError(f"a strategy with at_option {at_option!r} is named '<name>@n'")
        if at_option not in opts.model_fields:
            raise ValueError(f"{opts.__name__} has no option {at_option!r}")
    if summary is None:
        summary = (getattr(cls, "__doc__", None) or "").strip().split("\n", 1)[0]
    return StrategyEntry(entry_name, cls, opts, at_option, summary.rstrip("."))


def register_strategy(
    cls: Any,
    *,
    name: str | None = None,
    options: type[AgentOptions] | None = None,
    at_option: str | None = None,
    summary: str | None = None,
    replace: bool = False,
) -> StrategyEntry:
    """Register ``cls`` (see ``strategy_entry``); ``STRATEGIES.registered`` does it for a block."""
    entry = strategy_entry(cls, name=name, options=options, at_option=at_option, summary=summary)
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
    """The entry of ``spec`` (a name, ``name@value``, a path or a plugin) and the option its
    ``@`` sets; ``UnknownAgent`` (a ``PluginError`` for a path or plugin that does not load)."""
    key = spec.strip().lower()
    if key in STRATEGIES:
        return STRATEGIES.get(key), {}
    head, at, value = key.partition("@")
    for _, candidate in STRATEGIES.items():
        option = candidate.at_option
        if at and option is not None and candidate.name == f"{head}@{option}":
            return candidate, {option: value}
    try:
        entry = STRATEGIES.find(spec)
    except UnknownName as e:
        raise UnknownAgent(str(e)) from e
    if entry is not None:
        return entry, {}
    known = [e.spelling for _, e in STRATEGIES.items()]
    raise UnknownAgent(STRATEGIES.unknown(spec, known, label="known agents"))


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
        validated = validate_options(f"agent {spec!r}", entry.options, {**given, **from_name})
    except ValueError as e:
        raise AgentOptionsError(str(e)) from e
    assert isinstance(validated, AgentOptions)
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


register_strategy(ReActAgent, summary="one chain, ToolBench's CoT/ReAct baseline")
register_strategy(DFSDTAgent, summary="depth-first search over a tree of chains, ToolBench's DFSDT")
register_strategy(ReActAtN, at_option="n", summary="up to N independent ReAct chains")
