"""Suite validation: everything a run relies on, checked before the run.

A suite passes when it loads (the models check fields and checks' shapes), its API schemas are
valid JSON Schema, every recording names an existing API and validates against its schema, no two
recordings claim the same call and occurrence, every task's offered APIs exist (loading rejects a
duplicate task id), and every reference call is offered, validates and has a recording. A call
recorded from a real API (provenance ``toolbench``, ``stabletoolbench``, ``upstream``) may hold
arguments its schema rejects: the API answered them, and the service serves such a recording as
recorded.
Imports the suite, store and canonical modules; never the service or HTTP.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from jsonschema import SchemaError
from jsonschema.validators import validator_for
from pydantic import BaseModel

from mock_tools.canonical import canonical_args, dumps_canonical
from mock_tools.errors import MockToolsError, SuiteError
from mock_tools.store import RecordingStore
from mock_tools.suite import Suite, load_suite

__all__ = ["SuiteReport", "find_suites", "validate_loaded", "validate_suite", "validate_suites"]

RECORDED_FROM_APIS = frozenset({"toolbench", "stabletoolbench", "upstream"})
"""Provenance sources of responses a real API gave (to whatever arguments it was sent)."""


class SuiteReport(BaseModel):
    """What ``validate`` found in one suite; ``errors`` empty means valid."""

    suite: str
    path: str
    tools: int = 0
    apis: int = 0
    tasks: int = 0
    recordings: int = 0
    errors: list[str] = []

    @property
    def ok(self) -> bool:
        return not self.errors


def find_suites(root: str | Path = "scenarios") -> list[Path]:
    """Every folder directly under ``root`` that holds a ``suite.yaml``, sorted."""
    base = Path(root)
    if not base.is_dir():
        raise MockToolsError(f"{base}: no such folder (expected suites under it)")
    return sorted(p for p in base.iterdir() if (p / "suite.yaml").is_file())


def validate_suites(paths: Iterable[str | Path]) -> list[SuiteReport]:
    return [validate_suite(p) for p in paths]


def validate_suite(path: str | Path) -> SuiteReport:
    """Load and check one suite folder; loading errors become the report's only error."""
    try:
        return validate_loaded(load_suite(path))  # a recording is fully checked when read
    except SuiteError as e:
        return SuiteReport(suite=Path(path).name, path=str(path), errors=[str(e)])


def validate_loaded(suite: Suite) -> SuiteReport:
    errors: list[str] = []
    validators = _validators(suite, errors)
    store = RecordingStore.from_suite(suite)
    for key in store.duplicates:
        tool, api, args, occ = key
        which = "every occurrence" if occ is None else f"occurrence {occ}"
        errors.append(f"recordings: {tool}/{api} {args} ({which}) is recorded more than once")
    for i, rec in enumerate(suite.recordings, 1):
        where = f"recordings: #{i} {rec.tool}/{rec.api}"
        if (rec.tool, rec.api) not in suite.apis:
            errors.append(f"{where}: no such API in the catalog")
            continue
        if rec.provenance.source not in RECORDED_FROM_APIS:
            errors.extend(_violations(where, suite, validators, rec.tool, rec.api, rec.args))

    for task in suite.tasks:
        errors.extend(_task_errors(task, suite, validators, store))
    return SuiteReport(
        suite=suite.name,
        path=str(suite.path or ""),
        tools=len(suite.tools),
        apis=len(suite.apis),
        tasks=len(suite.tasks),
        recordings=len(suite.recordings),
        errors=errors,
    )


def _validators(suite: Suite, errors: list[str]) -> dict[tuple[str, str], Any]:
    out: dict[tuple[str, str], Any] = {}
    for (tool, api), spec in suite.apis.items():
        cls = validator_for(spec.parameters)
        try:
            cls.check_schema(spec.parameters)
        except SchemaError as e:
            errors.append(f"tools: {tool}/{api}: invalid parameters schema: {e.message}")
            continue
        out[(tool, api)] = cls(spec.parameters)
    return out


def _violations(
    where: str,
    suite: Suite,
    validators: dict[tuple[str, str], Any],
    tool: str,
    api: str,
    args: dict[str, Any],
) -> list[str]:
    validator = validators.get((tool, api))
    if validator is None:
        return []
    canon = canonical_args(args, suite.apis[(tool, api)].parameters)
    return [
        f"{where}: arguments {'/'.join(map(str, e.path)) or '(root)'}: {e.message}"
        for e in sorted(validator.iter_errors(canon), key=lambda e: list(map(str, e.path)))
    ]


def _task_errors(
    task: Any, suite: Suite, validators: dict[tuple[str, str], Any], store: RecordingStore
) -> list[str]:
    errors: list[str] = []
    where = f"tasks: {task.id}"
    offered = {(ref.tool, ref.api) for ref in task.tools}
    if not offered:
        errors.append(f"{where}: offers no APIs (tools is empty)")
    for tool, api in sorted(offered):
        if (tool, api) not in suite.apis:
            errors.append(f"{where}: offers {tool}/{api}, which is not in the catalog")
    for tool, api in task.reference.apis():
        if (tool, api) not in suite.apis:
            errors.append(f"{where}: relevant API {tool}/{api} is not in the catalog")
    seen: Counter[tuple[str, str, str]] = Counter()
    for n, step in enumerate(task.reference.steps, 1):
        at = f"{where}: reference step {n} {step.tool}/{step.api}"
        if (step.tool, step.api) not in suite.apis:
            errors.append(f"{at}: no such API in the catalog")
            continue
        if (step.tool, step.api) not in offered:
            errors.append(f"{at}: the API is not offered to the agent")
        key = dumps_canonical(
            canonical_args(step.args, suite.apis[(step.tool, step.api)].parameters)
        )
        seen[(step.tool, step.api, key)] += 1
        violations = _violations(at, suite, validators, step.tool, step.api, step.args)
        if violations and not _recorded_from_api(suite, step.tool, step.api, key):
            errors.extend(violations)
        if store.get(step.tool, step.api, key, seen[(step.tool, step.api, key)]) is None:
            errors.append(f"{at}: no recording for arguments {key}")
    return errors


def _recorded_from_api(suite: Suite, tool: str, api: str, key: str) -> bool:
    """Whether a real API answered this call (its recording may then break the schema)."""
    schema = suite.apis[(tool, api)].parameters
    return any(
        r.tool == tool
        and r.api == api
        and r.provenance.source in RECORDED_FROM_APIS
        and dumps_canonical(canonical_args(r.args, schema)) == key
        for r in suite.recordings
    )
