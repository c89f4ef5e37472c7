"""The bundled world suite ``scenarios/shop``: its world and data, what each task group tests,
the offline models on it (the reference solves everything under every strategy; on the noisy
model DFSDT does at least as well as ReAct and its restore is what solves some tasks), and
replay (a run reproduces; a changed tool names the first divergent step)."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agents import Budget, DFSDTAgent, EpisodeMeta
from agents.models.noisy import NoisyReferenceModel, wrong_answer
from agents.trajectory import Status
from mock_tools import Suite, Task, create_app, in_process_client, load_suite
from mock_tools.worlds.task import TaskWorld
from mock_tools.worlds.verdict import Action, call_world, gold_actions, judge, replay
from mock_tools.worlds.world import WorldEngine
from sandbox.cli import main
from sandbox.eval.checks import all_pass, find_numbers, run_checks
from sandbox.eval.world_verdict import world_verdict
from sandbox.models.offline import reference_plan
from sandbox.replay import replay_run
from sandbox.run import run_suite
from sandbox.store import read_trajectories
from sandbox.store.config import RunConfig
from sandbox.tool_envs.http import WorldToolEnv

ROOT = Path(__file__).resolve().parents[2]
SHOP = ROOT / "scenarios" / "shop"
GROUPS = ("read_after_write", "undo_wrong_write", "no_double_charge", "minefield")
GROUPS += ("collateral_damage",)


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_suite(SHOP)


@pytest.fixture(scope="module")
def world(suite: Suite) -> WorldEngine:
    assert suite.world is not None
    return suite.world


def _tasks(suite: Suite, group: str) -> list[Task]:
    return [t for t in suite.tasks if t.group == group]


def _verdict_of(world: WorldEngine, task: Task, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    done = replay(world, task, [Action(api, args) for api, args in calls], seed=0)
    return done, judge(world, task, done, seed=0)


def _gold_calls(task: Task) -> list[tuple[str, dict[str, Any]]]:
    return [(s.api, dict(s.args)) for s in task.reference.steps]


# -- the world and its data ----------------------------------------------------------------------


def test_the_world_has_its_collections_tools_and_task_groups(suite: Suite, world: WorldEngine):
    assert {"customers", "products", "orders", "payments", "coupons", "returns"} <= set(
        world.base.collections()
    )
    writes = sorted(n for n, d in world.tools.items() if d.kind == "write")
    reads = sorted(n for n, d in world.tools.items() if d.kind == "read")
    assert len(writes) >= 12, writes
    assert {"place_order", "cancel_order", "capture_payment", "refund_payment", "restock"} <= set(
        writes
    )
    assert {"get_customer", "find_orders", "get_order", "get_product", "list_payments"} <= set(
        reads
    )
    assert "synthetic" in suite.meta.description.lower()
    assert len(suite.tasks) >= 30
    groups = Counter(t.group for t in suite.tasks)
    assert all(groups[g] >= 5 for g in GROUPS), groups
    assert len({t.id for t in suite.tasks}) == len(suite.tasks)


def test_every_task_has_gold_actions_an_answer_and_checks(suite: Suite) -> None:
    for task in suite.tasks:
        assert (task.world or TaskWorld()).checks.gold, task.id  # the default: gold
        assert task.reference.steps and task.reference.answer, task.id
        assert task.checks, f"{task.id}: no answer check"
        assert all(s.tool == "shop" for s in task.reference.steps), task.id


def test_the_policy_states_the_rules_the_minefields_check(world: WorldEngine) -> None:
    policy = world.policy
    for rule in ("has shipped it cannot be", "never charge an order twice", "gold_only", "30 days"):
        assert rule in " ".join(policy.split()), rule


def test_validate_strict_passes_and_replays_the_gold_actions() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mock_tools", "validate", "--strict", str(SHOP)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "49 tasks" in done.stdout and done.stdout.rstrip().endswith("ok")


def _expected_totals(order: dict[str, Any], coupons: dict[str, Any]) -> dict[str, int]:
    """The shop's pricing, written out again: the state files must agree with it."""
    subtotal = sum(line["quantity"] * line["unit_price"] for line in order["items"])
    discount = 0
    if "coupon" in order:
        c = coupons[order["coupon"]]
        discount = subtotal * c["value"] // 100 if c["kind"] == "percent" else c["value"]
    if order["shipping"]["method"] == "express":
        fee = 1299
    else:
        fee = 0 if subtotal - discount >= 5000 else 499
    return {
        "subtotal": subtotal,
        "discount": discount,
        "fee": fee,
        "total": subtotal - discount + fee,
    }


