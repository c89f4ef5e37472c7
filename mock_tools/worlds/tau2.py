"""τ²-bench domains as worlds: the domain's own code runs in a worker process of the checkout's
Python, its database is the world's state.

A suite made by ``sandbox import tau2`` has a ``world.py`` whose class derives from
``Tau2World`` and names the checkout, the domain, the checkout's Python, and what the import
found there (the tools' schemas, the policy, the base state's hash)::

    class Retail(Tau2World):
        checkout = "/home/me/tau2-bench"
        domain = "retail"
        python = "/home/me/tau2-bench/.venv/bin/python"
        ...

Its engine, ``Tau2Engine``, has ``WorldEngine``'s interface, so sessions, restores, hashes,
verdicts and diffs work unchanged: a call is sent to the worker (``tau2_worker.py``, started on
the first call) with the hash of the state it runs in; the worker makes a fresh copy of the
domain's database in that state, answers with τ²'s own ``get_response`` and returns the records
the call changed, from which the engine makes the new ``State`` (and checks that both sides
reached the same hash). As in τ²-bench, a tool that raises leaves whatever it wrote before
raising (τ² does not roll a call back), and a read tool's writes are dropped (τ²'s evaluator
never replays read tools). The worker is checked against what the import found before its first
answer: other tools, another policy or another database in the checkout since the import is a
``WorldDefinitionError`` (re-import). Starting the worker and that check are the engine's
``prepare``, which a session runs before a call outside the call's time limit (a start takes
seconds under load, and charged to the first call it timed that call out). A call past the
world's time limit stops the worker; the next call's ``prepare`` starts another.

Telecom's user tools (τ²'s dual control) are tools of the same world the user calls on the
episode's session (``user_tools``): offered to the user model, never to the agent.

A task's initial state (τ²'s initialization data, actions and message history) is computed at
import by τ²'s own ``set_state`` and written as the task's ``world.state``: here those records
replace the base's whole (a τ² record's fields may be null, which a merge patch would drop).
Imports the worlds' engine, state, task, tools and errors.
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import subprocess
import threading
import time
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from mock_tools.worlds.errors import WorldDefinitionError
from mock_tools.worlds.state import Change, State, StateError
from mock_tools.worlds.task import EnvAssertion, TaskWorld
from mock_tools.worlds.tools import ToolDef
from mock_tools.worlds.world import World, WorldAnswer, WorldEngine, parse_clock

__all__ = ["WORKER", "Tau2Engine", "Tau2World", "Tau2Worker", "describe_digest"]

WORKER = Path(__file__).with_name("tau2_worker.py")
START_SECONDS = 300.0
"""How long the worker may take to import the domain's code and load its database."""


