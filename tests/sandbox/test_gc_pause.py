"""paused_gc: the collector is off inside a bulk job, back on after it, and never left off."""

import gc

import pytest

from sandbox.store.gc_pause import paused_gc


def test_the_collector_is_paused_inside_and_restored_after_even_on_error() -> None:
    assert gc.isenabled()
    with pytest.raises(RuntimeError), paused_gc():
        assert not gc.isenabled()
        with paused_gc():  # nested: the inner block does not switch it back on
            pass
        assert not gc.isenabled()
        raise RuntimeError
    assert gc.isenabled()


def test_a_block_that_calls_a_judge_keeps_the_collector_on() -> None:
    with paused_gc(when=False):
        assert gc.isenabled()
    assert gc.isenabled()


def test_a_collector_switched_off_by_the_caller_stays_off() -> None:
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
