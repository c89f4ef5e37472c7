"""What each call of an episode in a world did to the state, as the episode page shows it.

A world call's observation records the hash of the state after it (``state``) and the records it
changed (``changes``: collection, id, the record before and after; ``None`` before a record
existed or after it was deleted). ``world_calls`` turns them into compact diffs: per record
whether it was created, deleted or changed, and the leaf fields that differ (``balance``,
``items.0.sku``: ``mock_tools.worlds.paths.flatten``) with their value before and after as short
JSON text (None: absent). Calls that never reached the world (a fault, an unknown tool) have no
state and are left out. May import ``agents`` records and ``mock_tools.worlds``.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from agents.trajectory import Trajectory
from mock_tools.worlds.paths import flatten

__all__ = ["FieldChange", "RecordChange", "WorldCall", "record_change", "world_calls"]

VALUE_CHARS = 200
"""The longest value text a diff shows (longer ones are cut with an ellipsis)."""


class FieldChange(BaseModel):
    path: str = Field(description="The field within the record ('' for a record that is a leaf).")
    before: str | None = Field(description="Its value before, as JSON text (None: absent).")
    after: str | None = Field(description="Its value after, as JSON text (None: absent).")


class RecordChange(BaseModel):
    collection: str
    id: str
    change: Literal["created", "deleted", "changed"]
    fields: list[FieldChange] = Field(default_factory=list)


class WorldCall(BaseModel):
    """One call that reached the world: where it is, the state after it, what it changed."""

    node: int
    call: int = Field(description="The call's place among its node's calls, from 0.")
    state: str = Field(description="The hash of the state after the call.")
    changes: list[RecordChange] = Field(default_factory=list)


_ABSENT: Any = object()
"""A field a record does not have."""


def _text(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def _leaves(record: Any) -> dict[str, Any]:
    return {path.removeprefix("."): v for path, v in flatten(record, "").items()}


def record_change(change: dict[str, Any]) -> RecordChange:
    """One entry of an observation's ``changes`` as a compact diff (see the module doc)."""
    before, after = change.get("before"), change.get("after")
    kind: Literal["created", "deleted", "changed"] = (
        "created" if before is None else "deleted" if after is None else "changed"
    )
    old = {} if before is None else _leaves(before)
    new = {} if after is None else _leaves(after)
    fields = []
    for path in sorted({*old, *new}):
        was, now = old.get(path, _ABSENT), new.get(path, _ABSENT)
        if was is not _ABSENT and now is not _ABSENT and _same(was, now):
            continue
        if _filled(path, was, new) or _filled(path, now, old):
            continue
        fields.append(
            FieldChange(
                path=path,
                before=None if was is _ABSENT else _text(was),
                after=None if now is _ABSENT else _text(now),
            )
        )
    return RecordChange(
        collection=str(change.get("collection", "")),
        id=str(change.get("id", "")),
        change=kind,
        fields=fields,
    )


def _filled(path: str, value: Any, other: dict[str, Any]) -> bool:
    """An empty object or list (a leaf of its own) that the other side fills: its fields are
    the change (``items: {}`` becoming ``items.a: 1`` shows as ``items.a``)."""
    if value in ({}, []) and type(value) in (dict, list):
        inside = f"{path}." if path else ""
        return any(p.startswith(inside) and p != path for p in other)
    return False


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON texts (``1`` and ``1.0`` differ, as they do in the state's hash)."""
    return type(a) is type(b) and a == b


def world_calls(traj: Trajectory) -> list[WorldCall]:
    """Every call of the episode that reached the world, in node order (see the module doc)."""
    out = []
    for node in traj.nodes:
        for i, call in enumerate(node.calls):
            obs = call.observation
            if obs is None or obs.state is None:
                continue
            changes = [record_change(c) for c in obs.changes or []]
            out.append(WorldCall(node=node.id, call=i, state=obs.state, changes=changes))
    return out