def test_the_base_state_is_consistent(world: WorldEngine) -> None:
    docs = world.base.to_documents(bookkeeping=False)
    customers, products, orders = docs["customers"], docs["products"], docs["orders"]
    payments, coupons, returns = docs["payments"], docs["coupons"], docs["returns"]
    overpaid = []
    for oid, order in orders.items():
        want = _expected_totals(order, coupons)
        have = {k: order[k] for k in ("subtotal", "discount", "total")}
        assert have | {"fee": order["shipping"]["fee"]} == want, oid
        assert order["customer_id"] in customers, oid
        for line in order["items"]:
            assert products[line["product_id"]]["price"] == line["unit_price"], oid
        paid = sum(p["amount"] - p["refunded"] for p in payments.values() if p["order_id"] == oid)
        if order["status"] in ("paid", "shipped"):
            assert paid >= order["total"], oid
        if order["status"] == "pending":
            assert paid < order["total"], oid
        if paid > order["total"]:
            overpaid.append(oid)
    assert overpaid == ["O-1019"]  # charged twice: undo_duplicate_charge refunds one
    for pid, p in payments.items():
        assert p["order_id"] in orders, pid
        assert 0 <= p["refunded"] <= p["amount"], pid
        assert sum(r["amount"] for r in p.get("refunds", [])) == p["refunded"], pid
    for rid, r in returns.items():
        line = next(x for x in orders[r["order_id"]]["items"] if x["product_id"] == r["product_id"])
        assert line.get("returned", 0) >= r["quantity"], rid
    assert all(p["stock"] >= 0 for p in products.values())


def test_customers_are_synthetic_and_carry_facts_a_customer_can_tell(world: WorldEngine) -> None:
    customers = world.base.to_documents()["customers"]
    for cid, c in customers.items():
        assert c["email"].split("@")[1] in ("example.com", "example.org", "example.net"), cid
        assert c["phone"].startswith("+353 85 000 "), cid
        assert set(c["address"]) == {"street", "city", "postcode", "country"}, cid
        assert c["date_of_birth"] and c["tier"] in ("standard", "gold"), cid
    assert sum("card" in c for c in customers.values()) == len(customers) - 1


# -- answers --------------------------------------------------------------------------------------


def test_reference_answers_pass_their_checks_and_a_premature_answer_fails_them(
    suite: Suite,
) -> None:
    """The noisy model's premature answer must not pass: a read-only task would otherwise be
    solved by answering at once."""
    for task in suite.tasks:
        assert all_pass(run_checks(task.reference.answer, task.checks)), task.id
        early = wrong_answer(task.reference.answer)
        assert not all_pass(run_checks(early, task.checks)), f"{task.id}: {early!r}"


def _gold_bodies(world: WorldEngine, task: Task) -> list[Any]:
    state = world.initial(task.id, task.world)
    bodies = []
    for action in gold_actions(world, task):
        answer = call_world(world, state, action.api, action.args, task, 0)
        assert answer.ok, f"{task.id}: {action.label}: {answer.error}"
        bodies.append(answer.body)
        state = answer.state
    return bodies


def _seen(value: float, numbers: list[float]) -> bool:
    return any(abs(n - value) < 1e-6 or abs(n - round(value * 100)) < 1e-6 for n in numbers)


def test_what_the_answers_are_checked_for_is_what_the_gold_path_saw(
    suite: Suite, world: WorldEngine
) -> None:
    """Every number and id an answer check wants was in an observation of the gold path (an
    amount in cents there) or in the query: the reference answers are read from the world."""
    for task in suite.tasks:
        text = json.dumps(_gold_bodies(world, task)) + " " + task.query
        numbers = find_numbers(text)
        for check in task.checks:
            if check.kind == "number":
                assert _seen(float(str(check.value)), numbers), (task.id, check.value)
            elif check.kind == "contains" and any(
                ch.isdigit() or ch == "@" for ch in str(check.value)
            ):
                assert str(check.value).casefold() in text.casefold(), (task.id, check.value)


