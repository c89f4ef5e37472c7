"""Command-line flags for agent options, made from the strategies' options classes.

Every field of every registered strategy's options class (``agents.strategies.STRATEGIES``) is a
flag of the same name (``width`` -> ``--width``), typed from its annotation, its help naming the
strategies that take it; its value goes to ``agent.options.<name>`` (``sandbox.commands.
config_files`` merges it with a config file's). ``-O KEY=VALUE`` (the ``agent.options`` setting's
own flag) reaches any option, those of strategies registered by the caller's own code included.
Only the options given land in ``RunConfig.agent.options``; the strategy's options class
validates them (an option the strategy does not take is an error that names the strategies
that do).
"""

from __future__ import annotations

import argparse
import json
import types
from typing import Any, Literal, Union, get_args, get_origin

from pydantic.fields import FieldInfo

from agents.strategies import STRATEGIES

__all__ = ["DEST", "add_agent_options", "agent_option_flags", "flag_metavar", "option_help"]

DEST = "agent.options."
"""Where an option's flag puts its value: its path in ``RunConfig``."""


def _option_fields() -> dict[str, tuple[FieldInfo, list[str]]]:
    """Each option name -> its field (first declaration) and the strategies that take it."""
    out: dict[str, tuple[FieldInfo, list[str]]] = {}
    for _, entry in STRATEGIES.items():
        for name, field in entry.options.model_fields.items():
            if name == entry.at_option:
                continue  # given in the name: react@4
            field_info, owners = out.setdefault(name, (field, []))
            owners.append(entry.spelling)
    return out


def _flag_kwargs(field: FieldInfo) -> dict[str, Any]:
    annotation = field.annotation
    if get_origin(annotation) in (Union, types.UnionType):
        annotation = next((a for a in get_args(annotation) if a is not type(None)), str)
    if get_origin(annotation) is Literal:
        return {"choices": [str(v) for v in get_args(annotation)]}
    if annotation is bool:
        return {"action": argparse.BooleanOptionalAction}
    if annotation in (int, float, str):
        return {"type": annotation, "metavar": "N" if annotation is int else "VALUE"}
    return {"type": _value, "metavar": "JSON"}


def flag_metavar(field: FieldInfo) -> str | None:
    """What an option flag's value is called in the docs (None for a switch)."""
    kwargs = _flag_kwargs(field)
    if "choices" in kwargs:
        return "|".join(kwargs["choices"])
    return kwargs.get("metavar")


def _value(text: str) -> Any:
    """A JSON value when the text is one, else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def agent_option_flags() -> list[tuple[str, FieldInfo, list[str]]]:
    """``(flag, field, strategies that take it)`` of every agent option."""
    return [
        ("--" + name.replace("_", "-"), field, owners)
        for name, (field, owners) in _option_fields().items()
    ]


def option_help(field: FieldInfo, owners: list[str], name: str) -> str:
    """What an option's flag does, and the strategies that take it."""
    about = (field.description or name.replace("_", " ")).rstrip(".")
    return f"{about} ({', '.join(owners)})"


def add_agent_options(parser: argparse.ArgumentParser) -> None:
    """A flag per option of the registered strategies (one not taken by another flag)."""
    group = parser.add_argument_group(
        "agent options", "options of the strategies (each flag names the agents that take it)"
    )
    taken = {s for action in parser._actions for s in action.option_strings}  # noqa: SLF001
    for flag, field, owners in agent_option_flags():
        if flag in taken:
            continue  # reachable with -O
        name = flag.removeprefix("--").replace("-", "_")
        group.add_argument(
            flag,
            dest=DEST + name,
            default=argparse.SUPPRESS,
            help=option_help(field, owners, name).replace("%", "%%"),
            **_flag_kwargs(field),
        )
