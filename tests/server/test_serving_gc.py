"""The collector a referee serves with, and the process's own restored after (the main job's
referee runs in the command line's process, and tests run it in theirs)."""

from __future__ import annotations

import gc

from domino_arena.server.app import GC_THRESHOLDS, serving_gc


def test_serving_tunes_the_collector_and_restores_it_after() -> None:
    before = gc.get_threshold()
    assert before != GC_THRESHOLDS
    with serving_gc():
        assert gc.get_threshold() == GC_THRESHOLDS
        assert gc.get_freeze_count() > 0, "what was loaded before is frozen"
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_an_error_while_serving_restores_the_collector_too() -> None:
    before = gc.get_threshold()
    try:
        with serving_gc():
            raise RuntimeError("the referee failed")
    except RuntimeError:
        pass
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
