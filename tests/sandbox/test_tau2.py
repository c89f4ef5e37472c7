"""τ²-bench domains as world suites: ``sandbox import tau2`` on a hand-made checkout in τ²'s
layout (tests/fixtures/tau2: a framework of our own and a two-tool library domain), the engine
that runs the domain's code in a worker of the checkout's Python, runs scored by τ²'s rules and
``sandbox export tau2``."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from mock_tools import load_suite
from mock_tools.models import Task
from mock_tools.worlds.errors import WorldDefinitionError
from mock_tools.worlds.sessions import WorldSessions
from mock_tools.worlds.state import State
from mock_tools.worlds.task import TaskWorld, WorldChecks
from mock_tools.worlds.tau2 import Tau2Engine, content_body, content_text
from mock_tools.worlds.verdict import judge, replay
from sandbox.cli import main
from sandbox.interop.export_tau2 import agreement
from sandbox.store import read_trajectories

CHECKOUT = Path(__file__).resolve().parents[1] / "fixtures" / "tau2"


def _import(tmp_path: Path, checkout: Path = CHECKOUT, capsys: Any = None) -> Path:
    out = tmp_path / "library"
    code = main(
        [
            "import",
            "tau2",
            str(checkout),
            "--domain",
            "library",
            "--out",
            str(out),
            "--python",
            sys.executable,
        ]
    )
    assert code == 0
    return out


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _import(tmp_path_factory.mktemp("tau2"))


@pytest.fixture(scope="module")
def engine(suite_dir: Path) -> Tau2Engine:
    world = load_suite(suite_dir).world
    assert isinstance(world, Tau2Engine)
    return world


def _tasks(suite_dir: Path) -> dict[str, Task]:
    return {t.id: t for t in load_suite(suite_dir).tasks}


def test_the_database_becomes_the_state_and_each_task_a_persona_with_taus_checks(
    suite_dir: Path,
) -> None:
    books = json.loads((suite_dir / "state" / "books.json").read_text())
    assert books["B2"] == {"title": "Emma", "borrower": "zoe", "times_borrowed": 3}
    assert json.loads((suite_dir / "state" / "log.json").read_text()) == {}
    tasks = _tasks(suite_dir)
    borrow = tasks["borrow"]
    assert borrow.user is not None and borrow.user.persona is not None
    assert borrow.user.persona.scenario == "A regular reader.\n\nYou want to borrow Moby Dick."
    assert borrow.user.persona.known == {"known_info": "Your name is ada; the book's id is B1."}
    assert borrow.user.persona.unknown == ["You do not know who wrote it."]
    assert borrow.user.persona.instructions == "Ask to borrow it."
    assert borrow.user.communicate == ["B1"]  # COMMUNICATE is in its reward basis
    assert [(s.api, s.args) for s in borrow.reference.steps] == [
        ("get_book", {"book_id": "B1"}),
        ("borrow_book", {"book_id": "B1", "reader": "ada"}),
    ]
    assert {(r.tool, r.api) for r in borrow.tools} == {
        ("library", "get_book"),
        ("library", "borrow_book"),
    }
    # taken: its one gold action fails in τ² too, so its gold is the initial state
    taken = tasks["taken"]
    assert taken.reference.steps == [] and taken.world is not None
    assert taken.world.checks.gold and "gold" in taken.world.checks.model_fields_set
    assert taken.user is not None and taken.user.communicate == []
    # returned_first: τ²'s set_state made its initial state; ACTION compares book_id only
    first = tasks["returned_first"]
    assert first.world is not None
    # its unknown_info is "." (as in two of retail's tasks): no fact, which any sentence leaked
    assert first.user is not None and first.user.persona is not None
    assert first.user.persona.unknown == []
    assert first.world.state == {
        "books": {"B2": {"title": "Emma", "borrower": None, "times_borrowed": 3}}
    }
    assert [(p.api, p.args) for p in first.world.checks.require.actions] == [
        ("borrow_book", {"book_id": "B2"})
    ]


def test_the_policy_and_tools_are_taus(engine: Tau2Engine) -> None:
    assert engine.policy.startswith("# Library policy")
    assert engine.kind("borrow_book") == "write" and engine.kind("get_book") == "read"
    spec = engine.tool_spec()
    assert [a.name for a in spec.apis] == ["borrow_book", "get_book"]
    assert spec.apis[0].parameters["required"] == ["book_id", "reader"]


def test_the_import_prints_what_it_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _import(tmp_path)
    summary = json.loads(capsys.readouterr().out)
    assert summary["tasks"] == 3 and summary["tools"] == 2 and summary["records"] == 2
    assert summary["nl_assertions"] == 1 and summary["initial_states"] == 1
    assert summary["gold_errors"] == ["taken: action 1 borrow_book: Error: Book already borrowed"]


def test_a_call_runs_taus_code_and_the_state_follows(engine: Tau2Engine) -> None:
    base = engine.base
    ok = engine.execute(base, "borrow_book", {"book_id": "B1", "reader": "ada"}, key="k", now=None)
    assert ok.ok and ok.body == {"title": "Moby Dick", "borrower": "ada", "times_borrowed": 1}
    assert ok.state.get("books", "B1")["borrower"] == "ada"
    assert ok.state.get("log", "000000") == "ada borrowed B1"
    assert {(c.collection, c.id) for c in ok.changes} == {("books", "B1"), ("log", "000000")}
    # the engine checks the worker reached the hash it computes itself
    assert ok.state.hash == State.from_documents(ok.state.to_documents()).hash
    again = engine.execute(
        ok.state, "borrow_book", {"book_id": "B1", "reader": "bob"}, key="k", now=None
    )
    assert not again.ok and again.error == "Error: Book already borrowed"
    assert again.state == ok.state and again.changes == []
    read = engine.execute(ok.state, "get_book", {"book_id": "B1"}, key="k", now=None)
    assert read.ok and read.body["borrower"] == "ada" and read.state == ok.state
    assert engine.execute(base, "nope", {}, key="k", now=None).error.endswith("no tool 'nope'")


def test_a_state_the_worker_lost_is_sent_again(engine: Tau2Engine) -> None:
    first = engine.execute(
        engine.base, "borrow_book", {"book_id": "B1", "reader": "eve"}, key="k", now=None
    )
    engine.worker.stop()  # a new worker knows the base state only
    starts = engine.worker.starts
    read = engine.execute(first.state, "get_book", {"book_id": "B1"}, key="k", now=None)
    assert engine.worker.starts == starts + 1
    assert read.ok and read.body["borrower"] == "eve"


def test_a_checkout_changed_since_the_import_is_refused(tmp_path: Path) -> None:
    checkout = Path(shutil.copytree(CHECKOUT, tmp_path / "checkout"))
    suite = _import(tmp_path, checkout)
    policy = checkout / "data" / "tau2" / "domains" / "library" / "policy.md"
    policy.write_text(policy.read_text() + "Be brief.\n")
    engine = load_suite(suite).world
    assert isinstance(engine, Tau2Engine)
    with pytest.raises(WorldDefinitionError, match="tools or policy changed since the import"):
        engine.execute(engine.base, "get_book", {"book_id": "B1"}, key="k", now=None)
    policy.write_text(policy.read_text().replace("Be brief.\n", ""))
    db = checkout / "data" / "tau2" / "domains" / "library" / "db.json"
    db.write_text(db.read_text().replace("Moby Dick", "Moby-Dick"))
    engine = load_suite(suite).world
    assert isinstance(engine, Tau2Engine)
    with pytest.raises(WorldDefinitionError, match="database changed since the import"):
        engine.execute(engine.base, "get_book", {"book_id": "B1"}, key="k", now=None)


def test_a_checkout_without_the_domain_is_one_line_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkout = Path(shutil.copytree(CHECKOUT, tmp_path / "checkout"))
    (checkout / "data" / "tau2" / "domains" / "library" / "db.json").unlink()
    out = tmp_path / "out"
    code = main(["import", "tau2", str(checkout), "--domain", "library", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert "has no library domain: missing data/tau2/domains/library/db.json" in err
    assert len(err.strip().splitlines()) <= 2 and "Traceback" not in err
    assert not (out / "suite.yaml").exists()
    code = main(["import", "tau2", str(CHECKOUT), "--domain", "airline", "--out", str(out)])
    assert code == 2
    assert "missing src/tau2/domains/airline/environment.py" in capsys.readouterr().err


def test_gold_written_on_a_task_without_gold_actions_asks_for_the_initial_state(
    engine: Tau2Engine,
) -> None:
    task = Task(id="t", query="q", world=TaskWorld(checks=WorldChecks(gold=True)))
    write = replay(
        engine,
        task,
        [_action("borrow_book", {"book_id": "B1", "reader": "ada"})],
        0,
    )
    verdict = judge(engine, task, write, 0)
    assert [(c.kind, c.passed) for c in verdict.checks] == [("gold", False)]
    assert verdict.gold == engine.base.hash
    nothing = judge(engine, task, replay(engine, task, [], 0), 0)
    assert [(c.kind, c.passed) for c in nothing.checks] == [("gold", True)]
    unset = Task(id="t", query="q", world=TaskWorld())  # gold left to its default: no check
    assert judge(engine, unset, write, 0).checks == []


def _action(api: str, args: dict[str, Any]) -> Any:
    from mock_tools.worlds.verdict import Action

    return Action(api, args)


def test_content_round_trips_as_tau_compares_it() -> None:
    for content in ('{"a": [1, 2.5, null]}', "4.0", "plain text", '"quoted"'):
        assert json_or_text(content_text(content_body(content))) == json_or_text(content)


def json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def test_a_run_is_scored_by_taus_rules_and_exported_in_taus_format(
    suite_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs"
    code = main(
        ["run", "--suite", str(suite_dir), "--model", "reference", "--out", str(out), "--json"]
    )
    assert code == 0
    assert json.loads(capsys.readouterr().out)["pass_rate"] == 1.0
    run = next(out.iterdir())
    results = tmp_path / "results.json"
    assert main(["export", "tau2", str(run), "--out", str(results)]) == 0
    capsys.readouterr()
    data = json.loads(results.read_text())
    assert data["info"]["environment_info"]["domain_name"] == "library"
    assert {t["id"] for t in data["tasks"]} == {"borrow", "taken", "returned_first"}
    sims = {s["task_id"]: s for s in data["simulations"]}
    borrow = sims["borrow"]
    assert borrow["termination_reason"] == "user_stop"
    assert borrow["reward_info"]["reward"] == 1.0
    roles = [m["role"] for m in borrow["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant", "user"]
    call, answer = borrow["messages"][3], borrow["messages"][4]
    assert call["tool_calls"][0]["name"] == "borrow_book"
    assert call["tool_calls"][0]["arguments"] == {"book_id": "B1", "reader": "ada"}
    assert answer["id"] == call["tool_calls"][0]["id"] and not answer["error"]
    assert json.loads(answer["content"])["borrower"] == "ada"
    assert borrow["messages"][5]["content"] == "Thank you, it is done. B1."
    # τ²'s evaluator writes its rewards into a copy; --against lists each disagreement
    data["simulations"][0]["reward_info"]["reward"] = 0.0
    regraded = tmp_path / "regraded.json"
    regraded.write_text(json.dumps(data))
    found = agreement(run, regraded)
    assert found["agree"] == 2 and found["disagree"] == 1
    assert found["disagreements"][0]["task"] == data["simulations"][0]["task_id"]
    assert read_trajectories(run)[0].world is not None
    # a results file inside the run would replace the run's own files
    manifest = (run / "manifest.json").read_bytes()
    assert main(["export", "tau2", str(run), "--out", str(run / "manifest.json")]) == 2
    assert "inside the run folder" in capsys.readouterr().err
    assert (run / "manifest.json").read_bytes() == manifest
    # an existing file is not written over; a --against that is no τ² results file is one line
    assert main(["export", "tau2", str(run), "--out", str(results)]) == 2
    assert "exists" in capsys.readouterr().err
    for junk in ("not json", "[1, 2]", '{"simulations": [{"reward_info": {}}]}'):
        regraded.write_text(junk)
        assert main(["export", "tau2", str(run), "--against", str(regraded)]) == 2
        err = capsys.readouterr().err
        assert "not a τ² results file" in err and "Traceback" not in err


@pytest.mark.parametrize("domain", ["../library", "/tmp/library", "library/x", "a b"])
def test_a_domain_that_is_not_a_name_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], domain: str
) -> None:
    """--domain names a package of tau2.domains: a path there joined the checkout's folders
    onto another (an absolute one replaced them) and ended in a traceback."""
    argv = ["import", "tau2", str(CHECKOUT), "--domain", domain, "--out", str(tmp_path / "o")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "is not a domain's name" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_the_workers_start_is_not_charged_to_a_call(suite_dir: Path, tmp_path: Path) -> None:
    """A worker that takes longer to start than a call may last (τ²'s imports on a loaded
    machine) still answers the first call, and the call after a worker was lost: the start runs
    before the call, outside its time limit (it timed the first call of a run out)."""
    engine = load_suite(suite_dir).world
    assert isinstance(engine, Tau2Engine)
    slow = tmp_path / "slow-python"
    slow.write_text(f'#!/bin/sh\nsleep 1.5\nexec "{sys.executable}" "$@"\n')
    slow.chmod(0o755)
    engine.worker.python = str(slow)
    sessions = WorldSessions(engine, {}, call_seconds=1.0)
    assert not engine.ready()
    args = {"book_id": "B1", "reader": "ada"}
    _, first = asyncio.run(sessions.call("s", None, "borrow_book", args, "k"))
    assert first.ok and first.body["borrower"] == "ada" and engine.ready()
    engine.worker.stop()  # lost: the next call's prepare starts another, which re-gets the state
    assert not engine.ready()
    _, read = asyncio.run(sessions.call("s", None, "get_book", {"book_id": "B1"}, "k"))
    assert read.ok and read.body["borrower"] == "ada"
    assert engine.worker.starts == 2
    sessions.close()
    engine.worker.stop()


# -- dual control (telecom's shape): the hand-made `phone` domain ---------------------------------


@pytest.fixture(scope="module")
def phone_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tau2phone") / "phone"
    args = ["import", "tau2", str(CHECKOUT), "--domain", "phone", "--out", str(out)]
    assert main([*args, "--python", sys.executable]) == 0
    return out


def test_the_users_gold_actions_are_the_users_and_the_reference_asks_for_them(
    phone_dir: Path,
) -> None:
    tasks = _tasks(phone_dir)
    roam = tasks["roam_abroad"]
    by = [(s.api, s.by, s.turn) for s in roam.reference.steps]
    assert by == [
        ("get_line", "agent", 0),
        ("enable_roaming", "agent", 0),
        ("toggle_roaming", "user", 1),
    ]
    assert roam.reference.replies == ["Could you please do this on your device: toggle roaming?"]
    assert {a.api for a in roam.tools} == {"get_line", "enable_roaming"}  # never the user's
    assert roam.user is not None and roam.user.persona is not None
    assert [a.api for a in roam.user.persona.act] == ["toggle_roaming"]
    assert roam.world is not None
    (env,) = roam.world.checks.env_assertions
    assert (env.call, env.side, env.args, env.value) == (
        "assert_data_working",
        "user",
        {"expected": True},
        True,
    )
    assert roam.world.checks.gold is False  # ENV_ASSERTION alone: no database check
    # the user's two actions come first: one reply asks for both, the agent's step follows
    first = tasks["switch_first"]
    assert [(s.by, s.turn) for s in first.reference.steps] == [
        ("user", 1),
        ("user", 1),
        ("agent", 1),
    ]
    assert first.reference.replies == [
        "Could you please do this on your device: toggle roaming; then check status?"
    ]
    engine = load_suite(phone_dir).world
    assert isinstance(engine, Tau2Engine)
    assert sorted(engine.user_tools) == ["check_status", "toggle_roaming"]
    # the user's database: its phone (a model, with a null field) is one record, not one per field
    device = engine.base.to_documents()["user-device"]
    assert device == {
        "@": {"wifi_ssid": None, "abroad": False, "roaming_on": False, "data_working": True}
    }
    assert engine.base.to_documents()["user-line_id"] == {"@": "L1"}
    assert sorted(a.name for a in engine.tool_spec().apis) == ["enable_roaming", "get_line"]


def test_taus_env_assertions_run_in_the_worker_on_the_final_state(phone_dir: Path) -> None:
    suite = load_suite(phone_dir)
    engine = suite.world
    assert isinstance(engine, Tau2Engine)
    task = {t.id: t for t in suite.tasks}["roam_abroad"]
    assert task.world is not None
    (want,) = task.world.checks.env_assertions
    start = engine.initial(task.id, task.world)
    kw: dict[str, Any] = {"now": engine.default_now, "task": task.id, "seed": 0}
    assert engine.env_assertion(start, want, **kw) == (False, "not met")
    state = start
    for api, args in (("enable_roaming", {"line_id": "L1"}), ("toggle_roaming", {})):
        state = engine.execute(state, api, args, key="", **kw).state
    assert engine.env_assertion(state, want, **kw) == (True, "met")
    missing = want.model_copy(update={"call": "assert_nothing"})
    met, why = engine.env_assertion(state, missing, **kw)
    assert not met and "failed to run" in why


def test_a_dual_control_run_plays_the_gold_and_exports_the_users_calls_as_taus(
    phone_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs"
    args = ["run", "--suite", str(phone_dir), "--model", "reference", "--out", str(out)]
    assert main([*args, "--agent", "dfsdt", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pass_rate"] == 1.0
    run = next(out.iterdir())
    results = tmp_path / "results.json"
    assert main(["export", "tau2", str(run), "--out", str(results)]) == 0
    sims = {s["task_id"]: s for s in json.loads(results.read_text())["simulations"]}
    messages = sims["switch_first"]["messages"]
    asked = next(i for i, m in enumerate(messages) if m["role"] == "user" and m.get("tool_calls"))
    calls = messages[asked]["tool_calls"]
    assert [(c["name"], c["requestor"]) for c in calls] == [
        ("toggle_roaming", "user"),
        ("check_status", "user"),
    ]
    assert [m["role"] for m in messages[asked + 1 : asked + 4]] == ["tool", "tool", "user"]
    assert messages[asked + 1]["requestor"] == "user"
    assert messages[asked + 3]["content"].startswith("Done. toggle roaming:")
    capsys.readouterr()
    assert main(["replay", str(run)]) == 0
    assert "REPRODUCED: 2/2 episodes identical" in capsys.readouterr().out


def test_the_worker_answers_when_its_pipe_is_a_descriptor_above_1024(suite_dir: Path) -> None:
    """A process holding many files (a long run, a test session) gives the worker's pipes high
    descriptor numbers, which ``select.select`` refuses ("filedescriptor out of range")."""
    import os
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"this machine allows {hard} open files, too few to pass 1024")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held: list[int] = []
    try:
        while not held or held[-1] < 1030:
            held.append(os.dup(0))
        engine = load_suite(suite_dir).world
        assert isinstance(engine, Tau2Engine)
        engine.worker.stop()
        try:
            found = engine.worker.request({"op": "describe"}, 60)
            assert found["domain"] == "library"
        finally:
            engine.worker.stop()
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
