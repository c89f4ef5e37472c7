"""Command-line flags for agent options, made from the strategies' options classes.

Every field of every registered strategy's options class (``agents.strategies.STRATEGIES``) is a
flag of the same name (``width`` -> ``--width``), typed from its annotation, its help naming the
strategies that take it. ``-O KEY=VALUE`` reaches any option, those of strategies registered by
the caller's own code included. Only the options given land in ``RunConfig.agent_options``; the
strategy's options class validates them (an option the strategy does not take is an error that
names the strategies that do).
"""

from __future__ import annotations

import argparse
import json
import types
from typing import Any, Literal, Union, get_args, get_origin

from pydantic.fields import FieldInfo

from agents.strategies import STRATEGIES
from sandbox.errors import ConfigError

__all__ = ["add_agent_options", "agent_options_from_args"]

_DEST = "agent_option__"


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


def _value(text: str) -> Any:
    """A JSON value when the text is one, else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def add_agent_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "agent options", "options of the strategies (each flag names the agents that take it)"
    )
    taken = {s for action in parser._actions for s in action.option_strings}  # noqa: SLF001
    for name, (field, owners) in _option_fields().items():
        flag = "--" + name.replace("_", "-")
        if flag in taken:
            continue  # reachable with -O
        about = field.description or name.replace("_", " ")
        group.add_argument(
            flag,
            dest=_DEST + name,
            default=None,
            help=f"{about} ({', '.join(owners)})",
            **_flag_kwargs(field),
        )
    group.add_argument(
        "-O",
        "--agent-option",
        dest=_DEST + "_pairs",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any agent option (VALUE as JSON, else text); repeatable",
    )


def agent_options_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The agent options given on the command line (flags, then ``-O`` pairs)."""
    options: dict[str, Any] = {}
    for dest, value in vars(args).items():
        if dest.startswith(_DEST) and dest != _DEST + "_pairs" and value is not None:
            options[dest.removeprefix(_DEST)] = value
    for pair in getattr(args, _DEST + "_pairs", []):
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"-O expects KEY=VALUE, got {pair!r}")
        options[key.strip().replace("-", "_")] = _value(text)
    return options
