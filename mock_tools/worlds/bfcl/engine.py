"""``BfclEngine``: a world whose tools are BFCL's API classes, loaded from the user's copy of
``bfcl-eval``, with the interface of ``WorldEngine`` (so sessions, restores, hashes, verdicts,
diffs and replays work unchanged).

BFCL's classes keep their state in Python objects that their methods change in place. A state
here is a ``BfclState``: the instances of the task's classes, and their JSON records
(``mock_tools.worlds.bfcl.encode``: one collection per class, one record per public attribute;
the private attributes in a ``_<Class>`` bookkeeping collection). ``execute`` deep-copies the
instances, calls the method, and makes the new state from the copies: every earlier state stays
as it was, so a session can go back to it, and a state's hash names what it holds.

A task's initial state is its BFCL entry's ``initial_config``, carried as the task's world state
(``TaskWorld.state``: class -> its config; every involved class is listed, ``{}`` for one
without a config): each class is made and, unless BFCL lists it stateless, loaded with
``_load_scenario(deepcopy(config), long_context=...)`` (long context for the
``multi_turn_long_context`` category, as BFCL decides it from the entry's id).

A call answers as BFCL's executor does: the method's result as text (``bfcl_result_text``), or
``Error during execution: <message>`` when it raises; the instances keep whatever the method did
before raising (BFCL's executor does not undo it, so neither do we: such a call is not atomic).
A function of a class the task does not involve is ``name '<f>' is not defined``, as BFCL's
``eval`` says. Imports the worlds' engine, state, tools, task and errors, and its siblings.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from mock_tools.models import ApiSpec, ToolSpec
from mock_tools.worlds.bfcl.encode import PRIVATE, bfcl_result_text, instance_records
from mock_tools.worlds.bfcl.functions import offered_function
from mock_tools.worlds.bfcl.source import BfclSource, BfclSourceError
from mock_tools.worlds.errors import CallTimedOut, WorldDefinitionError
from mock_tools.worlds.state import State, StateError, canonical_record
from mock_tools.worlds.task import TaskWorld
from mock_tools.worlds.tools import ToolDef
from mock_tools.worlds.world import DEFAULT_NOW, WorldAnswer, WorldEngine, parse_clock

__all__ = ["ERROR_PREFIX", "BfclEngine", "BfclState", "long_context"]

ERROR_PREFIX = "Error during execution: "
"""How BFCL's executor words a call that raised."""

WORLD_NAME = "bfcl"


class BfclState(State):
    """A state of a BFCL world: its JSON records and the API instances they describe (never
    changed after the state is made: calls work on copies)."""

    __slots__ = ("instances",)

    def __init__(self, records: State, instances: dict[str, Any]) -> None:
        super().__init__(records._cols, records._sum, records._data_sum)
        self._sorted = records._sorted
        self.instances = instances


def long_context(task_id: str | None) -> bool:
    """Whether BFCL loads an entry's classes with long context: its category (the id without
    its number) names ``long_context`` or ``composite``."""
    category = (task_id or "").rsplit("_", 1)[0]
    return "long_context" in category or "composite" in category


def _unused(*_args: Any, **_kwargs: Any) -> Any:  # pragma: no cover - never called
    raise RuntimeError("a BFCL tool is called through BfclEngine.execute")


