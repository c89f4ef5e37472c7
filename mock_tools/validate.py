"""Suite validation: everything a run relies on, checked before the run.

A suite passes when it loads (the models check fields and checks' shapes), its API schemas are
valid JSON Schema, every recording names an existing API and validates against its schema, no two
recordings claim the same call and occurrence, every task offers at least one API and its offered
APIs exist (loading rejects a duplicate task id), and every reference call is offered and
validates. A reference call without a recording is a *warning*: the suite runs (the call is a miss
under the ``error`` policy, what ``simulate`` and ``upstream`` exist to fill in), and
``validate --strict`` fails on warnings too; in a suite with writes a reference call is looked
up after the reference's own write calls before it (``mock_tools.history``). A call
recorded from a real API (provenance ``toolbench``, ``stabletoolbench``, ``upstream``) may hold
arguments its schema rejects: the API answered them, and the service serves such a recording as
recorded. A task file (``load_task_file``: tasks for a run on an MCP server, no catalog) is
checked by loading it.

``load_valid_suite`` is the one loader of every command that uses a suite (``sandbox run``,
``compare``, ``probe``, ``serve``): the suite as ``load_suite`` reads it, then the checks above,
so a suite ``validate`` rejects never runs. A suite found valid is remembered by its
fingerprint (``<suite>/.cache/validated``, with a digest of the checking code), so a large
suite is checked once, not at every run. Each error is one line of at most ``ERROR_CHARS``.
Imports the suite, store, history and canonical modules; never the service or HTTP.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from jsonschema import SchemaError
from jsonschema.validators import validator_for
from pydantic import BaseModel

from mock_tools.canonical import canonical_args, dumps_canonical
from mock_tools.errors import MockToolsError, SuiteError
from mock_tools.history import extend, write_apis
from mock_tools.names import RAW_ARGUMENTS, function_name
from mock_tools.store import RecordingStore
from mock_tools.suite import Suite, load_suite

__all__ = [
    "ERROR_CHARS",
    "SuiteInvalid",
    "SuiteReport",
    "find_suites",
    "load_valid_suite",
    "validate_loaded",
    "validate_suite",
    "validate_suites",
]

ERROR_CHARS = 500
"""The longest error line a report holds (an argument list can be long); the rest is cut."""

VALIDATED_FILE = "validated"
"""The marker in ``<suite>/.cache/`` of a suite found valid: the checking code's digest and the
suite's fingerprint."""

RECORDED_FROM_APIS = frozenset({"toolbench", "stabletoolbench", "upstream"})
"""Provenance sources of responses a real API gave (to whatever arguments it was sent)."""


class SuiteInvalid(SuiteError):
    """A suite that loads but fails ``validate``'s checks; the message is its first error."""


class SuiteReport(BaseModel):
    """What ``validate`` found in one suite; ``errors`` empty means valid. The counts are None
    when the suite did not load (``loaded`` false): its one error says why."""

    suite: str
    path: str
    loaded: bool = True
    tools: int | None = None
    apis: int | None = None
    tasks: int | None = None
    recordings: int | None = None
    errors: list[str] = []
    warnings: list[str] = []
    """What a run can live with: a reference call with no recording (a miss under the ``error``
    policy; what ``simulate`` and ``upstream`` fill in)."""

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> str:
        """The report's first line, as ``python -m mock_tools validate`` prints it."""
        status = "ok" if self.ok else f"{len(self.errors)} error(s)"
        if self.warnings:
            status += f", {len(self.warnings)} warning(s)"
        if not self.loaded:
            return f"{self.suite} ({self.path}): does not load: {status}"
        return (
            f"{self.suite} ({self.path}): {self.tools} tools, {self.apis} apis, "
            f"{self.tasks} tasks, {self.recordings} recordings: {status}"
        )


def load_valid_suite(path: str | Path, *, cache_dir: str | Path | None = None) -> Suite:
    """The suite at ``path`` if ``validate`` accepts it: ``SuiteError`` naming file and line
    when it does not load, ``SuiteInvalid`` with its first error (and how many more) when it
    fails a check. What every command that uses a suite loads it with."""
    suite = load_suite(path, cache_dir=cache_dir)
    if suite.task_file or _known_valid(suite):
        return suite
    errors = validate_loaded(suite).errors
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise SuiteInvalid(
            f"{path}: the suite fails validation: {errors[0]}{more}; "
            f"`python -m mock_tools validate {path}` lists every error"
        )
    _remember_valid(suite)
    return suite


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
        suite = load_suite(path)
    except SuiteError as e:
        return SuiteReport(
            suite=Path(path).name, path=str(path), loaded=False, errors=[_clip(str(e))]
        )
    report = validate_loaded(suite)  # a recording is fully checked when read
    if report.ok and not suite.task_file:
        _remember_valid(suite)
    return report


