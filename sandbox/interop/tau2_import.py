"""``sandbox import tau2 CHECKOUT --domain D --out DIR``: a τ²-bench domain as a world suite.

What the suite holds (the checkout stays the user's: its code runs from there, through
``mock_tools.worlds.tau2``):

- ``state/``: the domain's database (``db.json`` / ``db.toml``, and telecom's user database) as
  τ²'s own data model loads it, one file per collection;
- ``world.py``: the domain's world class (the checkout, the domain, the checkout's Python, the
  tools and user tools as τ² offers them, the policy: the agent's system prompt);
- ``tasks/tasks.yaml``: each τ² task as a conversation with a persona (τ²'s user scenario: the
  persona and reason for the call as the scenario, the known and unknown information, the task
  instructions) and its evaluation criteria: the database check when ``DB`` is in the task's
  reward basis (the gold actions replayed from the task's initial state, τ²'s rule),
  ``communicate_info`` when ``COMMUNICATE`` is (the user's ``communicate``), the gold actions as
  required actions when ``ACTION`` is (compared on their ``compare_args``), the environment
  assertions when ``ENV_ASSERTION`` is (``env_assertions``: τ²'s own ``run_env_assertion`` on the
  final state), the natural-language assertions when ``NL_ASSERTION`` is
  (``world.checks.nl_assertions``: a judge model decides them, ``sandbox eval --judge``), and
  the task's initial state as τ²'s ``set_state`` makes it. Tasks with NL assertions are counted
  in the summary (``nl_assertions``).

Dual control (telecom): a gold action whose requestor is the user is a reference step ``by:
user`` (the user makes it on its own tools); the persona's ``act`` lists them, and the
reference's reply before them asks for them (``ask_for_user_actions``), so the offline reference
agent and persona player play the gold conversation: the agent's steps up to the user's actions,
a reply asking for them, the user making them and saying what its phone shows, then the agent's
next steps.

A gold action that τ² itself cannot carry out (τ²'s evaluator logs it and goes on) is left out of
the task's gold actions and counted (``gold_errors``). A checkout without the domain's code or
data is a ``ConfigError`` naming what is missing, before anything is written.
Imports ``mock_tools`` and ``sandbox.errors``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mock_tools.conversation import Persona, TaskUser
from mock_tools.models import ApiRef, Reference, RefStep, SuiteMeta, Task
from mock_tools.worlds.errors import WorldDefinitionError
from mock_tools.worlds.state import State, StateError
from mock_tools.worlds.task import (
    ActionPattern,
    EnvAssertion,
    Required,
    TaskWorld,
    WorldChecks,
)
from mock_tools.worlds.tau2 import Tau2Worker, describe_digest, world_file
from sandbox.errors import ConfigError

__all__ = ["OPENER", "Tau2Import", "import_tau2", "missing_parts"]

OPENER = "Hi! I need some help."
"""The user's first message of every imported task (τ²'s user simulator writes its own)."""
DOMAIN_CODE = ("environment.py", "tools.py", "data_model.py")


@dataclass
class Tau2Import:
    """What an import read and wrote (printed as JSON)."""

    domain: str
    out: str
    tasks: int = 0
    tools: int = 0
    user_tools: int = 0
    records: int = 0
    gold_errors: list[str] = field(default_factory=list)
    nl_assertions: int = 0
    """Tasks with natural-language assertions in their reward basis (kept, for a judge model)."""
    env_assertions: int = 0
    """Tasks with environment assertions in their reward basis (judged by τ² only)."""
    initial_states: int = 0

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def missing_parts(checkout: Path, domain: str, tasks_file: Path) -> list[str]:
    """What the checkout lacks for ``domain`` (relative paths), empty when nothing."""
    code = checkout / "src" / "tau2" / "domains" / domain
    data = checkout / "data" / "tau2" / "domains" / domain
    missing = [str(code.relative_to(checkout) / f) for f in DOMAIN_CODE if not (code / f).is_file()]
    if not any((data / f).is_file() for f in ("db.json", "db.toml")):
        missing.append(str(data.relative_to(checkout) / "db.json"))
    if not tasks_file.is_file():
        missing.append(
            str(tasks_file.relative_to(checkout))
            if tasks_file.is_relative_to(checkout)
            else str(tasks_file)
        )
    return missing


def default_python(checkout: Path) -> Path:
    for candidate in (".venv/bin/python", "venv/bin/python"):
        if (checkout / candidate).is_file():
            return checkout / candidate
    return Path("python3")


def import_tau2(
    checkout: Path,
    domain: str,
    out: Path,
    *,
    python: Path | None = None,
    tasks_file: Path | None = None,
) -> Tau2Import:
    """Import ``domain`` of ``checkout`` into the suite folder ``out`` (see the module
    docstring). ``ConfigError`` for a checkout that lacks the domain or whose code fails."""
    if not re.fullmatch(r"[A-Za-z0-9_]+", domain):  # a package name under tau2.domains
        raise ConfigError(f"import tau2: --domain {domain!r} is not a domain's name (retail, ...)")
    checkout = checkout.resolve()
    if not checkout.is_dir():
        raise ConfigError(f"import tau2: no such checkout folder: {checkout}")
    tasks_path = tasks_file or checkout / "data" / "tau2" / "domains" / domain / "tasks.json"
    tasks_path = tasks_path.resolve()
    missing = missing_parts(checkout, domain, tasks_path)
    if missing:
        raise ConfigError(
            f"import tau2: {checkout} has no {domain} domain: missing {', '.join(missing)}"
        )
    interpreter = str(python or default_python(checkout))
    if "/" in interpreter:
        interpreter = os.path.abspath(interpreter)
    worker = Tau2Worker(interpreter, str(checkout), domain)
    try:
        return _import(worker, checkout, domain, out, interpreter, tasks_path)
    except WorldDefinitionError as e:
        raise ConfigError(f"import tau2: {e}") from None
    finally:
        worker.stop()


def _import(
    worker: Tau2Worker, checkout: Path, domain: str, out: Path, python: str, tasks_path: Path
) -> Tau2Import:
    found = worker.request({"op": "describe", "documents": True}, 600)
    docs: dict[str, dict[str, Any]] = found["documents"]
    try:
        base = State.from_documents(docs)
    except StateError as e:
        raise ConfigError(f"import tau2: {domain}'s database cannot be a state: {e}") from None
    if base.hash != found["state"]:
        raise ConfigError(
            f"import tau2: the worker and the sandbox hash {domain}'s database differently "
            f"({found['state'][:12]}, {base.hash[:12]})"
        )
    raw_tasks = worker.request({"op": "tasks", "file": str(tasks_path)}, 600)["tasks"]
    summary = Tau2Import(
        domain=domain,
        out=str(out),
        tools=len(found["tools"]),
        user_tools=len(found["user_tools"]),
        records=base.size,
    )
    world_name = domain.replace("-", "_")
    tasks = []
    for raw in raw_tasks:
        task = _task(worker, raw, world_name, found, base, summary)
        tasks.append(task)
    summary.tasks = len(tasks)
    _write(out, domain, world_name, checkout, python, found, docs, tasks, tasks_path)
    return summary


def _task(
    worker: Tau2Worker,
    raw: Mapping[str, Any],
    world: str,
    found: Mapping[str, Any],
    base: State,
    summary: Tau2Import,
) -> Task:
    tid = str(raw["id"])
    criteria = raw.get("evaluation_criteria") or {}
    basis = set(criteria.get("reward_basis") or [])
    if "NL_ASSERTION" in basis and criteria.get("nl_assertions"):
        summary.nl_assertions += 1
    if "ENV_ASSERTION" in basis and criteria.get("env_assertions"):
        summary.env_assertions += 1
    patch: dict[str, dict[str, Any]] = {}
    start = base.hash
    initial = raw.get("initial_state")
    if initial and any(initial.get(k) for k in initial):
        made = worker.request({"op": "initial", "initial_state": initial}, 600)
        start = made["state"]
        for collection, rid, record in made["changes"]:
            patch.setdefault(collection, {})[rid] = record
        if patch:
            summary.initial_states += 1
    steps: list[RefStep] = []
    replies: list[str] = []
    act: list[ActionPattern] = []
    asked: list[Mapping[str, Any]] = []  # the user's actions the next reply asks for
    state = start
    for i, action in enumerate(criteria.get("actions") or [], 1):
        answer = worker.request(
            {
                "op": "call",
                "state": state,
                "tool": action["name"],
                "args": action.get("arguments") or {},
                "requestor": action.get("requestor", "assistant"),
            },
            600,
        )
        if answer.get("unknown"):
            raise ConfigError(f"import tau2: task {tid}: the worker lost its state")
        if answer.get("error"):
            summary.gold_errors.append(f"{tid}: action {i} {action['name']}: {answer['content']}")
            continue
        state = answer.get("state", state)
        args = action.get("arguments") or {}
        if action.get("requestor") == "user":
            asked.append(action)
            act.append(ActionPattern(api=action["name"], args=args))
            step = RefStep(tool=world, api=action["name"], args=args, by="user")
            steps.append(step.model_copy(update={"turn": len(replies) + 1}))
            continue
        if asked:
            replies.append(ask_for_user_actions(asked))
            asked = []
        steps.append(RefStep(tool=world, api=action["name"], args=args, turn=len(replies)))
    if asked:
        replies.append(ask_for_user_actions(asked))
    env = [
        EnvAssertion(
            call=str(a["func_name"]),
            args=a.get("arguments") or {},
            side="user" if a.get("env_type") == "user" else "agent",
            value=a.get("assert_value", True),
            message=a.get("message"),
        )
        for a in (criteria.get("env_assertions") or [])
        if "ENV_ASSERTION" in basis
    ]
    communicate = [str(c) for c in criteria.get("communicate_info") or []]
    required = []
    if "ACTION" in basis:
        for action in criteria.get("actions") or []:
            args = action.get("arguments") or {}
            keys = action.get("compare_args")
            kept = args if keys is None else {k: args[k] for k in keys if k in args}
            required.append(ActionPattern(api=action["name"], args=kept))
    nl = [str(a) for a in criteria.get("nl_assertions") or []] if "NL_ASSERTION" in basis else []
    checks = WorldChecks(
        gold="DB" in basis,
        require=Required(actions=required),
        env_assertions=env,
        nl_assertions=nl,
        stops_judged=True,  # τ² grades an agent that stops as one the user let go
    )
    agent_tools = [ApiRef(tool=world, api=t["name"]) for t in found["tools"]]
    reply = "Thank you, it is done." + "".join(f" {c}." for c in communicate)
    return Task(
        id=tid,
        query=OPENER,
        tools=agent_tools,
        group=world,
        reference=Reference(steps=steps, answer=reply, replies=replies),
        user=TaskUser(
            persona=_persona(raw.get("user_scenario") or {}, act),
            communicate=communicate if "COMMUNICATE" in basis else [],
        ),
        world=TaskWorld(state=patch, checks=checks),
    )


def _said(value: Any) -> str:
    """A scenario field's text, or "" when it says nothing: τ² writes ``"."`` for no unknown
    information (retail tasks 37 and 106), which as an unknown fact made every sentence of the
    user a leak (a user failure)."""
    text = (value or "").strip() if isinstance(value, str) else ""
    return text if any(c.isalnum() for c in text) else ""


def ask_for_user_actions(actions: list[Mapping[str, Any]]) -> str:
    """The reference's reply asking the user for its gold actions on its own tools (dual
    control): each tool's name as words and each argument's value, which the offline
    persona player recognises (``agents.users.persona``)."""
    asks = []
    for a in actions:
        what = str(a["name"]).replace("_", " ")
        args = a.get("arguments") or {}
        if args:
            what += " (" + ", ".join(f"{k}: {v}" for k, v in args.items()) + ")"
        asks.append(what)
    return "Could you please do this on your device: " + "; then ".join(asks) + "?"


def _persona(scenario: Mapping[str, Any], act: list[ActionPattern] | None = None) -> Persona:
    """τ²'s user scenario as a persona: who the user is and why they call as the scenario,
    what they know and do not know, and their instructions; ``act``: the gold actions of the
    user's own tools, which the offline persona player makes when asked."""
    instructions = scenario.get("instructions") or ""
    persona = (scenario.get("persona") or "").strip()
    if isinstance(instructions, str):
        text = "\n\n".join(p for p in (persona, instructions.strip()) if p) or "A customer."
        return Persona(scenario=text, instructions=instructions.strip() or text, act=act or [])
    reason = _said(instructions.get("reason_for_call"))
    known = _said(instructions.get("known_info"))
    unknown = _said(instructions.get("unknown_info"))
    how = _said(instructions.get("task_instructions"))
    return Persona(
        scenario="\n\n".join(p for p in (persona, reason) if p) or "A customer.",
        known={"known_info": known} if known else {},
        unknown=[unknown] if unknown else [],
        instructions=how or "Answer the agent's questions.",
        act=act or [],
    )