class BfclEngine(WorldEngine):
    """A world over BFCL's API classes (see the module docstring)."""

    def __init__(
        self, source: BfclSource, classes: list[str], *, name: str = WORLD_NAME, where: str = ""
    ) -> None:
        self.source_copy = source
        self.name = name
        self.source = str(source.path)
        self.where = where or str(source.path)
        try:
            self.classes = source.load_classes(classes)
        except BfclSourceError as e:
            raise WorldDefinitionError(str(e), self.where) from None
        self.tools: dict[str, ToolDef] = {}
        self.owner: dict[str, str] = {}
        """Function name -> the class that has it."""
        for cls in classes:
            for doc in source.function_docs(cls):
                fname, description, params = offered_function(doc)
                if not fname or fname in self.tools:
                    continue
                self.owner[fname] = cls
                self.tools[fname] = ToolDef(
                    name=fname,
                    kind="write",
                    description=description,
                    parameters=params,
                    function=_unused,
                    method=True,
                    source=f"{source.path}:{source.module_file(cls)}",
                )
        if not self.tools:
            raise WorldDefinitionError("the BFCL world has no functions", self.where)
        self.base = State.empty()
        self.default_now = parse_clock(DEFAULT_NOW, self.where)
        self._initial: dict[str, State] = {}
        self._lock = threading.Lock()

    @property
    def policy(self) -> str:
        return ""

    def tool_spec(self) -> ToolSpec:
        apis = [
            ApiSpec(
                name=d.name,
                description=d.description,
                parameters=d.parameters,
                function=d.name,
                returns=None,
            )
            for d in self.tools.values()
        ]
        doc = (
            f"BFCL's API classes ({', '.join(self.classes)}), bfcl-eval {self.source_copy.version}"
        )
        return ToolSpec(name=self.name, description=doc, category="World", apis=apis)

    def kind(self, tool: str) -> str | None:
        return "write" if tool in self.tools else None

    def functions_of(self, classes: list[str]) -> list[str]:
        """The functions of ``classes``, in the order BFCL offers them (class by class)."""
        return [f for cls in classes for f in self.tools if self.owner[f] == cls]

    # -- states ----------------------------------------------------------------------------------

    def initial(self, task_id: str | None, spec: TaskWorld | None) -> State:
        key = task_id or ""
        with self._lock:
            found = self._initial.get(key)
        if found is not None:
            return found
        config = spec.state if spec is not None else {}
        instances: dict[str, Any] = {}
        for cls, conf in config.items():
            klass = self.classes.get(cls)
            if klass is None:
                raise WorldDefinitionError(
                    f"task {task_id!r}: its initial config names API class {cls!r}, which the "
                    f"suite does not load ({', '.join(self.classes)})"
                )
            try:
                instance = klass()
                if cls not in self.source_copy.stateless:
                    instance._load_scenario(copy.deepcopy(conf), long_context=long_context(task_id))
            except CallTimedOut:
                raise
            except Exception as e:
                raise WorldDefinitionError(
                    f"task {task_id!r}: {cls} does not load its initial config: "
                    f"{type(e).__name__}: {e}"
                ) from None
            instances[cls] = instance
        state = self._snapshot(State.empty(), instances)[0]
        with self._lock:
            self._initial[key] = state
        return state

    def _snapshot(self, before: State, instances: dict[str, Any]) -> tuple[BfclState, list[Any]]:
        """The state holding ``instances``, written over ``before`` record by record."""
        docs: dict[str, dict[str, Any]] = {}
        for cls, instance in instances.items():
            public, private = instance_records(instance)
            docs[cls] = public
            docs[PRIVATE + cls] = private
        tx = before.begin()
        for collection in before.collections():
            for rid in before.ids(collection):
                if rid not in docs.get(collection, {}):
                    tx.delete(collection, rid)
        for collection, records in docs.items():
            for rid, record in records.items():
                old = before.raw(collection, rid)
                if old is None or canonical_record(old) != canonical_record(record):
                    tx.put(collection, rid, record)
        state, changes = tx.commit()
        return BfclState(state, instances), changes

    # -- calls -----------------------------------------------------------------------------------

    def execute(
        self,
        state: State,
        tool: str,
        args: Mapping[str, Any],
        *,
        key: str,
        now: datetime,
        task: str | None = None,
        seed: int = 0,
    ) -> WorldAnswer:
        """One call as BFCL's executor makes it (see the module docstring)."""
        if not isinstance(state, BfclState):
            msg = "the BFCL world cannot run a call on a state it did not make"
            return WorldAnswer(False, None, msg, state, text=msg)
        owner = self.owner.get(tool)
        if owner is None or owner not in state.instances:
            text = f"{ERROR_PREFIX}name '{tool}' is not defined"
            return WorldAnswer(False, None, text, state, text=text)
        instances = copy.deepcopy(state.instances)
        method = getattr(instances[owner], tool)
        try:
            text = bfcl_result_text(method(**dict(args)))
            ok = True
        except CallTimedOut:
            raise
        except (Exception, SystemExit) as e:
            text = f"{ERROR_PREFIX}{e}"
            ok = False
        try:
            new, changes = self._snapshot(state, instances)
        except StateError as e:
            msg = f"{ERROR_PREFIX}the instances' state is not JSON: {e}"
            return WorldAnswer(False, None, msg, state, text=msg)
        if ok:
            return WorldAnswer(True, text, "", new, changes, text=text)
        return WorldAnswer(False, None, text, new, changes, text=text)


def load_bfcl_engine(
    source: str, classes: list[str], *, version: str = "", digest: str = "", where: str = ""
) -> BfclEngine:
    """The BFCL world of a suite: its copy of BFCL must still be the one it was imported from
    (same version and digest, when the suite records them)."""
    try:
        src = BfclSource.open(source)
    except BfclSourceError as e:
        raise WorldDefinitionError(f"its BFCL copy: {e}", where) from None
    if version and src.version != version:
        raise WorldDefinitionError(
            f"its BFCL copy {src.path} is bfcl-eval {src.version}, the suite was imported from "
            f"{version}: import it again",
            where,
        )
    for cls in classes:
        problem = src.check_class(cls)
        if problem is not None:
            raise WorldDefinitionError(f"its BFCL copy {src.path}: {problem}", where)
    if digest and src.digest(classes) != digest:
        raise WorldDefinitionError(
            f"its BFCL copy {src.path} changed since the import (its API classes or function "
            "docs differ): import it again",
            where,
        )
    return BfclEngine(src, classes, where=where)