def validate_loaded(suite: Suite) -> SuiteReport:
    report = SuiteReport(
        suite=suite.name,
        path=str(suite.path or ""),
        tools=len(suite.tools),
        apis=len(suite.apis),
        tasks=len(suite.tasks),
    )
    errors: list[str] = []
    warnings: list[str] = []
    try:
        if not suite.task_file:
            _check(suite, errors, warnings)
    except SuiteError as e:  # a recording line that breaks the model, read only now
        errors.append(str(e))
    report.recordings = len(suite.recordings)
    report.errors = [_clip(e) for e in errors]
    report.warnings = [_clip(w) for w in warnings]
    return report


def _clip(text: str) -> str:
    text = " ".join(text.split("\n"))
    if len(text) <= ERROR_CHARS:
        return text
    return f"{text[: ERROR_CHARS - 40]}... ({len(text) - ERROR_CHARS + 40:,} more characters)"


def _check(suite: Suite, errors: list[str], warnings: list[str]) -> None:
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

    writes = write_apis(suite.meta, suite.apis)
    for task in suite.tasks:
        _check_task(task, suite, validators, store, writes, errors, warnings)
    _check_world(suite, errors)


def _check_world(suite: Suite, errors: list[str]) -> None:
    """A world's code keeps the determinism rules (``mock_tools.worlds.lint``), and every
    task's gold actions succeed, reach the same state twice and pass the task's own checks."""
    world = suite.world
    if world is None:
        for task in suite.tasks:
            if task.world is not None:
                errors.append(f"tasks: {task.id}: has world: settings, but the suite has no world")
        return
    from mock_tools.worlds.errors import WorldDefinitionError
    from mock_tools.worlds.lint import lint_file
    from mock_tools.worlds.verdict import gold_actions, judge, replay

    file = Path(world.source.rsplit(":", 1)[0])
    if suite.meta.world_adapter is None and file.is_file():  # an adapter's code is not ours
        errors.extend(f"world: {v}" for v in lint_file(file))
    for task in suite.tasks:
        where = f"tasks: {task.id}"
        try:
            actions = gold_actions(world, task)
            first, second = (replay(world, task, actions, 0) for _ in range(2))
            refused = [
                (a, e)
                for a, ok, e in zip(first.actions, first.ok, first.errors, strict=True)
                if not ok
            ]
            if refused:
                action, error = refused[0]
                errors.append(f"{where}: {action.label} fails: {error}")
                continue
            if first.final.hash != second.final.hash:
                errors.append(
                    f"{where}: its gold actions reach two different states when replayed twice "
                    f"({first.final.hash[:12]}, {second.final.hash[:12]}): the world's code is "
                    "not deterministic"
                )
                continue
            asserted = task.world.checks.env_assertions if task.world is not None else []
            if any(world.env_assertion_problem(a) for a in asserted):
                continue  # the task's checks list it (_check_env_assertions)
            for failure in judge(world, task, first, 0).failures():
                errors.append(f"{where}: the gold actions fail the task's own check: {failure}")
        except WorldDefinitionError as e:
            errors.append(f"{where}: {e}")


def _checks_digest() -> str:
    """A digest of the code that decides validity (this module, the suite's models, its
    loader, YAML reading): a marker written by other code is not trusted."""
    h = hashlib.sha256()
    here = Path(__file__)
    names = ("models.py", "suite.py", "yaml_text.py", "worlds/lint.py", "worlds/verdict.py")
    for name in (here.name, *names):
        h.update((here.parent / name).read_bytes())
    return h.hexdigest()[:32]


def _marker(suite: Suite) -> str:
    return f"{_checks_digest()} {suite.fingerprint}\n"


def _known_valid(suite: Suite) -> bool:
    if suite.path is None or not suite.fingerprint:
        return False
    try:
        return (suite.path / ".cache" / VALIDATED_FILE).read_text() == _marker(suite)
    except (OSError, UnicodeDecodeError):
        return False


def _remember_valid(suite: Suite) -> None:
    """Write the marker beside the suite's index (atomically); nowhere if it cannot be."""
    if suite.path is None or not suite.fingerprint:
        return
    folder = suite.path / ".cache"
    try:
        folder.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".validated-", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(_marker(suite))
        os.replace(tmp, folder / VALIDATED_FILE)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _validators(suite: Suite, errors: list[str]) -> dict[tuple[str, str], Any]:
    out: dict[tuple[str, str], Any] = {}
    for (tool, api), spec in suite.apis.items():
        cls = validator_for(spec.parameters)
        try:
            cls.check_schema(spec.parameters)
        except SchemaError as e:
            errors.append(f"tools: {tool}/{api}: invalid parameters schema: {e.message}")
            continue
        if spec.parameters.get(RAW_ARGUMENTS) is True:
            continue  # the tool takes its arguments as given (BFCL's gold calls are as BFCL wrote)
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


