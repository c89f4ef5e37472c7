"""The bodies an answer is rendered into, whatever the transport.

- native (``POST /tools/...``, MCP ``structuredContent``): ``{"ok", "body", "error",
  "provenance"}`` plus ``code`` on errors (and ``violations`` / ``suggestions`` on bad input);
- virtual (StableToolBench's ``POST /virtual``, the text of an MCP tool result):
  ``{"error": str, "response": ...}``.

Pure; imports the service's ``Outcome`` and ``Rejected`` only.
"""

from __future__ import annotations

import json
from typing import Any

from mock_tools.service import Outcome, Rejected

__all__ = ["dumps", "native_payload", "reject_payload", "virtual_payload"]


def dumps(payload: Any) -> bytes:
    """Compact JSON bytes (UTF-8, no ASCII escaping), the form every transport sends."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str).encode()


def native_payload(o: Outcome) -> dict[str, Any]:
    r = o.response
    out = {"ok": r.ok, "body": r.body, "error": r.error, "provenance": o.provenance}
    if o.code is not None:
        out["code"] = o.code
    if o.origin is not None:
        out["origin"] = o.origin
    if o.infra:
        out["infra"] = True
    if o.state is not None:
        out["state"] = o.state
        out["changes"] = o.changes or []
    return out


def virtual_payload(o: Outcome) -> dict[str, Any]:
    r = o.response
    return {"error": "" if r.ok else r.error, "response": r.body if r.body is not None else ""}


def reject_payload(e: Rejected, virtual: bool) -> dict[str, Any]:
    """The body of a rejected call (unknown API, invalid arguments, bad request). A rejection
    answered with 200 on ``/virtual`` (``tool_input`` that is not JSON) has StableToolBench's
    body: the error and an empty response, nothing else."""
    if virtual and e.status == 200:
        return {"error": e.message, "response": ""}
    if virtual:
        return {"error": e.message, "response": "", "code": e.code, **e.extra}
    payload: dict[str, Any] = {"ok": False, "body": None, "error": e.message, "code": e.code}
    payload.update(provenance=e.provenance, **e.extra)
    return payload
