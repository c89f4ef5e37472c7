"""``sandbox import bfcl``: BFCL's multi-turn entries as a suite whose world is BFCL's own API
classes, loaded from the user's copy of ``bfcl-eval`` at run time (nothing of BFCL is copied but
the entries themselves, which are the suite's tasks).

Each entry becomes a task named by its BFCL id (``multi_turn_base_12``), in the group of its
category:

- its ``question`` turns a scripted user: the first turn's message is the task's query, each
  later turn a scripted message; a turn BFCL leaves empty because it gives the model the
  functions it held back (``missed_function``) says BFCL's own sentence and reveals them
  (``hidden`` until then);
- its ``initial_config`` the world's initial state (``world.state``: class -> config, every
  involved class listed);
- its possible answer the gold calls, turn by turn (``reference.steps`` with ``turn``; BFCL's
  call strings read as Python calls, positional arguments named by the method's signature);
- its checks BFCL's: every turn with gold calls must hold a call of the agent, end in the gold
  state, and have the gold calls' answers among the agent's (``judged_turns: with_gold``,
  ``turn_answers``), however the episode ended (``calls_only``); the final-state gold check is
  off (the last judged turn is it).

The functions offered are those of the entry's involved classes, in BFCL's order. The suite's
default ``max_depth`` is 21 (a DFSDT or ReAct turn may take BFCL's 20 steps, then reply). Bad input
(a copy whose layout this does not know, a category it lacks, an entry naming an unknown class,
a gold call that is no Python call of a known function) is a ``ConfigError`` with one line, and
nothing is written. May import ``mock_tools`` and ``sandbox.errors``.
"""

from __future__ import annotations

import ast
import inspect
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from mock_tools.worlds.bfcl import CATEGORIES, BfclEngine, BfclSource, BfclSourceError
from mock_tools.worlds.errors import WorldDefinitionError
from sandbox.errors import ConfigError

__all__ = ["ADDITIONAL_FUNCTION_PROMPT", "BfclImport", "import_bfcl", "parse_call"]

ADDITIONAL_FUNCTION_PROMPT = (
    "I have updated some more functions you can choose from. What about now?"
)
"""What BFCL's user says in the turn that gives the model its held-back functions."""

WORLD = "bfcl"
STEPS_PER_TURN = 20
"""BFCL's inference stops a turn after this many steps (``MAXIMUM_STEP_LIMIT``): the suite's
default depth per turn is these steps and the reply."""


@dataclass
class BfclImport:
    out: Path
    version: str
    tasks: dict[str, int]
    """Category -> how many tasks."""


def import_bfcl(
    source: str | Path,
    out: str | Path,
    *,
    categories: list[str] | None = None,
    limit: int | None = None,
    ids: list[str] | None = None,
) -> BfclImport:
    """Write the suite (see the module docstring); ``limit`` keeps each category's first
    entries, ``ids`` only the named ones."""
    chosen = list(categories or CATEGORIES)
    unknown = [c for c in chosen if c not in CATEGORIES]
    if unknown:
        raise ConfigError(
            f"unknown BFCL category {unknown[0]!r}: the multi-turn categories are "
            f"{', '.join(CATEGORIES)}"
        )
    try:
        src = BfclSource.open(source)
    except BfclSourceError as e:
        raise ConfigError(str(e)) from None
    entries: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for category in chosen:
        entries[category] = _entries(src, category, limit, ids)
    if ids:
        found = {e["id"] for pairs in entries.values() for e, _ in pairs}
        missing = [i for i in ids if i not in found]
        if missing:
            raise ConfigError(f"no BFCL entry {missing[0]!r} in {', '.join(chosen)}")
    classes: list[str] = []
    for pairs in entries.values():
        for entry, _ in pairs:
            for cls in entry.get("involved_classes") or []:
                problem = src.check_class(str(cls))
                if problem is not None:
                    raise ConfigError(f"BFCL entry {entry['id']}: {problem}")
                if cls not in classes:
                    classes.append(str(cls))
            for cls in entry.get("initial_config") or {}:
                if src.check_class(str(cls)) is not None:
                    raise ConfigError(
                        f"BFCL entry {entry['id']}: its initial config names unknown API class "
                        f"{cls!r}"
                    )
    if not classes:
        raise ConfigError("the chosen BFCL entries involve no API class")
    try:
        engine = BfclEngine(src, classes)
    except (WorldDefinitionError, BfclSourceError) as e:
        raise ConfigError(str(e)) from None
    documents = {
        category: [_task(engine, entry, answer, category) for entry, answer in pairs]
        for category, pairs in entries.items()
    }
    meta = {
        "name": f"bfcl-{src.version}",
        "version": "1",
        "defaults": {"max_depth": STEPS_PER_TURN + 1},
        "description": f"BFCL multi-turn entries ({', '.join(chosen)}), bfcl-eval {src.version}; "
        "the world is BFCL's API classes, loaded from the copy named below.",
        "world_adapter": {
            "kind": "bfcl",
            "source": str(src.path),
            "classes": classes,
            "version": src.version,
            "digest": src.digest(classes),
        },
    }
    _write(Path(out), meta, documents)
    return BfclImport(Path(out), src.version, {c: len(d) for c, d in documents.items()})