def _check_task(
    task: Any,
    suite: Suite,
    validators: dict[tuple[str, str], Any],
    store: RecordingStore,
    writes: frozenset[tuple[str, str]],
    errors: list[str],
    warnings: list[str],
) -> None:
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
    if task.user is not None:
        _check_user(task, suite, offered, where, errors)
    if task.world is not None and suite.world is not None:
        _check_env_assertions(task.world.checks.env_assertions, suite.world, where, errors)
    seen: Counter[tuple[str, str, str, str | None]] = Counter()
    history: str | None = None
    written = 0
    for n, step in enumerate(task.reference.steps, 1):
        at = f"{where}: reference step {n} {step.tool}/{step.api}"
        if step.by == "user":  # the user's own tool (dual control): the world's, not offered
            world = suite.world
            player = task.user.persona if task.user is not None else None
            if world is None or step.tool != world.name or step.api not in world.user_tools:
                errors.append(f"{at}: a step by the user, but the world has no such user tool")
            elif player is None:
                who = "a script" if task.user is not None else "no conversation's"
                errors.append(
                    f"{at}: a step by the user, but the task's user is {who}, which makes no "
                    "calls (give it a persona)"
                )
            else:
                errors.extend(_user_call_errors(at, world, step.api, step.args))
            continue
        if (step.tool, step.api) not in suite.apis:
            errors.append(f"{at}: no such API in the catalog")
            continue
        if (step.tool, step.api) not in offered:
            errors.append(f"{at}: the API is not offered to the agent")
        key = dumps_canonical(
            canonical_args(step.args, suite.apis[(step.tool, step.api)].parameters)
        )
        call = (step.tool, step.api, key, history)
        seen[call] += 1
        violations = _violations(at, suite, validators, step.tool, step.api, step.args)
        if violations and not _recorded_from_api(suite, step.tool, step.api, key):
            errors.extend(violations)
        if suite.world is not None and step.tool == suite.world.name:
            continue  # the world answers it
        if store.get(step.tool, step.api, key, seen[call], history=history) is None:
            after = f" (after {written} write call(s) of the reference)" if written else ""
            warnings.append(f"{at}: no recording for arguments {key}{after}")
        if (step.tool, step.api) in writes:
            history = extend(history, step.tool, step.api, key)
            written += 1


def _check_user(
    task: Any, suite: Suite, offered: set[tuple[str, str]], where: str, errors: list[str]
) -> None:
    """A conversation's user: the functions it hides and reveals are offered to the task, and
    its gold steps belong to turns the conversation has."""
    names = set()
    for tool, api in offered:
        spec = suite.apis.get((tool, api))
        if spec is not None:
            names.add(spec.function or function_name(tool, api))
    user = task.user
    if user.persona is not None and user.persona.act:
        for n, act in enumerate(user.persona.act, 1):
            at = f"{where}: user act {n} {act.api}"
            if suite.world is None:
                errors.append(f"{at}: the suite has no world, so the user has no tools")
            else:
                errors.extend(_user_call_errors(at, suite.world, act.api, act.args))
    for name in user.hidden:
        if name not in names:
            errors.append(f"{where}: user hides {name!r}, which the task does not offer")
    for i, turn in enumerate(user.script or [], 1):
        for name in turn.reveal:
            if name not in names:
                errors.append(
                    f"{where}: user script turn {i} reveals {name!r}, which the task does not offer"
                )
    if user.script is not None:
        last = len(user.script)
        for n, step in enumerate(task.reference.steps, 1):
            if step.turn > last:
                errors.append(
                    f"{where}: reference step {n} belongs to turn {step.turn}, but the script has "
                    f"{last} answer(s) (turns 0-{last})"
                )


def _user_call_errors(at: str, world: Any, api: str, args: dict[str, Any]) -> list[str]:
    """A call of the user's own tool (a gold step by the user, a persona's act): a tool of the
    user's, with arguments its schema takes (the user's route refuses others, 422)."""
    tool = world.user_tools.get(api)
    if tool is None:
        return [f"{at}: the world has no such user tool"]
    return _schema_errors(at, tool.parameters, args)


def _schema_errors(at: str, schema: dict[str, Any], args: dict[str, Any]) -> list[str]:
    canon = canonical_args(args, schema)
    found = sorted(
        validator_for(schema)(schema).iter_errors(canon), key=lambda e: list(map(str, e.path))
    )
    return [f"{at}: arguments {'/'.join(map(str, e.path)) or '(root)'}: {e.message}" for e in found]


def _check_env_assertions(assertions: list[Any], world: Any, where: str, errors: list[str]) -> None:
    """Each env assertion names a tool of its side, with arguments the tool takes (a τ² world
    runs τ²'s own and says nothing here)."""
    for n, a in enumerate(assertions, 1):
        at = f"{where}: env assertion {n} {a.call}"
        problem = world.env_assertion_problem(a)
        tool = world.find_tool(a.call)
        if problem is not None:
            errors.append(f"{at}: {problem}")
        elif tool is not None:
            errors.extend(_schema_errors(at, tool.parameters, a.args))


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
