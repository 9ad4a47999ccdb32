"""The real-time loop's garbage collector: off during steps, young generations collected in the slack only."""

from __future__ import annotations

import gc
import weakref

from unilab_robot.quiet_gc import EVERY_STEPS, QuietCollector


class Node:
    pass


def _cycle() -> weakref.ref:
    a, b = Node(), Node()
    a.other, b.other = b, a  # only the cyclic collector frees these
    return weakref.ref(a)


def test_collections_wait_for_slack_and_free_cycles():
    was_enabled = gc.isenabled()
    with QuietCollector() as collector:
        assert not gc.isenabled() and gc.get_freeze_count() > 0  # start-up's objects are never walked again
        dead = _cycle()
        for _ in range(3 * EVERY_STEPS):
            collector.slack(0.0)  # no time to spare: no collection
        assert dead() is not None and collector.collections == 0
        for _ in range(EVERY_STEPS):
            collector.slack(0.015)
        assert dead() is None and collector.collections == 1 and collector.max_ms > 0.0
    assert gc.isenabled() == was_enabled and gc.get_freeze_count() == 0
