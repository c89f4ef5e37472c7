"""Reading older run configs into ``RunConfig``'s sections (its ``_upgrade`` validator).

Manifests written before the sections existed hold flat fields (``"max_depth": 3``,
``"tools_url": ...``); older ones still hold agent options as top-level fields (``width``) and a
``fork`` field. ``upgrade_flat`` moves each flat key to its setting: the renamed ones of
``RENAMED``, every other one to the field of the same name in the one section that has it
(``max_depth`` -> ``budget.max_depth``). A section given as a plain value (``agent: dfsdt``) is
its ``name``. Data already in sections passes through unchanged, so the same validator reads old
and new manifests, config files and keyword arguments. Imports only ``sandbox.store.defaults``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from sandbox.store.defaults import DEFAULT_MODEL

__all__ = ["RENAMED", "upgrade_flat"]

LEGACY_AGENT_OPTIONS = ("width", "depth_unit", "max_observation_chars")
"""Top-level fields of the oldest manifests that are agent options now."""

RENAMED = {
    "agent": "agent.name",
    "agent_options": "agent.options",
    "model": "model.name",
    "model_options": "model.options",
    "model_cache": "model.cache",
    "executor": "executor.name",
    "tools_url": "tools.url",
    "tools_replay": "tools.replay",
}
"""Flat keys whose setting has another name in its section."""


def upgrade_flat(data: Any, model: type[BaseModel]) -> Any:
    """``data`` with every flat key of an older layout moved into its section."""
    if not isinstance(data, dict):
        return data
    data = _fork(_lift_agent_options(dict(data)))
    out: dict[str, Any] = {}
    moved: dict[str, Any] = {}
    for key, value in data.items():
        path = None if _current(model, key, value) else _legacy_path(model, key)
        if path is None:
            out[key] = value  # the current layout (or unknown: validation says so)
        else:
            moved[path] = value
    for path, value in moved.items():
        head, name = path.split(".", 1)
        current = out.get(head)
        section = dict(current) if isinstance(current, (dict, BaseModel)) else {}
        if name in section and section[name] != value:
            raise ValueError(f"{path} is given twice, in its section and as a flat field")
        section[name] = value
        out[head] = section
    return out


def _current(model: type[BaseModel], key: str, value: Any) -> bool:
    """Whether ``key: value`` is in the current layout (a section holds a mapping)."""
    field = model.model_fields.get(key)
    if field is None:
        return False
    if _section(model, key) is None:
        return True
    return isinstance(value, (dict, BaseModel))


def _section(model: type[BaseModel], key: str) -> type[BaseModel] | None:
    annotation = model.model_fields[key].annotation
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _legacy_path(model: type[BaseModel], key: str) -> str | None:
    renamed = RENAMED.get(key)
    if renamed is not None:
        head = renamed.split(".", 1)[0]
        return renamed if head in model.model_fields and _section(model, head) else None
    owners = [
        head
        for head in model.model_fields
        if (section := _section(model, head)) is not None and key in section.model_fields
    ]
    return f"{owners[0]}.{key}" if len(owners) == 1 else None


def _lift_agent_options(data: dict[str, Any]) -> dict[str, Any]:
    options = dict(data.get("agent_options") or {})
    for key in LEGACY_AGENT_OPTIONS:
        if key in data:
            value = data.pop(key)
            if value is not None:
                options.setdefault(key, value)
    if options:
        data["agent_options"] = options
    return data


def _fork(data: dict[str, Any]) -> dict[str, Any]:
    fork = data.pop("fork", None)
    if isinstance(fork, dict):
        data["model_options"] = {**fork, "then": data.get("model", DEFAULT_MODEL)}
        data["model"] = "fork"
    return data
