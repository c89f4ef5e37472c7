"""Write histories: a recorded stateful system answers each call as it did after the same writes.

What it protects:
- a history is a chained hash of the write calls in order (stable: recorded suites keep
  matching), and which APIs write comes from the suite's ``writes``/``reads`` or an API's
  ``read_only``, with bad names refused naming the field;
- the service serves a call by (call, the session's writes so far): the same read answers what
  it answered after the same writes, reads do not move the history, sessions have their own,
  a call after writes never recorded is a miss (no falling back to the empty history), a reset
  starts the history again, faults never reach the history, occurrences count per history;
- recordings with a history are indexed from a suite folder (and refused with a bad one), kept
  in memory, in the overlay and in a JSONL file by a recording miss policy, and frozen;
- a live stateful HTTP API recorded through the ``upstream`` miss policy replays offline;
- a suite without writes is unchanged: its recordings are served as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import yaml

from mock_tools import (
    CallContext,
    MissAnswer,
    RecordingStore,
    Rejected,
    Response,
    Upstream,
    UpstreamPolicy,
    create_service,
    load_suite,
)
from mock_tools.errors import SuiteError
from mock_tools.history import (
    HISTORY_CHARS,
    WriteHistories,
    api_kinds,
    extend,
    history_of,
    write_apis,
)
from mock_tools.models import ApiSpec, FaultConfig, Recording, SuiteMeta
from mock_tools.overlay import OverlayStore, freeze
from mock_tools.validate import validate_suite

ADD = ("todo", "add")
DONE = ("todo", "done")
LIST = ("todo", "list")
MILK, EGGS = '{"text":"milk"}', '{"text":"eggs"}'

TOOLS = [
    {
        "name": "todo",
        "apis": [
            {
                "name": "add",
                "parameters": {
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                },
            },
            {
                "name": "done",
                "parameters": {
                    "type": "object",
                    "properties": {"id": {"type": "integer"}},
                    "required": ["id"],
                },
            },
            {"name": "list"},
        ],
    }
]

AFTER_MILK = extend(None, *ADD, MILK)
AFTER_MILK_EGGS = extend(AFTER_MILK, *ADD, EGGS)


def _rec(api: str, args: dict[str, Any], body: Any, history: str | None = None, **extra: Any):
    line = {"tool": "todo", "api": api, "args": args, "response": {"body": body}, **extra}
    if history is not None:
        line["history"] = history
    return line


RECORDINGS = [
    _rec("list", {}, []),
    _rec("add", {"text": "milk"}, {"id": 1}),
    _rec("list", {}, ["milk"], AFTER_MILK),
    _rec("add", {"text": "eggs"}, {"id": 2}, AFTER_MILK),
    _rec("list", {}, ["milk", "eggs"], AFTER_MILK_EGGS),
]


def _suite(
    root: Path,
    recordings: list[dict[str, Any]] = RECORDINGS,
    meta: dict[str, Any] | None = None,
    tools: list[dict[str, Any]] = TOOLS,
) -> Path:
    (root / "tools").mkdir(parents=True)
    (root / "recordings").mkdir()
    head = {"name": "todo", "version": "1", "writes": ["todo/add", "done_for_todo"]}
    (root / "suite.yaml").write_text(yaml.safe_dump(meta if meta is not None else head))
    (root / "tools" / "todo.yaml").write_text(yaml.safe_dump(tools))
    text = "".join(json.dumps(r) + "\n" for r in recordings)
    (root / "recordings" / "todo.jsonl").write_text(text)
    return root


async def _ask(service: Any, api: tuple[str, str], args: dict[str, Any], scope: str = "s") -> Any:
    canon, key = service.canonical(*api, args)
    return await service.call(*api, canon, key, CallContext(scope=scope))


def _body(outcome: Any) -> Any:
    assert outcome.provenance == "hit", (outcome.provenance, outcome.response)
    return outcome.response.body


# -- the history and the kinds ----------------------------------------------------------------


def test_a_history_chains_the_write_calls_in_order_and_is_stable() -> None:
    # Pinned: a recorded suite's histories must keep matching the service's.
    assert AFTER_MILK == "db54f57e88f922cdba1582d20cbe1314"
    assert AFTER_MILK_EGGS == "e7a1684a2d43ea106b56ce1a8cb5e046"
    assert len(AFTER_MILK) == HISTORY_CHARS
    assert history_of([]) is None
    assert history_of([(*ADD, MILK), (*ADD, EGGS)]) == AFTER_MILK_EGGS
    assert history_of([(*ADD, EGGS), (*ADD, MILK)]) != AFTER_MILK_EGGS  # order counts
    assert extend(None, *ADD, EGGS) != AFTER_MILK
    assert extend(None, "todo", "done", MILK) != AFTER_MILK  # so does the API
    assert extend(None, "tod", "oadd", MILK) != AFTER_MILK  # names do not run together
    # non-ASCII names as UTF-8 (not escaped), and a key holding a lone surrogate (canonical keys
    # may: the recording index hashes them too) is hashed, never an error
    assert extend(None, "café", "añadir", '{"t":"\ud800"}') == "8a728e12e3f3e684e7500992b92f6b39"


def _apis(**read_only: bool | None) -> dict[tuple[str, str], ApiSpec]:
    names = ("add", "done", "list", "count")
    return {("todo", n): ApiSpec(name=n, read_only=read_only.get(n)) for n in names}


def test_which_apis_write() -> None:
    meta = SuiteMeta(name="t")
    assert set(api_kinds(meta, _apis()).values()) == {None}  # nothing said: every API reads
    assert write_apis(meta, _apis()) == frozenset()
    # an API's own read_only (MCP's readOnlyHint)
    assert write_apis(meta, _apis(add=False, list=True)) == {ADD}
    assert api_kinds(meta, _apis(add=False, list=True))[LIST] is False
    # writes: the names listed (tool/api, a function name, tool/*); the others read
    listed = SuiteMeta(name="t", writes=["todo/add", "done_for_todo"])
    assert write_apis(listed, _apis()) == {ADD, DONE}
    assert api_kinds(listed, _apis())[LIST] is False
    assert write_apis(SuiteMeta(name="t", writes=["todo/*"]), _apis()) == {
        ADD,
        DONE,
        LIST,
        ("todo", "count"),
    }
    # writes wins over an API's read_only; reads: everything not listed (nor read_only) writes
    assert write_apis(SuiteMeta(name="t", writes=["list_for_todo"]), _apis(list=True)) == {LIST}
    reads = SuiteMeta(name="t", reads=["todo/list"])
    assert write_apis(reads, _apis(count=True)) == {ADD, DONE}
    assert api_kinds(reads, _apis())[LIST] is False  # said: a read (readOnlyHint: true)
    assert write_apis(SuiteMeta(name="t", reads=["todo/list"]), _apis(add=True)) == {
        DONE,
        ("todo", "count"),
    }


def test_a_name_that_is_no_api_or_is_in_both_lists_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^writes: 'todo/nope' names no API"):
        api_kinds(SuiteMeta(name="t", writes=["todo/nope"]), _apis())
    with pytest.raises(ValueError, match=r"^reads: 'other/\*' names no API"):
        api_kinds(SuiteMeta(name="t", reads=["other/*"]), _apis())
    with pytest.raises(ValueError, match=r"^writes: 'todo/' names no API"):
        api_kinds(SuiteMeta(name="t", writes=["todo/"]), _apis())  # no "*": not every API
    with pytest.raises(ValueError, match=r"^writes: 'todoXY' names no API"):
        api_kinds(SuiteMeta(name="t", writes=["todoXY"]), _apis())
    with pytest.raises(ValueError, match="todo/add is listed in both writes and reads"):
        api_kinds(SuiteMeta(name="t", writes=["todo/add"], reads=["add_for_todo"]), _apis())


def test_a_suite_whose_writes_name_no_api_does_not_load(tmp_path: Path) -> None:
    root = _suite(tmp_path / "s", meta={"name": "todo", "writes": ["todo/add", "todo/pop"]})
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    assert str(caught.value) == (
        f"{root / 'suite.yaml'}: writes: 'todo/pop' names no API of the suite "
        "(tool/api, tool/* or a function name)"
    )
    root = _suite(tmp_path / "r", meta={"name": "todo", "reads": ["nope"]})
    with pytest.raises(SuiteError, match=r"suite.yaml: reads: 'nope' names no API"):
        load_suite(root)


def test_histories_per_session_are_bounded_and_reset() -> None:
    histories = WriteHistories(limit=2)
    assert histories.current("a") is None
    assert histories.advance("a", *ADD, MILK) == AFTER_MILK
    assert histories.advance("a", *ADD, EGGS) == AFTER_MILK_EGGS
    assert histories.current("a") == AFTER_MILK_EGGS
    histories.advance("b", *ADD, MILK)
    histories.current("a")  # reading is no use: only a write keeps a session recent
    histories.advance("a", *ADD, MILK)
    histories.advance("c", *ADD, MILK)  # over the limit: b, the least recently written, goes
    assert histories.current("b") is None and histories.current("a") is not None
    assert len(histories) == 2
    assert histories.reset("a") == 1 and histories.reset("a") == 0
    assert histories.current("a") is None and histories.current("c") == AFTER_MILK
    assert histories.reset() == 1 and len(histories) == 0
    with pytest.raises(ValueError):
        WriteHistories(limit=0)
    assert WriteHistories(limit=1).advance("a", *ADD, MILK) == AFTER_MILK


def test_the_store_keeps_scopes_and_histories_apart() -> None:
    store = RecordingStore()
    store.add(Recording(tool="t", api="a", args={}, response=Response(body="anyone, empty")))
    store.add(
        Recording(tool="t", api="a", args={}, response=Response(body="anyone, h"), history="ab")
    )
    scoped = Recording(tool="t", api="a", args={}, response=Response(body="s, h"), history="ab")
    store.add(scoped.model_copy(update={"scope": "s"}))

    def body(**where: Any) -> Any:
        found = store.get("t", "a", "{}", **where)
        return None if found is None else found.body

    assert body() == "anyone, empty"
    assert body(history="ab") == "anyone, h"
    assert body(history="ab", scope="s") == "s, h"
    assert body(history="ab", scope="other") == "anyone, h"
    assert body(scope="s") == "anyone, empty"  # the scope's answer is after another history
    assert body(history="cd") is None and body(history="cd", scope="s") is None
    assert store.has("t", "a", "{}", history="ab") and not store.has("t", "a", "{}", history="cd")
    assert not store.has("t", "a", "{}", history="cd", scope="s")
    # a second answer for the same call after the same history is a duplicate
    assert not store.add_keyed("t", "a", "{}", Response(body="again"), history="ab")
    assert store.add_keyed("t", "a", "{}", Response(body="new"), history="cd")
    assert body(history="cd") == "new"


# -- the service ------------------------------------------------------------------------------


async def test_each_call_is_answered_as_recorded_after_the_same_writes(tmp_path: Path) -> None:
    service = create_service(load_suite(_suite(tmp_path / "s")))
    assert service.writes == {ADD, DONE}
    assert _body(await _ask(service, LIST, {})) == []
    assert _body(await _ask(service, LIST, {})) == []  # a read does not move the history
    assert _body(await _ask(service, ADD, {"text": "milk"})) == {"id": 1}
    assert service.history("s") == AFTER_MILK
    assert _body(await _ask(service, LIST, {})) == ["milk"]
    assert _body(await _ask(service, ADD, {"text": "eggs"})) == {"id": 2}
    assert _body(await _ask(service, LIST, {})) == ["milk", "eggs"]
    # another session has its own history
    assert _body(await _ask(service, LIST, {}, scope="other")) == []
    # a reset starts the session's history again
    assert service.reset("s") == 1
    assert service.history("s") is None
    assert _body(await _ask(service, LIST, {})) == []


async def test_a_call_off_the_recorded_history_is_a_miss_the_policy_decides(
    tmp_path: Path,
) -> None:
    suite = load_suite(_suite(tmp_path / "s"))
    service = create_service(suite)
    off = await _ask(service, ADD, {"text": "eggs"})  # eggs first: never recorded there
    assert off.provenance == "miss" and off.code == "no_recording"
    # the list after it is a miss too, though list is recorded at other histories
    after = await _ask(service, LIST, {})
    assert after.provenance == "miss"
    # a second milk after milk: recorded once only, at the empty history
    await _ask(service, ADD, {"text": "milk"}, scope="twice")
    again = await _ask(service, ADD, {"text": "milk"}, scope="twice")
    assert again.provenance == "miss"

    seen: list[Any] = []

    class Answering:
        name, records = "answering", False

        async def answer(self, miss: Any) -> MissAnswer:
            seen.append((miss.api, miss.history, miss.occurrence))
            return MissAnswer(Response(body="made up"), "simulated")

        async def aclose(self) -> None:
            return None

    other = create_service(suite, miss_policy=Answering())
    await _ask(other, ADD, {"text": "eggs"})
    made = await _ask(other, LIST, {})
    assert (made.provenance, made.response.body) == ("simulated", "made up")
    assert seen == [("add", None, 1), ("list", extend(None, *ADD, EGGS), 1)]


async def test_faults_and_refused_calls_never_reach_the_history(tmp_path: Path) -> None:
    service = create_service(load_suite(_suite(tmp_path / "s")))
    canon, key = service.canonical(*ADD, {"text": "milk"})
    faulty = CallContext(scope="s", faults=FaultConfig(rate=1.0, kinds=["http_500"]))
    assert (await service.call(*ADD, canon, key, faulty)).provenance == "fault:http_500"
    assert service.history("s") is None
    with pytest.raises(Rejected):  # a refused call (bad arguments) is answered before
        await service.handle("todo", "add", {}, CallContext(scope="s"))
    assert service.history("s") is None
    assert _body(await _ask(service, ADD, {"text": "milk"})) == {"id": 1}


async def test_occurrences_count_per_history(tmp_path: Path) -> None:
    recordings = [
        _rec("add", {"text": "milk"}, {"id": 1}),
        _rec("list", {}, ["first look"], AFTER_MILK, occurrence=1),
        _rec("list", {}, ["second look"], AFTER_MILK, occurrence=2),
    ]
    service = create_service(load_suite(_suite(tmp_path / "s", recordings)))
    for _ in range(3):  # reads before the write do not count toward the reads after it
        assert (await _ask(service, LIST, {})).provenance == "miss"
    await _ask(service, ADD, {"text": "milk"})
    first, second = await _ask(service, LIST, {}), await _ask(service, LIST, {})
    assert (first.occurrence, _body(first)) == (1, ["first look"])
    assert (second.occurrence, _body(second)) == (2, ["second look"])
    assert first.slot == (None, "todo", "list", "{}", 1, AFTER_MILK)


async def test_a_recorded_call_is_admitted_only_after_its_own_history(tmp_path: Path) -> None:
    # recorded from a live system that took arguments its schema refuses
    recordings = [
        _rec("add", {"text": "milk"}, {"id": 1}),
        _rec("done", {"id": "one"}, {"done": 1}, AFTER_MILK),
    ]
    service = create_service(load_suite(_suite(tmp_path / "s", recordings)))
    with pytest.raises(Rejected) as refused:
        await service.handle("todo", "done", {"id": "one"}, CallContext(scope="s"))
    assert refused.value.status == 422
    await service.handle("todo", "add", {"text": "milk"}, CallContext(scope="s"))
    _, _, outcome = await service.handle("todo", "done", {"id": "one"}, CallContext(scope="s"))
    assert _body(outcome) == {"done": 1}
    with pytest.raises(Rejected):  # admitted after milk is not admitted before it
        await service.handle("todo", "done", {"id": "one"}, CallContext(scope="fresh"))


async def test_a_suite_without_writes_is_served_as_before(tmp_path: Path) -> None:
    meta = {"name": "todo", "version": "1"}
    service = create_service(load_suite(_suite(tmp_path / "s", meta=meta)))
    assert service.writes == frozenset() and service.histories is None
    assert _body(await _ask(service, ADD, {"text": "milk"})) == {"id": 1}
    assert service.history("s") is None
    # a recording with a history answers no call of such a suite
    assert _body(await _ask(service, LIST, {})) == []
    assert _body(await _ask(service, ADD, {"text": "milk"})) == {"id": 1}


async def test_answers_made_on_misses_are_kept_under_their_history(tmp_path: Path) -> None:
    class Keeping:
        name, records = "keeping", True
        n = 0

        async def answer(self, miss: Any) -> MissAnswer:
            Keeping.n += 1
            return MissAnswer(Response(body=f"answer {Keeping.n}"), "upstream", "upstream")

        async def aclose(self) -> None:
            return None

    suite = load_suite(_suite(tmp_path / "s", recordings=[]))
    jsonl = tmp_path / "made.jsonl"
    service = create_service(suite, miss_policy=Keeping(), record_to=jsonl)
    assert (await _ask(service, LIST, {})).response.body == "answer 1"
    await _ask(service, ADD, {"text": "milk"})  # answer 2
    assert (await _ask(service, LIST, {})).response.body == "answer 3"  # not answer 1
    assert (await _ask(service, LIST, {}, scope="t")).response.body == "answer 1"  # kept
    await service.aclose()
    lines = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert [(r["api"], r.get("history")) for r in lines] == [
        ("list", None),
        ("add", None),
        ("list", AFTER_MILK),
    ]

    # the same through an overlay, and frozen into the suite
    Keeping.n = 0
    overlay = OverlayStore(tmp_path / "overlay.sqlite")
    service = create_service(suite, miss_policy=Keeping(), overlay=overlay)
    await _ask(service, LIST, {})
    await _ask(service, ADD, {"text": "milk"})
    assert (await _ask(service, LIST, {})).response.body == "answer 3"
    assert (await _ask(service, LIST, {}, scope="t")).response.body == "answer 1"
    assert overlay.get(*LIST, "{}", history=AFTER_MILK)[0].body == "answer 3"  # type: ignore[index]
    assert {(r.api, r.history) for r in overlay.recordings()} == {
        ("list", None),
        ("add", None),
        ("list", AFTER_MILK),
    }
    report = freeze(suite.path, overlay, name="frozen.jsonl")  # type: ignore[arg-type]
    assert report["written"] == 3
    frozen = create_service(load_suite(suite.path))  # type: ignore[arg-type]
    await _ask(frozen, ADD, {"text": "milk"})
    assert _body(await _ask(frozen, LIST, {})) == "answer 3"
    overlay.close()


# -- the recording index ----------------------------------------------------------------------


def test_the_index_keeps_histories_apart_and_refuses_a_bad_one(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path / "s"))
    store = create_service(suite).store
    assert store.get(*LIST, "{}").body == []  # type: ignore[union-attr]
    assert store.get(*LIST, "{}", history=AFTER_MILK).body == ["milk"]  # type: ignore[union-attr]
    assert store.get(*ADD, MILK, history=AFTER_MILK) is None  # recorded at the empty one only
    assert store.has(*ADD, EGGS, history=AFTER_MILK) and not store.has(*ADD, EGGS)
    assert list(store.keys(*LIST)) == ["{}"]  # what nearest looks among: the empty history's
    assert list(store.keys(*ADD)) == [MILK]
    histories = [r.history for r in suite.recordings]
    assert histories == [None, None, AFTER_MILK, AFTER_MILK, AFTER_MILK_EGGS]

    bad = _suite(tmp_path / "bad", [_rec("list", {}, [], "NOT-HEX")])
    with pytest.raises(SuiteError) as caught:
        load_suite(bad)
    assert "todo.jsonl:1: history: must be a string of 1 to 64 lower-case hex digits" in str(
        caught.value
    )


def test_validate_follows_a_reference_along_its_history(tmp_path: Path) -> None:
    task: dict[str, Any] = {
        "id": "shop",
        "query": "Add milk and eggs, then list.",
        "tools": [{"tool": "todo", "api": a} for a in ("add", "list")],
        "reference": {
            "steps": [
                {"tool": "todo", "api": "add", "args": {"text": "milk"}},
                {"tool": "todo", "api": "list", "args": {}},
                {"tool": "todo", "api": "add", "args": {"text": "eggs"}},
                {"tool": "todo", "api": "list", "args": {}},
            ]
        },
    }
    root = _suite(tmp_path / "s")
    (root / "tasks").mkdir()
    (root / "tasks" / "t.yaml").write_text(yaml.safe_dump([task]))
    report = validate_suite(root)
    assert report.errors == [] and report.warnings == []
    task["reference"]["steps"].insert(0, {"tool": "todo", "api": "add", "args": {"text": "tea"}})
    (root / "tasks" / "t.yaml").write_text(yaml.safe_dump([task]))
    report = validate_suite(root)
    assert len(report.warnings) == 5  # off the recorded history from its first step on
    assert "reference step 1 todo/add: no recording for arguments" in report.warnings[0]
    assert report.warnings[1].endswith("(after 1 write call(s) of the reference)")
    assert "(after" not in report.warnings[0]


async def test_identical_misses_of_two_sessions_each_reach_the_policy(tmp_path: Path) -> None:
    # A live system keeps state per session: one session's write answered for another would
    # leave the other's state without it (found recording a to-do server: two episodes' first
    # "add milk" made one call, and the second episode's list lacked its milk).
    reached: list[str] = []
    gate = anyio.Event()

    class Live:
        name, records = "live", False

        async def answer(self, miss: Any) -> MissAnswer:
            reached.append(miss.scope)
            await gate.wait()
            return MissAnswer(Response(body={"id": 1}), "upstream")

        async def aclose(self) -> None:
            return None

    service = create_service(load_suite(_suite(tmp_path / "s", [])), miss_policy=Live())
    async with anyio.create_task_group() as group:
        for scope in ("a", "b"):
            group.start_soon(_ask, service, ADD, {"text": "milk"}, scope)
        with anyio.fail_after(5):  # the second session's call must reach the policy too
            while len(reached) < 2:
                await anyio.sleep(0.01)
        gate.set()
    assert sorted(reached) == ["a", "b"]

    # without writes, identical misses in flight still make one call
    reached.clear()
    gate = anyio.Event()
    stateless = create_service(
        load_suite(_suite(tmp_path / "t", [], meta={"name": "t"})), miss_policy=Live()
    )
    async with anyio.create_task_group() as group:
        for scope in ("a", "b"):
            group.start_soon(_ask, stateless, ADD, {"text": "milk"}, scope)
        await anyio.sleep(0.2)
        gate.set()
    assert len(reached) == 1


async def test_a_live_http_api_recorded_through_upstream_replays_on_its_histories(
    tmp_path: Path,
) -> None:
    # A stateful HTTP API (a to-do list), reached by the upstream miss policy; the suite says
    # which APIs write, so each answer is recorded under the session's writes before it.
    items: list[str] = []

    def api(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/add"):
            items.append(json.loads(request.content)["text"])
            return httpx.Response(200, json={"id": len(items)})
        return httpx.Response(200, json=list(items))

    upstream = Upstream(
        "http://todo.test", client=httpx.AsyncClient(transport=httpx.MockTransport(api))
    )
    policy = UpstreamPolicy(UpstreamPolicy.Options(upstream=upstream))
    root = _suite(tmp_path / "s", recordings=[])
    made = tmp_path / "made.jsonl"
    live = create_service(load_suite(root), miss_policy=policy, record_to=made)
    sequence = [
        (LIST, {}),
        (ADD, {"text": "milk"}),
        (LIST, {}),
        (ADD, {"text": "eggs"}),
        (LIST, {}),
    ]
    answered = [(await _ask(live, *call)).response.body for call in sequence]
    await live.aclose()
    assert answered == [[], {"id": 1}, ["milk"], {"id": 2}, ["milk", "eggs"]]

    (root / "recordings" / "todo.jsonl").write_text(made.read_text())
    offline = create_service(load_suite(root))  # the API gone: the recordings answer
    assert [_body(await _ask(offline, *call, scope="again")) for call in sequence] == answered
