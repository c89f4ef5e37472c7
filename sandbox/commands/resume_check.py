"""What ``sandbox run --resume`` does with the other settings given beside it.

A resume runs the run's own config. It takes the settings ``RESUMABLE_OVERRIDES`` names (a new
run cost budget, the concurrency, what the command draws and prints, and secrets given again);
any other setting given (a flag, a ``--config`` file's key, ``-C``) must say what the run
already recorded: an equal value changes nothing and passes, a different one is refused in one
line naming the flag and both values. Values are compared as the run uses them: the agent's
resolved options, the episode budget with its defaults, the suite and output folders resolved.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from agents.budget import Budget
from agents.errors import AgentsError
from sandbox.commands.config_files import validate_settings
from sandbox.errors import ConfigError
from sandbox.store import RunConfig, RunStore
from sandbox.store.setting import setting_fields, value_at

__all__ = ["check_unchanged"]


def check_unchanged(store: RunStore, given: Mapping[str, Any], takes: Collection[str]) -> None:
    """``ConfigError`` for the first setting of ``given`` (dotted paths) not in ``takes`` whose
    value differs from the one ``store``'s run recorded."""
    recorded = store.manifest.config
    flags = {s.path: s.flag_name for s in setting_fields(RunConfig)}
    for path, value in given.items():
        if path in takes:
            continue
        data = recorded.model_dump(by_alias=True)
        _put(data, path, value)
        candidate = validate_settings(RunConfig, data)
        for flag, new, old in _differences(store, candidate, path, flags.get(path, path)):
            raise ConfigError(
                f"{flag} {_shown(new)} differs from run {store.manifest.run_id}'s {_shown(old)}: "
                "a resume runs with the run's own config (start a new run to change it)"
            )


def _differences(
    store: RunStore, candidate: RunConfig, path: str, flag: str
) -> list[tuple[str, Any, Any]]:
    """``(flag, given, recorded)`` for what ``candidate`` changes of the run at ``path``."""
    recorded = store.manifest.config
    if path == "agent.options":
        new, old = _params(candidate), _params(recorded)
        return [
            (f"--{k.replace('_', '-')}", new.get(k), old.get(k))
            for k in new
            if new[k] != old.get(k)
        ]
    if path in ("suite", "output.out"):  # where the run recorded it, or where it is now
        here = store.suite_path() if path == "suite" else store.path.parent
        given, old = Path(value_at(candidate, path)), value_at(recorded, path)
        same = given == Path(old) or given.resolve() in (Path(old).resolve(), here.resolve())
        return [] if same else [(flag, given, old)]
    new, old = _effective(candidate, path), _effective(recorded, path)
    return [] if new == old else [(flag, new, old)]


def _effective(config: RunConfig, path: str) -> Any:
    section, _, name = path.partition(".")
    if section == "budget" and name in Budget.model_fields:
        return getattr(config.budget_for(), name)  # with the preset's and the defaults
    return value_at(config, path)


def _params(config: RunConfig) -> dict[str, Any]:
    try:
        return dict(config.strategy().params)
    except AgentsError as e:
        raise ConfigError(str(e)) from e


def _put(data: dict[str, Any], path: str, value: Any) -> None:
    *sections, name = path.split(".")
    for section in sections:
        data = data.setdefault(section, {})
    current = data.get(name)
    data[name] = (
        {**current, **value} if isinstance(current, dict) and isinstance(value, dict) else value
    )


def _shown(value: Any) -> str:
    if isinstance(value, (str, Path)):
        return str(value)
    return json.dumps(value, default=str)