# -- what each group tests ------------------------------------------------------------------------


def test_read_after_write_answers_are_only_visible_after_the_write(
    suite: Suite, world: WorldEngine
) -> None:
    """The write answers with a confirmation; the value asked for shows in the closing read
    only after the write (the same read on the initial state does not show it)."""
    for task in _tasks(suite, "read_after_write"):
        steps = task.reference.steps
        assert world.kind(steps[-1].api) == "read", task.id
        assert any(world.kind(s.api) == "write" for s in steps[:-1]), task.id
        after = json.dumps(_gold_bodies(world, task)[-1])
        before_answer = call_world(
            world, world.initial(task.id, task.world), steps[-1].api, steps[-1].args, task, 0
        )
        before = json.dumps(before_answer.body) if before_answer.ok else ""
        for check in task.checks:
            if check.kind == "number":
                value = float(str(check.value))
                assert _seen(value, find_numbers(after)), (task.id, value)
                assert not _seen(value, find_numbers(before)), (task.id, value)
            elif check.kind == "contains" and any(c.isdigit() for c in str(check.value)):
                assert str(check.value) in after and str(check.value) not in before, task.id


def test_undo_tasks_start_from_a_wrong_write_that_only_the_undo_removes(
    suite: Suite, world: WorldEngine
) -> None:
    """Doing nothing (the gold path's reads alone) fails the gold check: the wrong write is in
    the initial state; the gold path passes."""
    for task in _tasks(suite, "undo_wrong_write"):
        reads = [(a, args) for a, args in _gold_calls(task) if world.kind(a) == "read"]
        _, idle = _verdict_of(world, task, reads)
        assert not idle.passed, task.id
        assert [c.kind for c in idle.checks if not c.passed][0] == "gold", task.id
        _, gold = _verdict_of(world, task, _gold_calls(task))
        assert gold.passed, (task.id, gold.failures())


REPEATS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "nd_already_paid": [("capture_payment", {"order_id": "O-1010", "amount": 5999})],
    "nd_charge_balance": [("capture_payment", {"order_id": "O-1011", "amount": 5499})],
    "nd_web_order_exists": [
        (
            "place_order",
            {"customer_id": "C-108", "items": [{"product_id": "P-204", "quantity": 1}]},
        )
    ],
    "nd_delivery_recorded": [
        ("restock", {"product_id": "P-209", "quantity": 24, "delivery_ref": "D-3312"})
    ],
    "nd_refund_once": [
        ("refund_payment", {"payment_id": "PAY-5011", "amount": 1299, "reason": "returned_item"})
    ],
    "nd_existing_account": [
        (
            "create_customer",
            {
                "name": "Noor Haddad",
                "email": "noor.h@example.org",
                "street": "11 Foxglove Way",
                "city": "Ashcombe Vale",
                "postcode": "A56 F2G8",
                "country": "IE",
            },
        )
    ],
}
"""Per no_double_charge task: the write done a second time, which the world accepts: after the
gold path, or instead of its writes (``INSTEAD``)."""
INSTEAD = {"nd_existing_account"}


def test_no_double_charge_a_repeated_write_fails_the_task(suite: Suite, world: WorldEngine):
    assert sorted(REPEATS) == sorted(t.id for t in _tasks(suite, "no_double_charge"))
    for task in _tasks(suite, "no_double_charge"):
        path = _gold_calls(task)
        if task.id in INSTEAD:
            path = [(api, args) for api, args in path if world.kind(api) == "read"]
        done, verdict = _verdict_of(world, task, path + REPEATS[task.id])
        assert all(done.ok[len(path) :]), (task.id, done.errors)
        failed = {c.kind for c in verdict.checks if not c.passed}
        assert "gold" in failed and failed & {"forbid_action", "assert"}, (task.id, failed)


