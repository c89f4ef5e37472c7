"""The ``X-Sandbox-*`` HTTP headers of the mock tool server: what a client may send (scenario,
session, faults, recordings scope) and what every answer carries (provenance, occurrence; a
world's answer also the hash of its session's state after the call).
Imports nothing."""

from __future__ import annotations

__all__ = [
    "FAULTS_HEADER",
    "OCCURRENCE_HEADER",
    "PROVENANCE_HEADER",
    "RECORDINGS_HEADER",
    "SCENARIO_HEADER",
    "SESSION_HEADER",
    "STATE_HEADER",
]

PROVENANCE_HEADER = "X-Sandbox-Provenance"
OCCURRENCE_HEADER = "X-Sandbox-Occurrence"
SCENARIO_HEADER = "X-Sandbox-Scenario"
SESSION_HEADER = "X-Sandbox-Session"
FAULTS_HEADER = "X-Sandbox-Faults"
RECORDINGS_HEADER = "X-Sandbox-Recordings"
STATE_HEADER = "X-Sandbox-State"
