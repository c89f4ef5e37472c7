"""The calls observed in imported episodes -> recordings, each episode keeping its own responses.

Calls are grouped by ``(tool, api, canonical arguments)``; within an episode the responses of one
call form a sequence in execution order (the nth identical call gets the nth response, so a call
that failed and then succeeded replays that way). Across episodes:

- sequences that agree (one is a prefix of another) make one unscoped recording set, which every
  episode (and any new run on the suite) is served;
- an episode whose sequence disagrees (ToolBench's live APIs answered the same call differently
  on another day) gets its own recordings, scoped to that episode (``Recording.scope`` =
  ``<run scope>/<task id>``), so each episode replays with the responses it saw.
May import ``mock_tools`` and ``sandbox.interop.toolbench_tree``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mock_tools.canonical import canonical_key
from mock_tools.models import Provenance, Recording, Response
from sandbox.interop.toolbench_tree import ObservedCall

__all__ = ["EpisodeCalls", "merge_recordings"]


@dataclass(frozen=True)
class EpisodeCalls:
    """The calls one episode observed: its recordings scope and where it came from."""

    scope: str
    source: str
    calls: list[ObservedCall]


def _response_key(r: Response) -> str:
    return json.dumps([r.ok, r.error, r.body], sort_keys=True, ensure_ascii=False)


def _consistent(a: list[ObservedCall], b: list[ObservedCall]) -> bool:
    return all(
        _response_key(x.response) == _response_key(y.response) for x, y in zip(a, b, strict=False)
    )


def merge_recordings(
    episodes: list[EpisodeCalls],
    schemas: dict[tuple[str, str], dict[str, Any]],
    recorded_at: datetime,
) -> tuple[list[Recording], int]:
    """Recordings of every observed call; returns them and how many episodes needed scoped ones
    for some call."""
    by_key: dict[tuple[str, str, str], list[tuple[EpisodeCalls, list[ObservedCall]]]] = {}
    for ep in episodes:
        per_call: dict[tuple[str, str, str], list[ObservedCall]] = {}
        for call in ep.calls:
            schema = schemas.get((call.tool, call.api))
            key = (call.tool, call.api, canonical_key(call.args, schema))
            per_call.setdefault(key, []).append(call)
        for key, calls in per_call.items():
            by_key.setdefault(key, []).append((ep, calls))
    out: list[Recording] = []
    scoped: set[str] = set()
    for sequences in by_key.values():
        shared_source, shared = sequences[0][0].source, sequences[0][1]
        own: list[tuple[EpisodeCalls, list[ObservedCall]]] = []
        for ep, calls in sequences[1:]:
            if not _consistent(shared, calls):
                own.append((ep, calls))
            elif len(calls) > len(shared):
                shared_source, shared = ep.source, calls
        out.extend(_recordings(shared, shared_source, None, recorded_at))
        for ep, calls in own:
            scoped.add(ep.scope)
            out.extend(_recordings(calls, ep.source, ep.scope, recorded_at))
    return out, len(scoped)


def _recordings(
    calls: list[ObservedCall], source: str, scope: str | None, recorded_at: datetime
) -> list[Recording]:
    """One recording when every response is the same, else one per occurrence."""
    same = len({_response_key(c.response) for c in calls}) == 1
    chosen = calls[:1] if same else calls
    return [
        Recording(
            tool=call.tool,
            api=call.api,
            args=call.args,
            occurrence=None if same else n,
            response=call.response,
            scope=scope,
            provenance=Provenance(
                source="toolbench", recorded_at=recorded_at, note=_note(call, source)
            ),
        )
        for n, call in enumerate(chosen, 1)
    ]


def _note(call: ObservedCall, source: str) -> str:
    note = f"ToolBench answer {source}, tree node {call.node}"
    if call.truncated:
        note += "; observation cut by ToolBench at 1024 characters: body is its visible part"
    return note
