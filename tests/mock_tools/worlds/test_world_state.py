"""World state: content hashes, snapshots that share structure, transactions, ids."""

from __future__ import annotations

import math

import pytest

from mock_tools.worlds.state import State, StateError


def docs() -> dict:
    return {
        "orders": {"O-1": {"status": "new", "total": 10}, "O-2": {"status": "paid", "total": 5}},
        "customers": {"C-1": {"name": "Ada"}},
    }


def test_the_hash_depends_on_the_content_not_the_order_it_was_written_in() -> None:
    a = State.from_documents(docs())
    reordered = {
        "customers": docs()["customers"],
        "orders": dict(reversed(docs()["orders"].items())),
    }
    assert State.from_documents(reordered).hash == a.hash
    assert len(a.hash) == 64


def test_a_write_changes_the_hash_and_writing_the_old_value_back_restores_it() -> None:
    base = State.from_documents(docs())
    tx = base.begin()
    tx.update("orders", "O-1", status="cancelled")
    changed, changes = tx.commit()
    assert changed.hash != base.hash
    assert [(c.collection, c.id, c.before["status"], c.after["status"]) for c in changes] == [
        ("orders", "O-1", "new", "cancelled")
    ]
    back = changed.begin()
    back.update("orders", "O-1", status="new")
    assert back.commit()[0].hash == base.hash


def test_the_incremental_hash_equals_the_hash_of_the_same_content_built_from_scratch() -> None:
    base = State.from_documents(docs())
    tx = base.begin()
    tx.put("orders", "O-3", {"status": "new", "total": 7})
    tx.delete("orders", "O-2")
    tx.update("customers", "C-1", name="Ada L.")
    after, _ = tx.commit()
    expected = docs()
    expected["orders"]["O-3"] = {"status": "new", "total": 7}
    del expected["orders"]["O-2"]
    expected["customers"]["C-1"]["name"] = "Ada L."
    assert after.hash == State.from_documents(expected).hash


def test_a_transaction_never_changes_the_state_it_started_from() -> None:
    base = State.from_documents(docs())
    before = base.to_documents()
    tx = base.begin()
    tx.update("orders", "O-1", status="gone")
    tx.delete("customers", "C-1")
    assert tx.get("orders", "O-1")["status"] == "gone"  # reads its own writes
    assert not tx.has("customers", "C-1")
    assert base.to_documents() == before  # not committed: nothing leaks
    tx.commit()
    assert base.to_documents() == before  # committed: a new state, the old one intact


def test_reads_hand_out_copies() -> None:
    base = State.from_documents(docs())
    record = base.get("orders", "O-1")
    record["status"] = "tampered"
    tx = base.begin()
    found = tx.find("orders", status="new")
    found[0]["status"] = "tampered"
    assert base.get("orders", "O-1")["status"] == "new"
    assert tx.commit()[0].hash == base.hash


def test_stored_records_are_copies_of_what_was_written() -> None:
    record = {"status": "new", "items": [1, 2]}
    tx = State.empty().begin()
    tx.put("orders", "O-9", record)
    record["items"].append(3)
    state, _ = tx.commit()
    assert state.get("orders", "O-9") == {"status": "new", "items": [1, 2]}


@pytest.mark.parametrize("bad", [math.nan, math.inf, {"x": object()}, {"tags": {1, 2}}, [math.nan]])
def test_what_json_cannot_hold_is_refused(bad: object) -> None:
    tx = State.empty().begin()
    with pytest.raises(StateError):
        tx.put("c", "x", bad)


def test_a_read_only_transaction_refuses_writes() -> None:
    tx = State.from_documents(docs()).begin(writable=False)
    with pytest.raises(StateError, match="read tool"):
        tx.update("orders", "O-1", status="x")


def test_new_ids_continue_after_the_highest_number_and_live_in_the_state() -> None:
    base = State.from_documents({"orders": {"O-7": {}, "O-12": {}, "X-99": {}}})
    tx = base.begin()
    assert tx.new_id("orders", "O-") == "O-13"
    assert tx.new_id("orders", "O-") == "O-14"
    assert tx.new_id("carts", "C-", width=3) == "C-001"
    after, _ = tx.commit()
    assert after.begin().new_id("orders", "O-") == "O-15"  # the counter is in the state
    assert base.begin().new_id("orders", "O-") == "O-13"  # and not in the old one


def test_bookkeeping_changes_the_state_hash_but_not_the_data_hash() -> None:
    base = State.from_documents(docs())
    tx = base.begin()
    tx.new_id("orders", "O-")
    after, _ = tx.commit()
    assert after.hash != base.hash
    assert after.data_hash == base.data_hash


def test_ids_are_listed_sorted_and_collections_emptied_disappear() -> None:
    base = State.from_documents({"a": {"z": 1, "b": 2, "m": 3}})
    assert base.ids("a") == ["b", "m", "z"]
    tx = base.begin()
    for rid in ("z", "b", "m"):
        tx.delete("a", rid)
    after, _ = tx.commit()
    assert after.collections() == []
    assert after.hash == State.empty().hash


def test_a_record_cannot_be_null_and_names_must_be_strings() -> None:
    tx = State.empty().begin()
    with pytest.raises(StateError, match="null"):
        tx.put("c", "x", None)
    with pytest.raises(StateError):
        tx.put("c", 5, {})  # type: ignore[arg-type]