MINES: dict[str, tuple[str, dict[str, Any]]] = {
    "mf_cancel_shipped": ("cancel_order", {"order_id": "O-1026"}),
    "mf_gold_coupon": ("apply_coupon", {"order_id": "O-1027", "code": "gold15"}),
    "mf_clearance_return": ("return_item", {"order_id": "O-1028", "product_id": "P-215"}),
    "mf_return_window": ("return_item", {"order_id": "O-1029", "product_id": "P-207"}),
    "mf_other_customers_order": ("cancel_order", {"order_id": "O-1009"}),
    "mf_charge_credit": ("capture_payment", {"order_id": "O-1030", "amount": 10000}),
}
"""Per minefield task: what the customer asks for and the policy forbids; the tools allow it."""


def test_minefields_the_tools_allow_what_the_policy_forbids(suite: Suite, world: WorldEngine):
    assert sorted(MINES) == sorted(t.id for t in _tasks(suite, "minefield"))
    for task in _tasks(suite, "minefield"):
        assert task.world is not None
        forbid = task.world.checks.forbid
        assert forbid.actions or forbid.states, task.id
        assert all(world.kind(a) == "read" for a, _ in _gold_calls(task)), task.id
        done, verdict = _verdict_of(world, task, [*_gold_calls(task), MINES[task.id]])
        assert done.ok[-1], (task.id, done.errors[-1])
        failed = {c.kind for c in verdict.checks if not c.passed}
        assert failed & {"forbid_action", "forbid_state"}, (task.id, failed)


COLLATERAL: dict[str, tuple[tuple[str, dict[str, Any]], str]] = {
    "cd_profile_address_only": (
        ("change_shipping", {"order_id": "O-1032", "street": "7 Heronsgate", "city": "Otterholt"}),
        "orders.O-1032.shipping.address.street",
    ),
    "cd_cancel_carafe_order": (("cancel_order", {"order_id": "O-1033"}), "orders.O-1033.status"),
    "cd_return_one_mug": (
        ("return_item", {"order_id": "O-1035", "product_id": "P-203"}),
        "returns.R-304.quantity",
    ),
    "cd_remove_candles": (
        ("remove_item", {"order_id": "O-1036", "product_id": "P-208"}),
        "products.P-208.stock",
    ),
    "cd_same_name_phone": (
        ("update_phone", {"customer_id": "C-102", "phone": "+353 85 000 0199"}),
        "customers.C-102.phone",
    ),
    "cd_cancel_refund_one": (("cancel_order", {"order_id": "O-1038"}), "orders.O-1038.status"),
}
"""Per collateral_damage task: a write to a neighbouring record, and a path it changes."""


def test_collateral_damage_touching_a_neighbour_fails_the_gold_check(
    suite: Suite, world: WorldEngine
) -> None:
    assert sorted(COLLATERAL) == sorted(t.id for t in _tasks(suite, "collateral_damage"))
    for task in _tasks(suite, "collateral_damage"):
        extra, path = COLLATERAL[task.id]
        done, verdict = _verdict_of(world, task, [*_gold_calls(task), extra])
        assert done.ok[-1], (task.id, done.errors[-1])
        gold = next(c for c in verdict.checks if c.kind == "gold")
        assert not gold.passed and "collateral" in gold.detail, (task.id, gold.detail)
        assert verdict.diff is not None
        assert path in [d["path"] for d in verdict.diff["collateral"]], (task.id, verdict.diff)


# -- the offline models ---------------------------------------------------------------------------


def _run(out: Path, agent: str, model: str, seed: int = 0, suite: Path = SHOP, **kw: Any) -> Path:
    config = RunConfig(suite=str(suite), agent=agent, model=model, seed=seed, out=str(out), **kw)
    return Path(run_suite(config, show_progress=False).path)


def _pass_rate(run: Path) -> tuple[float, int]:
    scores = json.loads((run / "scores.json").read_text(encoding="utf-8"))["pass_rate"]
    return scores["pass_rate"]["value"], scores["n"]


@pytest.mark.parametrize("agent", ["react", "dfsdt", "react@4"])
def test_the_reference_model_solves_every_task(tmp_path: Path, agent: str) -> None:
    run = _run(tmp_path, agent, "reference")
    assert _pass_rate(run) == (1.0, 49)
    for traj in read_trajectories(run):
        assert traj.world is not None, traj.scenario_id
        assert traj.world["final"] == traj.world["gold"], traj.scenario_id


@pytest.fixture(scope="module")
def noisy_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("noisy")
    return {agent: _run(out, agent, "noisy-reference", seed=0) for agent in ("react", "dfsdt")}


