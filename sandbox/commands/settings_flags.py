"""Command-line flags made from a settings model: one flag per setting, its help from the field.

``add_settings_flags(parser, RunConfig)`` adds a flag for every leaf setting of the model, each in
the argument group of its section (the section's docstring is the group's description). A
flag's name, type, metavar and help come from its field (``sandbox.store.setting``: the type
from the annotation, the help from the description, the default shown beside it; ``Flag`` where
that derivation is wrong, and the entries of the registry a value names, with their summaries).
The flag's ``dest`` is the setting's dotted path and its default is ``SUPPRESS``: the parsed
namespace holds only the settings given on the command line, so a config file's value is never
overwritten by a flag's default (``sandbox.commands.config_files`` merges them). A mapping
setting (``agent.options``) is a repeatable ``KEY=VALUE`` flag; a list (``tasks``) is a
repeatable flag; a boolean whose default is true is ``--no-...``.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Collection, Iterator
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel

from sandbox.store.setting import SettingField, setting_fields, unwrap_optional

__all__ = [
    "add_settings_flags",
    "default_text",
    "flag_help",
    "flag_names",
    "metavar",
    "registry_entries",
    "settings_flags",
]

_METAVARS: dict[Any, str] = {int: "N", float: "X", str: "VALUE"}


def settings_flags(model: type[BaseModel], exclude: Collection[str] = ()) -> Iterator[SettingField]:
    """The settings of ``model`` that get a flag (all but the paths in ``exclude``)."""
    return (s for s in setting_fields(model) if s.path not in exclude)


def add_settings_flags(
    parser: argparse.ArgumentParser, model: type[BaseModel], *, exclude: Collection[str] = ()
) -> None:
    """One flag per setting of ``model`` (see the module docstring)."""
    groups: dict[str, Any] = {}
    for setting in settings_flags(model, exclude):
        group = groups.get(setting.section)
        if group is None:
            group = _group(parser, model, setting.section)
            groups[setting.section] = group
        group.add_argument(
            *flag_names(setting),
            dest=setting.path,
            default=argparse.SUPPRESS,
            help=flag_help(setting, short=True).replace("%", "%%"),
            **_kwargs(setting),
        )


def _group(parser: argparse.ArgumentParser, model: type[BaseModel], section: str) -> Any:
    if not section:
        return parser
    owner: Any = model
    for name in section.split("."):
        owner = owner.model_fields[name].annotation
    about = (owner.__doc__ or "").strip().split("\n\n")[0].replace("``", "")
    return parser.add_argument_group(section, about)


def flag_names(setting: SettingField) -> list[str]:
    """The option strings of a setting's flag: its short form, if any, then the long one."""
    short = setting.flag.short
    return [short, setting.flag_name] if short else [setting.flag_name]


def metavar(setting: SettingField) -> str | None:
    """What the flag's value is called (None for a switch or a flag with choices)."""
    flag = setting.flag
    if setting.is_mapping:
        return flag.metavar or "KEY=VALUE"
    annotation = unwrap_optional(setting.field.annotation)
    if annotation is bool or get_origin(annotation) is Literal or flag.choices:
        return None
    if get_origin(annotation) is list:
        annotation = get_args(annotation)[0]
    return flag.metavar or _METAVARS.get(annotation, "VALUE")


def _kwargs(setting: SettingField) -> dict[str, Any]:
    annotation = unwrap_optional(setting.field.annotation)
    if annotation is bool:
        return {"action": "store_false" if setting.field.default is True else "store_true"}
    kwargs: dict[str, Any] = {"metavar": metavar(setting)}
    if setting.is_mapping:
        return {**kwargs, "action": "append"}
    if get_origin(annotation) is list:
        nargs = setting.flag.nargs
        return {**kwargs, "nargs": nargs} if nargs else {**kwargs, "action": "append"}
    if get_origin(annotation) is Literal:
        return {"choices": [str(v) for v in get_args(annotation)]}
    if setting.flag.choices and setting.flag.registry:
        return {"choices": [name for name, _ in registry_entries(setting.flag.registry)]}
    if annotation in (int, float):
        kwargs["type"] = annotation
    return kwargs


def registry_entries(path: str) -> list[tuple[str, str]]:
    """``(name as users write it, summary)`` of each entry of the registry at ``module:NAME``
    (a ``Registry`` or a plain mapping of names)."""
    module, _, attr = path.partition(":")
    registry = getattr(importlib.import_module(module), attr)
    out = []
    for name, entry in registry.items():
        spelled = getattr(entry, "spelling", name)
        summary = getattr(entry, "summary", None) or getattr(entry, "description", None) or ""
        out.append((str(spelled), str(summary).strip().rstrip(".")))
    return out


def default_text(setting: SettingField) -> str | None:
    """The default as help and docs show it, or None when there is nothing to show."""
    field = setting.field
    if field.default_factory is not None or field.default is None:
        return None
    if isinstance(field.default, bool):
        return None
    return str(field.default)


def flag_help(setting: SettingField, *, short: bool = False) -> str:
    """The flag's help: the description (or ``Flag.help`` when ``short``), the registry's
    entries with their summaries, and the default."""
    flag = setting.flag
    text = (flag.help if short and flag.help else setting.field.description) or setting.name
    text = text.rstrip(".")
    entries = registry_entries(flag.registry) if flag.registry else []
    if any(summary for _, summary in entries):  # names alone: the choices show them
        listed = ", ".join(f"{n} ({s})" if s else n for n, s in entries)
        text += f"; known: {listed}"
    default = default_text(setting)
    if default is not None:
        text += f" (default {default})"
    return text