def _write(
    out: Path,
    domain: str,
    world: str,
    checkout: Path,
    python: str,
    found: Mapping[str, Any],
    docs: Mapping[str, Mapping[str, Any]],
    tasks: list[Task],
    tasks_path: Path,
) -> None:
    (out / "state").mkdir(parents=True, exist_ok=True)
    (out / "tasks").mkdir(parents=True, exist_ok=True)
    meta = SuiteMeta(
        name=f"tau2-{domain}",
        description=f"τ²-bench's {domain} domain, run from the checkout {checkout}.",
        world=f"world.py:{world.capitalize()}",
    )
    (out / "suite.yaml").write_text(
        yaml.safe_dump(meta.model_dump(mode="json", exclude_defaults=True), sort_keys=False),
        encoding="utf-8",
    )
    fields = {
        "name": world,
        "checkout": str(checkout),
        "domain": domain,
        "python": python,
        "policy": found["policy"],
        "tasks_file": str(tasks_path),
        "base_state": found["state"],
        "digest": describe_digest(found["tools"], found["user_tools"], found["policy"]),
        "tools": found["tools"],
        "user_tools": found["user_tools"],
    }
    (out / "world.py").write_text(world_file(domain, world.capitalize(), fields), encoding="utf-8")
    for collection, records in docs.items():
        text = json.dumps(records, ensure_ascii=False, sort_keys=True, indent=1)
        (out / "state" / f"{collection}.json").write_text(text + "\n", encoding="utf-8")
    data = []
    for t in tasks:
        doc = t.model_dump(mode="json", exclude_defaults=True, by_alias=True)
        assert t.world is not None
        doc.setdefault("world", {}).setdefault("checks", {})["gold"] = t.world.checks.gold
        data.append(doc)
    (out / "tasks" / "tasks.yaml").write_text(
        json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