def _entries(
    src: BfclSource, category: str, limit: int | None, ids: list[str] | None
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    questions_file, answers_file = src.data_file(category), src.data_file(category, answers=True)
    for rel in (questions_file, answers_file):
        if not src.exists(rel):
            raise ConfigError(
                f"{src.path}: has no {rel}: a bfcl-eval whose layout this version of the "
                "sandbox does not know, or without that category"
            )
    try:
        questions = src.read_jsonl(questions_file)
        answers = {str(a.get("id")): a for a in src.read_jsonl(answers_file)}
    except BfclSourceError as e:
        raise ConfigError(str(e)) from None
    out = []
    for entry in questions:
        eid = str(entry.get("id"))
        if ids and eid not in ids:
            continue
        answer = answers.get(eid)
        if answer is None:
            raise ConfigError(f"BFCL entry {eid}: no possible answer in {answers_file}")
        for key in ("question", "involved_classes"):
            if not isinstance(entry.get(key), list):
                raise ConfigError(f"BFCL entry {eid}: no {key} list (another layout?)")
        if not isinstance(answer.get("ground_truth"), list):
            raise ConfigError(f"BFCL entry {eid}: its possible answer has no ground_truth list")
        out.append((entry, answer))
        if limit is not None and len(out) >= limit:
            break
    return out


def _task(
    engine: BfclEngine, entry: dict[str, Any], answer: dict[str, Any], category: str
) -> dict[str, Any]:
    eid = str(entry["id"])
    classes = [str(c) for c in entry["involved_classes"]]
    turns: list[list[dict[str, Any]]] = entry["question"]
    gold: list[list[str]] = answer["ground_truth"]
    if len(gold) != len(turns):
        raise ConfigError(
            f"BFCL entry {eid}: {len(turns)} question turns but {len(gold)} gold turns"
        )
    missed = {int(k): [str(f) for f in v] for k, v in (entry.get("missed_function") or {}).items()}
    offered = engine.functions_of(classes)
    for names in missed.values():
        for name in names:
            if name not in offered:
                raise ConfigError(f"BFCL entry {eid}: missed function {name!r} is not offered")
    script = []
    for k, turn in enumerate(turns):
        text = _say(eid, k, turn, k in missed)
        if k == 0:
            query = text
            continue
        item: dict[str, Any] = {"say": text}
        if k in missed:
            item["reveal"] = missed[k]
        script.append(item)
    if 0 in missed:
        raise ConfigError(f"BFCL entry {eid}: functions held back from the first turn")
    steps = []
    for k, calls in enumerate(gold):
        for call in calls:
            name, args = parse_call(engine, eid, call)
            if engine.owner[name] not in classes:
                raise ConfigError(f"BFCL entry {eid}: gold call {call!r} of a class not involved")
            steps.append({"tool": WORLD, "api": name, "args": args, "turn": k})
    config = entry.get("initial_config") or {}
    state = {cls: config.get(cls) or {} for cls in classes}
    replies = [f"Done with request {k + 1}." for k in range(len(turns))]
    return {
        "id": eid,
        "query": query,
        "group": category,
        "tools": [{"tool": WORLD, "api": f} for f in offered],
        "user": {
            "script": script,
            "hidden": [f for k in sorted(missed) for f in missed[k]],
        },
        "world": {
            "state": state,
            "checks": {
                "gold": False,
                "judged_turns": "with_gold",
                "turn_answers": True,
                "calls_only": True,
            },
        },
        "reference": {"steps": steps, "replies": replies[:-1], "answer": replies[-1]},
    }


def _say(eid: str, k: int, turn: list[dict[str, Any]], reveals: bool) -> str:
    if not turn:
        if reveals:
            return ADDITIONAL_FUNCTION_PROMPT
        raise ConfigError(f"BFCL entry {eid}: turn {k} has no message and reveals nothing")
    texts = []
    for message in turn:
        if not isinstance(message, dict) or message.get("role") != "user":
            raise ConfigError(f"BFCL entry {eid}: turn {k} has a message that is not the user's")
        texts.append(str(message.get("content", "")))
    text = "\n".join(texts)
    if not text.strip():
        raise ConfigError(f"BFCL entry {eid}: turn {k}'s message is empty")
    return text


def parse_call(engine: BfclEngine, eid: str, call: str) -> tuple[str, dict[str, Any]]:
    """A gold call string (``sort('final_report.pdf')``) as the function and its arguments by
    name (positional ones named by the method's signature); literals only."""
    try:
        node = ast.parse(call.strip(), mode="eval").body
    except SyntaxError:
        raise ConfigError(f"BFCL entry {eid}: gold call {call!r} is not a Python call") from None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        raise ConfigError(f"BFCL entry {eid}: gold call {call!r} is not a call of a function")
    name = node.func.id
    owner = engine.owner.get(name)
    if owner is None:
        raise ConfigError(f"BFCL entry {eid}: gold call {call!r} of an unknown function")
    try:
        positional = [_json(ast.literal_eval(a)) for a in node.args]
        named = {k.arg: _json(ast.literal_eval(k.value)) for k in node.keywords if k.arg}
    except ValueError:
        raise ConfigError(
            f"BFCL entry {eid}: gold call {call!r} has an argument that is no literal"
        ) from None
    if len(named) != len(node.keywords):
        raise ConfigError(f"BFCL entry {eid}: gold call {call!r} unpacks arguments")
    params = [
        p.name
        for p in inspect.signature(getattr(engine.classes[owner], name)).parameters.values()
        if p.name != "self" and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if len(positional) > len(params):
        raise ConfigError(f"BFCL entry {eid}: gold call {call!r} has too many arguments")
    args = dict(zip(params, positional, strict=False))  # checked: no more than params
    for k, v in named.items():
        if k in args:
            raise ConfigError(f"BFCL entry {eid}: gold call {call!r} names {k!r} twice")
        args[k] = v
    return name, args


def _json(value: Any) -> Any:
    """A literal as JSON holds it (tuples as lists, keys as text)."""
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset, complex, bytes)):
        raise ValueError("not JSON")
    return value


def _write(out: Path, meta: dict[str, Any], documents: dict[str, list[dict[str, Any]]]) -> None:
    """The suite, written beside ``out`` and moved into place (nothing half written)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"{out}: exists and is not an empty folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        (tmp / "tasks").mkdir()
        (tmp / "suite.yaml").write_text(_yaml(meta), encoding="utf-8")
        for category, tasks in documents.items():
            (tmp / "tasks" / f"{category}.yaml").write_text(_yaml(tasks), encoding="utf-8")
        if out.exists():
            out.rmdir()
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