def describe_digest(
    tools: list[dict[str, Any]], user_tools: list[dict[str, Any]], policy: str
) -> str:
    """A digest of what the agent and the user are offered and told: the import's and the
    checkout's must be the same."""
    text = json.dumps(
        {"tools": tools, "user_tools": user_tools, "policy": policy},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(text.encode()).hexdigest()


class Tau2World(World):
    """The base of an imported τ² domain's world class (see the module docstring)."""

    checkout: ClassVar[str] = ""
    domain: ClassVar[str] = ""
    python: ClassVar[str] = ""
    """The interpreter τ²-bench is installed in."""
    tools: ClassVar[list[dict[str, Any]]] = []
    """The agent's tools: name, description, parameters (JSON Schema), kind (read | write)."""
    user_tools: ClassVar[list[dict[str, Any]]] = []
    """The user's tools (telecom's phone), the same way."""
    tasks_file: ClassVar[str] = ""
    """The task file imported (τ²'s own task definitions, read back by ``export tau2``)."""
    base_state: ClassVar[str] = ""
    """The hash of the domain's database at import."""
    digest: ClassVar[str] = ""
    """``describe_digest`` of the tools, user tools and policy at import."""

    @classmethod
    def make_engine(cls, base: State, source: str) -> WorldEngine:
        return Tau2Engine(cls, base, source=source)


class Tau2Worker:
    """The worker process and its line protocol (one request at a time)."""

    def __init__(self, python: str, checkout: str, domain: str) -> None:
        self.python = python
        self.checkout = checkout
        self.domain = domain
        self._proc: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()
        self._buffer = ""
        self.starts = 0

    def _start(self) -> subprocess.Popen[str]:
        where = f"{self.checkout} ({self.domain})"
        try:
            proc = subprocess.Popen(
                [self.python, str(WORKER), self.checkout, self.domain],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                encoding="utf-8",
                env={**os.environ, "TAU2_DATA_DIR": str(Path(self.checkout) / "data")},
            )
        except OSError as e:
            raise WorldDefinitionError(
                f"cannot start τ²'s Python {self.python}: {e}", where
            ) from None
        self._proc = proc
        self._buffer = ""
        self.starts += 1
        weakref.finalize(self, _stop, proc)
        first = self._read(proc, START_SECONDS)
        if first.get("fatal") or not first.get("ready"):
            self.stop()
            raise WorldDefinitionError(
                f"τ²'s domain does not load: {first.get('fatal', first)}", where
            )
        return proc

    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def ensure(self) -> None:
        """The worker started, if it is not running."""
        with self._lock:
            if not self.running():
                try:
                    self._start()
                except BaseException:
                    self.stop()
                    raise

    def request(self, req: Mapping[str, Any], seconds: float | None = None) -> dict[str, Any]:
        """One answer of the worker (started when needed). Whatever interrupts the exchange
        (the call limit's ``CallTimedOut`` included) stops the worker, whose next request
        starts another."""
        with self._lock:
            proc = self._proc if self._proc is not None and self._proc.poll() is None else None
            try:
                if proc is None:
                    proc = self._start()
                assert proc.stdin is not None
                proc.stdin.write(json.dumps(req, ensure_ascii=False) + "\n")
                proc.stdin.flush()
                answer = self._read(proc, seconds)
            except BaseException:
                self.stop()
                raise
        if "failed" in answer:
            raise WorldDefinitionError(
                f"τ²'s worker failed on {req.get('op')}: {answer['failed']}",
                f"{self.checkout} ({self.domain})",
            )
        return answer

    def _read(self, proc: subprocess.Popen[str], seconds: float | None) -> dict[str, Any]:
        """The next answer line, waiting in short ticks (so an interrupt is delivered)."""
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        deadline = None if seconds is None else time.monotonic() + seconds
        # poll, not select: select refuses a descriptor numbered 1024 or more, which a process
        # holding many files (a long run, a test session) gives the worker's pipe
        waiting = select.poll()
        waiting.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        while "\n" not in self._buffer:
            if deadline is not None and time.monotonic() > deadline:
                raise WorldDefinitionError(
                    f"τ²'s worker did not answer within {seconds:g} s", self.checkout
                )
            if not waiting.poll(50):
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise WorldDefinitionError(
                    f"τ²'s worker ended (exit {proc.wait()}); run it by hand to see why: "
                    f"{self.python} {WORKER} {self.checkout} {self.domain}",
                    self.checkout,
                )
            self._buffer += chunk.decode("utf-8")
        line, _, self._buffer = self._buffer.partition("\n")
        found = json.loads(line)
        if not isinstance(found, dict):
            raise WorldDefinitionError(f"τ²'s worker answered {line[:80]!r}", self.checkout)
        return found

    def stop(self) -> None:
        if self._proc is not None:
            _stop(self._proc)
            self._proc = None


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def _tool_def(spec: Mapping[str, Any], source: str) -> ToolDef:
    return ToolDef(
        name=spec["name"],
        kind="write" if spec.get("kind") == "write" else "read",
        description=spec.get("description", ""),
        parameters=dict(spec.get("parameters") or {"type": "object", "properties": {}}),
        function=_in_worker,
        method=False,
        source=source,
    )


def _in_worker(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("a τ² tool runs in τ²'s worker, through Tau2Engine.execute")


class Tau2Engine(WorldEngine):
    """A τ² domain as a world (see the module docstring)."""

    def __init__(self, world: type[World], base: State, *, source: str) -> None:
        if not (isinstance(world, type) and issubclass(world, Tau2World)):
            raise WorldDefinitionError(f"{world!r} is not a Tau2World subclass", source)
        self.cls = world
        self.world_cls: type[Tau2World] = world
        self.name = world.name or world.domain or world.__name__.lower()
        self.source = source
        self.instance = world()
        where = f"{world.checkout} ({world.domain})"
        self.tools = {t["name"]: _tool_def(t, where) for t in world.tools}
        self.user_tools = {t["name"]: _tool_def(t, where) for t in world.user_tools}
        both = sorted(set(self.tools) & set(self.user_tools))
        if both:
            raise WorldDefinitionError(f"tools of both the agent and the user: {both}", source)
        if not self.tools:
            raise WorldDefinitionError(f"τ² domain {world.domain!r} has no tools", source)
        self.base = base
        self.default_now = parse_clock(world.now, source)
        self._initial: dict[str, State] = {}
        self.worker = Tau2Worker(world.python, world.checkout, world.domain)
        self._checked = False

    @property
    def policy(self) -> str:
        return self.world_cls.policy

    def kind(self, tool: str) -> str | None:
        d = self.tools.get(tool) or self.user_tools.get(tool)
        return None if d is None else d.kind

    def initial(self, task_id: str | None, spec: TaskWorld | None) -> State:
        """The base state with the task's records replacing the base's (a null record
        removed)."""
        if spec is None or not spec.state:
            return self.base
        found = self._initial.get(task_id or "")
        if found is None:
            try:
                tx = self.base.begin()
                for collection, records in spec.state.items():
                    for rid, record in records.items():
                        if record is None:
                            tx.delete(collection, rid)
                        else:
                            tx.put(collection, rid, record)
                found = tx.commit()[0]
            except StateError as e:
                raise WorldDefinitionError(f"task {task_id!r}: its state: {e}") from None
            self._initial[task_id or ""] = found
        return found

    def ready(self) -> bool:
        return self._checked and self.worker.running()

    def prepare(self) -> None:
        """The worker started and the checkout checked (see the module docstring)."""
        self.check()
        self.worker.ensure()

    def check(self) -> None:
        """The checkout still has what the import found (else a ``WorldDefinitionError``)."""
        if self._checked:
            return
        found = self.worker.request({"op": "describe"}, START_SECONDS)
        digest = describe_digest(found["tools"], found["user_tools"], found["policy"])
        where = f"{self.world_cls.checkout} ({self.world_cls.domain})"
        if digest != self.world_cls.digest:
            raise WorldDefinitionError(
                "the checkout's tools or policy changed since the import: import it again", where
            )
        if found["state"] != self.world_cls.base_state:
            raise WorldDefinitionError(
                "the checkout's database changed since the import: import it again", where
            )
        if self.base.hash != self.world_cls.base_state:
            raise WorldDefinitionError(
                f"the suite's state/ is not the database imported (state {self.base.hash[:12]}, "
                f"imported {self.world_cls.base_state[:12]})",
                self.source,
            )
        self._checked = True

    def execute(
        self,
        state: State,
        tool: str,
        args: Mapping[str, Any],
        *,
        key: str,
        now: Any,
        task: str | None = None,
        seed: int = 0,
    ) -> WorldAnswer:
        """One call in τ²'s worker (see the module docstring); the user's tools are called as
        the user (τ²'s ``requestor``)."""
        if tool not in self.tools and tool not in self.user_tools:
            return WorldAnswer(False, None, f"world {self.name!r} has no tool {tool!r}", state)
        self.check()
        req = {
            "op": "call",
            "state": state.hash,
            "tool": tool,
            "args": dict(args),
            "requestor": "user" if tool in self.user_tools else "assistant",
        }
        answer = self.worker.request(req)
        if answer.get("unknown"):
            self.worker.request({"op": "put", "documents": state.to_documents(bookkeeping=False)})
            answer = self.worker.request(req)
            if answer.get("unknown"):
                raise WorldDefinitionError(
                    f"τ²'s worker does not hold state {state.hash[:12]} it was sent",
                    self.source,
                )
        new, changes = state, list[Change]()
        if answer.get("changes"):
            tx = state.begin()
            for collection, rid, record in answer["changes"]:
                if record is None:
                    tx.delete(collection, rid)
                else:
                    tx.put(collection, rid, record)
            new, changes = tx.commit()
            if new.hash != answer.get("state"):
                raise WorldDefinitionError(
                    f"τ²'s worker and the sandbox reached different states after {tool} "
                    f"({str(answer.get('state'))[:12]}, {new.hash[:12]})",
                    self.source,
                )
        content = answer.get("content")
        if answer.get("error"):
            return WorldAnswer(False, None, str(content), new, changes)
        return WorldAnswer(True, content_body(content), "", new, changes)

    def env_assertion_problem(self, assertion: EnvAssertion) -> str | None:
        """None: τ²'s own ``run_env_assertion`` decides (its functions need not be tools)."""
        return None

    def env_assertion(
        self, state: State, assertion: EnvAssertion, *, now: Any, task: str | None, seed: int
    ) -> tuple[bool, str]:
        """τ²'s own ``run_env_assertion`` on ``state``, in the worker (its functions, such as
        telecom's ``assert_mobile_data_status``, need not be tools)."""
        self.check()
        req = {
            "op": "assertion",
            "state": state.hash,
            "assertion": {
                "env_type": "user" if assertion.side == "user" else "assistant",
                "func_name": assertion.call,
                "arguments": dict(assertion.args),
                "assert_value": assertion.value,
                "message": assertion.message,
            },
        }
        answer = self.worker.request(req)
        if answer.get("unknown"):
            self.worker.request({"op": "put", "documents": state.to_documents(bookkeeping=False)})
            answer = self.worker.request(req)
        if answer.get("error"):
            return False, f"τ²'s assertion failed to run: {answer['error']}"
        return bool(answer.get("met")), "met" if answer.get("met") else "not met"

    def close(self) -> None:
        self.worker.stop()


def content_body(content: Any) -> Any:
    """A τ² tool message's content as the answer's body: its JSON when it is JSON text, else
    the text (τ²'s agent reads the text; exporting writes the body back as that text)."""
    if not isinstance(content, str):
        return content
    try:
        return json.loads(content)
    except ValueError:
        return content


def content_text(body: Any) -> str:
    """The tool message content τ² gave for an answer's ``body`` (``content_body``'s inverse up
    to JSON whitespace, which τ²'s replay check reads past)."""
    return body if isinstance(body, str) else json.dumps(body)


def world_file(name: str, cls_name: str, fields: Mapping[str, Any]) -> str:
    """The ``world.py`` of an imported domain (its class's attributes as Python literals)."""
    import pprint

    lines = [
        f'"""τ²-bench\'s {name} domain, run from the checkout by its own code (written by '
        '`sandbox import tau2`)."""',
        "",
        "from mock_tools.worlds.tau2 import Tau2World",
        "",
        "",
        f"class {cls_name}(Tau2World):",
    ]
    for key, value in fields.items():
        text = pprint.pformat(value, width=96, sort_dicts=False)
        text = text.replace("\n", "\n" + " " * (8 + len(key)))
        lines.append(f"    {key} = {text}")
    return "\n".join(lines) + "\n"
