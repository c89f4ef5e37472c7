"""Deterministic fault injection.

Whether a call meets a fault is a pure function of ``(seed, scenario, tool, api, canonical key,
occurrence)`` through SHA-256, never of a global call counter or of Python's salted ``hash()``:
two strategies that make the same call in the same scenario meet the same fault, and a retry (the
next occurrence) draws again. Exactly: the material is the compact JSON array
``[seed,scenario,tool,api,canonical_key,occurrence]`` (a missing scenario as ``""``, non-ASCII text
as itself), hashed as UTF-8; the first 8 bytes of the digest, big-endian, over 2**64 are the draw
in [0, 1); the call meets a fault when the draw is below the rate, and the kind is
``kinds[next 8 bytes, big-endian, modulo len(kinds)]``. An empty ``kinds`` injects nothing.

Settings come in three layers, the most specific winning: the app's default ``FaultConfig``, a
per-scenario config (a task's ``faults`` field or a registry given to ``create_app``), and a config
sent by the client in the ``X-Sandbox-Faults`` header (JSON of a ``FaultConfig``).
Pure; imports ``mock_tools.models`` and ``mock_tools.errors`` only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import ValidationError

from mock_tools.errors import MockToolsError
from mock_tools.models import FaultConfig, FaultKind

__all__ = ["FaultPlan", "FaultReply", "decide_fault", "fault_reply", "parse_fault_header"]

RETRY_AFTER_SECONDS = 1
_TWO_64 = float(2**64)


def decide_fault(
    config: FaultConfig | None,
    scenario: str | None,
    tool: str,
    api: str,
    canonical_key: str,
    occurrence: int,
) -> FaultKind | None:
    """The fault this call meets under ``config``, or None."""
    if config is None or config.rate <= 0.0 or not config.kinds:
        return None
    material = json.dumps(
        [config.seed, scenario or "", tool, api, canonical_key, occurrence],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    digest = hashlib.sha256(material.encode("utf-8")).digest()
    draw = int.from_bytes(digest[:8], "big") / _TWO_64
    if draw >= config.rate:
        return None
    return config.kinds[int.from_bytes(digest[8:16], "big") % len(config.kinds)]


def parse_fault_header(text: str) -> FaultConfig:
    """A ``FaultConfig`` from the JSON of an ``X-Sandbox-Faults`` header."""
    try:
        return FaultConfig.model_validate_json(text)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'value'}: {err['msg']}" for err in e.errors()
        )
        raise MockToolsError(f"invalid X-Sandbox-Faults header: {problems}") from e


@dataclass(frozen=True)
class FaultPlan:
    """The fault settings of an app: a default and per-scenario overrides."""

    default: FaultConfig | None = None
    scenarios: Mapping[str, FaultConfig] = field(default_factory=dict)

    def config_for(
        self, scenario: str | None, override: FaultConfig | None = None
    ) -> FaultConfig | None:
        if override is not None:
            return override
        if scenario is not None and scenario in self.scenarios:
            return self.scenarios[scenario]
        return self.default


@dataclass(frozen=True)
class FaultReply:
    """How a fault shows on the wire. ``body`` None means "use the route's error envelope"."""

    status: int
    message: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None


def fault_reply(kind: FaultKind) -> FaultReply:
    """The HTTP answer for an injected fault; a timeout answers 504 at once, it never sleeps."""
    if kind == "http_500":
        return FaultReply(500, "injected fault: internal server error")
    if kind == "rate_limit_429":
        return FaultReply(
            429,
            "injected fault: rate limit exceeded, retry later",
            {"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    if kind == "timeout":
        return FaultReply(504, "injected fault: the tool timed out")
    if kind == "malformed_body":
        return FaultReply(200, "injected fault: malformed body", body=b'{"ok": true, "body": {"da')
    return FaultReply(200, "injected fault: empty body", body=b"")
