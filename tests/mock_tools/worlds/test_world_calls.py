"""``WorldEngine.call`` makes a call as the server makes it: the arguments canonical under the
tool's schema ("200" for an integer is 200), so a gold replay, a verdict's replay and an env
assertion reach the state a run's call reached."""

from __future__ import annotations

from pathlib import Path

from mock_tools import load_suite
from mock_tools.worlds.verdict import Action, replay

TINY = Path(__file__).resolve().parents[2] / "fixtures" / "suites" / "tinyworld"


def test_a_call_takes_its_arguments_as_the_server_canonicalises_them() -> None:
    suite = load_suite(TINY)
    engine = suite.world
    assert engine is not None
    task = suite.task("pay_bob")
    start = engine.initial(task.id, task.world)
    now = engine.clock(task.world)
    typed = {"source": "A-1", "target": "A-3", "amount": 200, "memo": "rent"}
    texted = {**typed, "amount": "200"}
    want = engine.call(start, "transfer", typed, now=now, task=task.id)
    got = engine.call(start, "transfer", texted, now=now, task=task.id)
    assert want.ok and got.ok, got.error
    assert got.state.hash == want.state.hash
    # a verdict's replay of a recorded call sent with text for the number reaches its state
    done = replay(engine, task, [Action("transfer", texted, want.state.hash, "call 1", 0)], 0)
    assert done.divergence is None and done.final.hash == want.state.hash
