"""What an episode page shows of each world call (``sandbox.view.state_diff``): the state after
it and each record it changed as a compact diff of its fields."""

from __future__ import annotations

from agents.toolenv import Observation
from agents.trajectory import Component, Node, Status, StepCall, Trajectory
from sandbox.view.state_diff import VALUE_CHARS, FieldChange, record_change, world_calls


def fields(change: dict) -> list[tuple[str, str | None, str | None]]:
    return [(f.path, f.before, f.after) for f in record_change(change).fields]


def test_a_changed_record_lists_only_the_fields_that_differ() -> None:
    change = {
        "collection": "accounts",
        "id": "A-3",
        "before": {"balance": 400, "frozen": True, "owner": "bob", "tags": ["x"]},
        "after": {"balance": 300, "owner": "bob", "tags": ["x", "y"], "note": "ok"},
    }
    shown = record_change(change)
    assert (shown.collection, shown.id, shown.change) == ("accounts", "A-3", "changed")
    assert fields(change) == [
        ("balance", "400", "300"),
        ("frozen", "true", None),  # removed: absent after
        ("note", None, '"ok"'),  # added: absent before
        ("tags.1", None, '"y"'),
    ]


def test_created_and_deleted_records() -> None:
    created = {"collection": "transfers", "id": "T-1", "before": None, "after": {"amount": 200}}
    assert record_change(created).change == "created"
    assert fields(created) == [("amount", None, "200")]
    deleted = {"collection": "carts", "id": "C-1", "before": {"items": {}}, "after": None}
    assert record_change(deleted).change == "deleted"
    assert fields(deleted) == [("items", "{}", None)]


def test_one_and_one_point_zero_are_different_values() -> None:
    """The state's hash tells them apart (different JSON texts), so the diff does too."""
    change = {
        "collection": "c",
        "id": "1",
        "before": {"n": 1, "b": 1},
        "after": {"n": 1.0, "b": True},
    }
    assert fields(change) == [("b", "1", "true"), ("n", "1", "1.0")]
    same = {"collection": "c", "id": "1", "before": {"n": 1}, "after": {"n": 1}}
    assert record_change(same).fields == []


def test_an_empty_object_or_list_that_gets_filled_shows_its_new_fields() -> None:
    change = {"collection": "c", "id": "1", "before": {"items": {}, "l": []}, "after": {}}
    change["after"] = {"items": {"a": 1}, "l": [2]}
    assert fields(change) == [("items.a", None, "1"), ("l.0", None, "2")]
    emptied = {"collection": "c", "id": "1", "before": {"items": {"a": 1}}, "after": {"items": {}}}
    assert fields(emptied) == [("items.a", "1", None)]
    cleared = {"collection": "c", "id": "1", "before": {"x": {}}, "after": {"x": 0}}
    assert fields(cleared) == [("x", "{}", "0")]  # replaced, not filled
    whole = {"collection": "c", "id": "1", "before": {}, "after": {"x": 1}}
    assert fields(whole) == [("x", None, "1")]
    gone = {"collection": "c", "id": "1", "before": {"x": {}}, "after": {"y": 1}}
    assert fields(gone) == [("x", "{}", None), ("y", None, "1")]


def test_long_values_are_cut_and_text_stays_as_written() -> None:
    change = {"collection": "c", "id": "1", "before": {"t": "é"}, "after": {"t": "x" * 500}}
    (field,) = record_change(change).fields
    assert field.before == '"é"'
    assert field.after is not None and len(field.after) == VALUE_CHARS
    assert field.after.endswith("…") and field.after.startswith('"xxx')
    exact = {"collection": "c", "id": "1", "before": {}, "after": {"t": "y" * (VALUE_CHARS - 2)}}
    assert record_change(exact).fields == [
        FieldChange(path="t", before=None, after='"' + "y" * (VALUE_CHARS - 2) + '"')
    ]


def call(i: int, state: str | None, changes: list[dict] | None = None) -> StepCall:
    obs = Observation(ok=True, content="{}", provenance="world", state=state, changes=changes)
    return StepCall(id=f"c{i}", name="transfer", arguments="{}", args={}, observation=obs)


def episode(nodes: list[Node]) -> Trajectory:
    return Trajectory(
        run_id="r",
        scenario_id="t",
        agent=Component(name="react"),
        model=Component(name="m"),
        status=Status.answered,
        nodes=nodes,
    )


def test_world_calls_are_the_calls_that_reached_the_world_in_node_order() -> None:
    moved = {"collection": "accounts", "id": "A-1", "before": {"b": 1}, "after": {"b": 2}}
    traj = episode(
        [
            Node(id=0, kind="action", calls=[call(0, None), call(1, "s1", [])]),
            Node(id=1, parent=0, kind="action", calls=[call(0, "s2", [moved])]),
            Node(id=2, parent=1, kind="action", calls=[StepCall(id="x", name="f", arguments="")]),
        ]
    )
    shown = world_calls(traj)
    assert [(w.node, w.call, w.state) for w in shown] == [(0, 1, "s1"), (1, 0, "s2")]
    assert shown[0].changes == []
    (record,) = shown[1].changes
    assert (record.collection, record.id, record.change) == ("accounts", "A-1", "changed")
    assert world_calls(episode([])) == []
