"""Probe mode: teacher-forced questions about each reference step prefix, and their scores.

Beside ``sandbox.eval``: it asks a model questions through the run's tools
(``sandbox.tool_envs``) and scores the answers with the step-level metrics
(``sandbox.eval.steps``). One module per job:

- ``verdicts``: the gold review verdict of a tool response (A–E), by rule;
- ``questions``: the questions of a task (``build_probes``, ``ProbeItem``);
- ``oracle``: offline answers from the task's reference (``ProbeOracle``, ``oracle_models``);
- ``scoring``: an answer's scores and the report (``score_answer``, ``summarise_probe``);
- ``runner``: asking and scoring every question (``run_probe``), the whole job on a suite and a
  named model (``probe_suite``), who answers by the model kind (``probe_models``).

Only ``sandbox.commands`` imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.lazy import lazy_package

if TYPE_CHECKING:
    from sandbox.probe.oracle import ProbeOracle, oracle_models
    from sandbox.probe.questions import ProbeItem, build_probes
    from sandbox.probe.runner import probe_models, probe_suite, run_probe
    from sandbox.probe.scoring import (
        PROBE_DIMENSIONS,
        ProbeReport,
        ProbeResult,
        score_answer,
        summarise_probe,
    )
    from sandbox.probe.verdicts import VERDICTS, verdict_of, verdict_of_observation

_EXPORTS: dict[str, str] = {
    "PROBE_DIMENSIONS": "sandbox.probe.scoring",
    "ProbeItem": "sandbox.probe.questions",
    "ProbeOracle": "sandbox.probe.oracle",
    "ProbeReport": "sandbox.probe.scoring",
    "ProbeResult": "sandbox.probe.scoring",
    "VERDICTS": "sandbox.probe.verdicts",
    "build_probes": "sandbox.probe.questions",
    "oracle_models": "sandbox.probe.oracle",
    "probe_models": "sandbox.probe.runner",
    "probe_suite": "sandbox.probe.runner",
    "run_probe": "sandbox.probe.runner",
    "score_answer": "sandbox.probe.scoring",
    "summarise_probe": "sandbox.probe.scoring",
    "verdict_of": "sandbox.probe.verdicts",
    "verdict_of_observation": "sandbox.probe.verdicts",
}

__all__ = [
    "PROBE_DIMENSIONS",
    "ProbeItem",
    "ProbeOracle",
    "ProbeReport",
    "ProbeResult",
    "VERDICTS",
    "build_probes",
    "oracle_models",
    "probe_models",
    "probe_suite",
    "run_probe",
    "score_answer",
    "summarise_probe",
    "verdict_of",
    "verdict_of_observation",
]

lazy_package(__name__, _EXPORTS)
