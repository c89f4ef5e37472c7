"""The τ²-bench side of a τ² world: a process that runs a domain's own code from a checkout.

Run with the checkout's Python (the interpreter τ²-bench is installed in, never the sandbox's)::

    python tau2_worker.py CHECKOUT DOMAIN

it imports ``tau2.domains.<DOMAIN>.environment`` from ``CHECKOUT/src`` (data from
``CHECKOUT/data``) and answers JSON requests, one per line on stdin, one answer per line on
stdout (``mock_tools.worlds.tau2`` is the other side). A state is the domain's database as
collections of records (``layout_of``): a field of the database that holds a mapping is a
collection of its entries, a list a collection of its items keyed by position (``000000``...),
anything else (a model, a plain value) a collection of one record ``@`` (none for a null); the
user's database (telecom's phone), when the domain has one, the same with ``user-`` before each
collection's name. Each state is known by the
sandbox's content hash (the sum of one SHA-256 per record, ``mock_tools.worlds.state``),
computed here the same way, so both sides name a state alike.

Requests (``op``): ``describe`` (tools, user tools, policy, the base state's hash and, with
``documents``, its records), ``initial`` (a task's initial state: the records τ²'s
``set_state`` changes), ``tasks`` (a task file's tasks as JSON), ``put`` (a state's records),
``call`` (one tool call in a state: a fresh copy of the database, τ²'s own ``get_response``,
the records the call changed and the new state's hash), ``assertion`` (τ²'s own
``run_env_assertion`` on a copy of a state: ``met``). The last few states are kept; a
``call`` in a state not kept answers ``{"unknown": true}`` and the caller sends it with ``put``.

This file imports only the standard library and ``tau2``: it runs in τ²'s interpreter.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
import traceback
from collections import OrderedDict
from typing import Any

_MOD = 1 << 256
KEEP = 16
"""How many states the worker keeps."""
USER = "user-"
ONE = "@"


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(collection: str, rid: str, record: Any) -> int:
    h = hashlib.sha256()
    h.update(collection.encode())
    h.update(b"\0")
    h.update(rid.encode())
    h.update(b"\0")
    h.update(canonical(record).encode())
    return int.from_bytes(h.digest(), "big")


def state_hash(docs: dict[str, dict[str, Any]]) -> str:
    total = 0
    for collection, records in docs.items():
        for rid, record in records.items():
            total += digest(collection, rid, record)
    return f"{total % _MOD:064x}"


def plain(db: Any) -> Any:
    """A database as JSON values (pydantic's JSON mode: what validating reads back)."""
    return db.model_dump(mode="json")


def to_docs(db: Any, prefix: str = "") -> dict[str, dict[str, Any]]:
    """A database (a pydantic model) as collections of records (see the module docstring)."""
    docs: dict[str, dict[str, Any]] = {}
    if db is None:
        return docs
    kinds = layout_of(db)
    dumped = plain(db)
    for field, value in dumped.items():
        name = prefix + field
        kind = kinds.get(field, "one")
        if kind == "map" and isinstance(value, dict):
            docs[name] = {str(k): v for k, v in value.items() if v is not None}
        elif kind == "list" and isinstance(value, list):
            docs[name] = {f"{i:06d}": v for i, v in enumerate(value)}
        else:  # a model or a plain value: one record (none for a null, which no record holds)
            docs[name] = {ONE: value} if value is not None else {}
    return docs


def from_docs(
    cls: Any, docs: dict[str, dict[str, Any]], layout: dict[str, str], prefix: str
) -> Any:
    """The database of class ``cls`` that ``docs`` hold (``layout``: each field's kind)."""
    data: dict[str, Any] = {}
    for field, kind in layout.items():
        records = docs.get(prefix + field, {})
        if kind == "map":
            data[field] = dict(records)
        elif kind == "list":
            data[field] = [records[k] for k in sorted(records)]
        else:
            data[field] = records.get(ONE)
    return cls.model_validate(data)


def layout_of(db: Any) -> dict[str, str]:
    """Each field's kind, by what the database object holds there: ``map`` (a mapping: a
    collection of its entries, a null entry left out), ``list`` (a collection of its items by
    position), else ``one`` (a model or a plain value: one record ``@``, none when null)."""
    if db is None:
        return {}
    out = {}
    for field in type(db).model_fields:
        value = getattr(db, field, None)
        out[field] = (
            "map" if isinstance(value, dict) else "list" if isinstance(value, list) else "one"
        )
    return out


class Domain:
    """A τ² domain's environment, its database classes and the states kept."""

    def __init__(self, checkout: str, domain: str) -> None:
        os.environ.setdefault("TAU2_DATA_DIR", os.path.join(checkout, "data"))
        sys.path.insert(0, os.path.join(checkout, "src"))
        self.module = importlib.import_module(f"tau2.domains.{domain}.environment")
        self.message = importlib.import_module("tau2.data_model.message")
        self.tasks_module = importlib.import_module("tau2.data_model.tasks")
        self.env = self.module.get_environment()
        self.db_cls = type(self.env.tools.db)
        user_db = getattr(self.env.user_tools, "db", None) if self.env.user_tools else None
        self.user_db_cls = type(user_db) if user_db is not None else None
        self.layout = layout_of(self.env.tools.db)
        self.user_layout = layout_of(user_db)
        self.base = {**to_docs(self.env.tools.db), **to_docs(user_db, USER)}
        self.states: OrderedDict[str, dict[str, dict[str, Any]]] = OrderedDict()
        self.objects: OrderedDict[str, Any] = OrderedDict()
        """The database objects read tools share, by state (see ``fresh_env``)."""
        self.keep(state_hash(self.base), self.base)

    def keep(self, h: str, docs: dict[str, dict[str, Any]]) -> None:
        self.states[h] = docs
        self.states.move_to_end(h)
        while len(self.states) > KEEP:
            self.states.popitem(last=False)

    def fresh_env(self, docs: dict[str, dict[str, Any]], shared: str | None = None) -> Any:
        """The domain's environment over a fresh copy of the database ``docs`` hold; with
        ``shared`` (a state's hash, for a read tool of a domain without a user database), the
        copy made for that state before, if any (read tools do not write: τ²'s evaluator never
        replays them)."""
        env = self.env
        if shared is not None and self.user_db_cls is None:
            db = self.objects.get(shared)
            if db is None:
                db = self.objects[shared] = from_docs(self.db_cls, docs, self.layout, "")
                while len(self.objects) > 4:
                    self.objects.popitem(last=False)
            env.tools.db = db
            return env
        env.tools.db = from_docs(self.db_cls, docs, self.layout, "")
        if self.user_db_cls is not None:
            env.user_tools.db = from_docs(self.user_db_cls, docs, self.user_layout, USER)
        return env

    def docs_of(self, env: Any) -> dict[str, dict[str, Any]]:
        user_db = env.user_tools.db if self.user_db_cls is not None else None
        return {**to_docs(env.tools.db), **to_docs(user_db, USER)}

    @staticmethod
    def tools_of(toolkit: Any) -> list[dict[str, Any]]:
        if toolkit is None:
            return []
        out = []
        for name, tool in sorted(toolkit.get_tools().items()):
            function = tool.openai_schema["function"]
            writes = toolkit.tool_mutates_state(name)
            out.append(
                {
                    "name": name,
                    "description": function.get("description", ""),
                    "parameters": function.get("parameters", {"type": "object", "properties": {}}),
                    "kind": "write" if writes else "read",
                }
            )
        return out

    # -- requests ---------------------------------------------------------------------------

    def describe(self, req: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "domain": self.env.get_domain_name(),
            "policy": self.env.get_policy(),
            "tools": self.tools_of(self.env.tools),
            "user_tools": self.tools_of(self.env.user_tools),
            "state": state_hash(self.base),
        }
        if req.get("documents"):
            out["documents"] = self.base
        return out

    def tasks(self, req: dict[str, Any]) -> dict[str, Any]:
        with open(req["file"], encoding="utf-8") as f:
            data = json.load(f)
        if isinstance(data, dict) and "tasks" in data:
            data = data["tasks"]
        task_cls = self.tasks_module.Task
        return {"tasks": [task_cls.model_validate(t).model_dump(mode="json") for t in data]}

    def initial(self, req: dict[str, Any]) -> dict[str, Any]:
        """A task's initial state as τ²'s evaluator sets it up (initialization data, actions
        and message history), as the records that differ from the base state."""
        state = self.tasks_module.InitialState.model_validate(req["initial_state"])
        env = self.fresh_env(self.base)
        history = state.message_history or []
        env.set_state(
            initialization_data=state.initialization_data,
            initialization_actions=state.initialization_actions,
            message_history=history,
        )
        docs = self.docs_of(env)
        self.keep(state_hash(docs), docs)
        return {"state": state_hash(docs), "changes": changes(self.base, docs)}

    def put(self, req: dict[str, Any]) -> dict[str, Any]:
        docs = req["documents"]
        h = state_hash(docs)
        self.keep(h, docs)
        return {"state": h}

    def call(self, req: dict[str, Any]) -> dict[str, Any]:
        docs = self.states.get(req["state"])
        if docs is None:
            return {"unknown": True}
        self.states.move_to_end(req["state"])
        requestor = req.get("requestor", "assistant")
        toolkit = self.env.user_tools if requestor == "user" else self.env.tools
        writes = toolkit is not None and toolkit.has_tool(req["tool"])
        if writes:
            writes = toolkit.tool_mutates_state(req["tool"])
        env = self.fresh_env(docs, None if writes else req["state"])
        call = self.message.ToolCall(
            id="call", name=req["tool"], arguments=req["args"], requestor=requestor
        )
        answer = env.get_response(call)
        out: dict[str, Any] = {"content": answer.content, "error": bool(answer.error)}
        if writes:
            after = self.docs_of(env)
            diff = changes(docs, after)
            if diff:
                total = int(req["state"], 16)
                kept = {c: dict(r) for c, r in docs.items()}
                for collection, rid, record in diff:
                    old = docs.get(collection, {}).get(rid)
                    if old is not None:
                        total -= digest(collection, rid, old)
                        del kept[collection][rid]
                    if record is not None:
                        total += digest(collection, rid, record)
                        kept.setdefault(collection, {})[rid] = record
                h = f"{total % _MOD:064x}"
                self.keep(h, kept)
                out["state"] = h
                out["changes"] = diff
        return out

    def assertion(self, req: dict[str, Any]) -> dict[str, Any]:
        """τ²'s ``run_env_assertion`` on a fresh copy of a state: whether it is met (an
        assertion that cannot run, τ²'s ``ValueError`` for a function that is missing or does
        not answer a bool, is an ``error``)."""
        docs = self.states.get(req["state"])
        if docs is None:
            return {"unknown": True}
        self.states.move_to_end(req["state"])
        env = self.fresh_env(docs)
        assertion = self.tasks_module.EnvAssertion.model_validate(req["assertion"])
        try:
            met = env.run_env_assertion(assertion, raise_assertion_error=False)
        except Exception as e:  # noqa: BLE001 - reported as the assertion's error
            return {"error": f"{type(e).__name__}: {e}"}
        return {"met": bool(met)}


def changes(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[Any]:
    """``[collection, id, record or None]`` for every record that differs (by ``==``: a number
    written ``1`` and one written ``1.0`` are the same here)."""
    out = []
    for collection in sorted(set(before) | set(after)):
        old, new = before.get(collection, {}), after.get(collection, {})
        if old == new:
            continue
        for rid in sorted(set(old) | set(new)):
            if rid not in new:
                out.append([collection, rid, None])
            elif rid not in old or old[rid] != new[rid]:
                out.append([collection, rid, new[rid]])
    return out


def main(argv: list[str]) -> int:
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # whatever τ²'s code prints goes to stderr, never into the answers
    sys.stdout = sys.stderr
    try:
        domain = Domain(argv[1], argv[2])
    except BaseException as e:  # noqa: BLE001 - reported as the first answer
        out.write(json.dumps({"fatal": f"{type(e).__name__}: {e}"}) + "\n")
        out.flush()
        return 1
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            answer = getattr(domain, req["op"])(req)
        except Exception as e:  # noqa: BLE001 - the request failed; the worker goes on
            answer = {"failed": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()}
        out.write(json.dumps(answer, ensure_ascii=False) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