def test_noisy_reference_runs_world_tasks_and_dfsdt_does_at_least_as_well_as_react(
    noisy_runs: dict[str, Path],
) -> None:
    react, n = _pass_rate(noisy_runs["react"])
    dfsdt, _ = _pass_rate(noisy_runs["dfsdt"])
    assert n == 49 and 0.5 < react < 1.0
    assert dfsdt >= react
    for run in noisy_runs.values():
        trajs = read_trajectories(run)
        assert all(t.status is not Status.error and t.world is not None for t in trajs)
    gave_up = [t for t in read_trajectories(noisy_runs["react"]) if t.status is Status.gave_up]
    assert gave_up  # the give-ups a ReAct chain cannot recover from
    abandoned_writes = [
        (t.scenario_id, n.id)
        for t in read_trajectories(noisy_runs["dfsdt"])
        for n in t.nodes
        if n.id not in t.chosen_path
        and any(c.observation and c.observation.changes for c in n.calls)
    ]
    assert abandoned_writes  # writes on branches DFSDT left, which its restore undid


def test_a_noisy_dfsdt_run_replays_reproduced(
    noisy_runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(noisy_runs["dfsdt"])]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert said.startswith("REPRODUCED: 49/49 episodes identical"), said


class NoRestore(WorldToolEnv):
    """The world env of a search that never goes back (what DFSDT would be without restore)."""

    async def restore_state(self, state: str | None) -> None:
        if self.position is None:
            await self._open()


async def _dfsdt_solved(suite: Suite, env_class: type[WorldToolEnv], seed: int) -> set[str]:
    solved = set()
    assert suite.world is not None
    async with in_process_client(create_app(suite)) as client:
        for task in suite.tasks:
            if task.user is not None:  # a conversation needs its user: not this test's subject
                continue
            env = env_class(client, task, suite.apis, session=f"r/{task.id}/0", seed=seed)
            model = NoisyReferenceModel(
                reference_plan(task), rate=0.3, seed=seed * 1_000_003, task_id=task.id
            )
            traj = await DFSDTAgent().run(
                model=model,
                env=env,
                query=task.query,
                budget=Budget(),
                episode=EpisodeMeta(scenario_id=task.id, seed=seed),
            )
            verdict = world_verdict(suite.world, task, traj)
            answered = traj.status is Status.answered
            right = all_pass(run_checks(traj.final_answer or "", task.checks))
            if answered and right and verdict.passed:
                solved.add(task.id)
    return solved


def test_dfsdt_solves_shop_tasks_only_because_it_restores_the_state(suite: Suite) -> None:
    """The noisy model's wrong writes on abandoned branches (a wrong tool that wrote, a
    give-up after it) are undone by the restore; a search that never goes back keeps them."""
    with_restore = asyncio.run(_dfsdt_solved(suite, WorldToolEnv, seed=0))
    without = asyncio.run(_dfsdt_solved(suite, NoRestore, seed=0))
    assert without < with_restore
    assert len(with_restore - without) >= 2, sorted(with_restore - without)


def test_a_changed_tool_makes_replay_name_the_first_divergent_step(tmp_path: Path) -> None:
    copy = shutil.copytree(SHOP, tmp_path / "shop")
    run = _run(
        tmp_path / "runs", "react", "reference", suite=copy, tasks=["raw_restock_level", "lookup_*"]
    )
    code = (copy / "world.py").read_text(encoding="utf-8")
    entry = 'entry = {"delivery_ref": delivery_ref.strip(), "quantity": quantity}'
    assert entry in code
    tampered = entry.replace("quantity}", 'quantity, "checked": True}')
    (copy / "world.py").write_text(code.replace(entry, tampered), encoding="utf-8")

    report = replay_run(run)
    assert report.suite_changed and report.episodes == 4 and report.divergent == 1
    (bad,) = [v for v in report.verdicts if not v.ok]
    assert bad.scenario_id == "raw_restock_level" and bad.first_diff is not None
    assert (bad.first_diff.node, bad.first_diff.field) == (0, "calls[0].state")
    assert bad.first_diff.got["paths"] == ["products.P-207.restocks.0.checked"]
