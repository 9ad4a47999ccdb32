"""The paced control loop: K robots each released at its own ticks in wall-clock time (pure but for the
clock and the sleep, both injectable), their phases, and ``SCHED_FIFO`` for the loop's thread."""

from __future__ import annotations

import contextlib
import heapq
import os
import time
from typing import Callable, Sequence

import numpy as np

from benchmarks.soak.stats import RELEASE, SKIPPED, START

PHASES = ("random", "spread", "aligned")


def _sleep_until(target_ns: int, clock: Callable[[], int] = time.monotonic_ns) -> None:
    delay = target_ns - clock()
    if delay > 0:
        time.sleep(delay / 1e9)


def paced_loop(robots: Sequence, period_ns: int, phases_ns: Sequence[int], t0_ns: int, duration_ns: int,
               clock: Callable[[], int] = time.monotonic_ns, sleep_until: Callable[[int], None] | None = None,
               ) -> list[np.ndarray]:
    """Run ``robots`` (objects with ``act()`` and ``simulate()``) each at its own ticks, earliest release first.

    Robot ``i``'s tick ``k`` is released at ``t0_ns + phases_ns[i] + k * period_ns`` for every
    release before ``t0_ns + duration_ns``. The loop sleeps until the next release, then runs
    that robot's ``act()`` (the control step) and ``simulate()`` (its world). A robot that is
    reached after its next tick was released skips to its newest released tick; the skipped
    ticks keep ``SKIPPED`` in their record. Returns one ``(ticks, 4)`` int64 record per robot
    (columns ``RELEASE, START, ACTED, DONE``, ns after ``t0_ns``). One robot per call is the
    one-robot control loop; K robots per call is a loop serving K robots.
    """
    sleep_until = sleep_until or (lambda target: _sleep_until(target, clock))
    records, heap = [], []
    for i, phase in enumerate(phases_ns):
        n = max(0, -(-(duration_ns - phase) // period_ns))  # releases in [phase, duration)
        rec = np.full((n, 4), SKIPPED, dtype=np.int64)
        rec[:, RELEASE] = phase + period_ns * np.arange(n, dtype=np.int64)
        records.append(rec)
        if n:
            heap.append((int(phase), i, 0))
    heapq.heapify(heap)
    while heap:
        release, i, k = heapq.heappop(heap)
        rec = records[i]
        if clock() - t0_ns < release:
            sleep_until(t0_ns + release)
        now = clock() - t0_ns
        behind = (now - release) // period_ns  # ticks of this robot released since: run the newest
        if behind > 0:
            k = min(k + behind, len(rec) - 1)
            release = int(rec[k, RELEASE])
        robot = robots[i]
        robot.act()
        acted = clock() - t0_ns
        robot.simulate()
        rec[k, START:] = (now, acted, clock() - t0_ns)
        if k + 1 < len(rec):
            heapq.heappush(heap, (release + period_ns, i, k + 1))
    return records


def phases(kind: str, robots: int, period_ns: int, seed: int) -> list[int]:
    """Each robot's offset in its period: ``random`` (independent robots' clocks), ``spread`` evenly, ``aligned`` (0)."""
    if kind == "aligned":
        return [0] * robots
    if kind == "spread":
        return [period_ns * i // robots for i in range(robots)]
    rng = np.random.default_rng(seed)
    return [int(x) for x in rng.integers(0, period_ns, robots)]


@contextlib.contextmanager
def realtime(priority: int):
    """``SCHED_FIFO`` at ``priority`` for the calling thread (0: leave the scheduler as it is), restored after."""
    if not priority:
        yield
        return
    old, param = os.sched_getscheduler(0), os.sched_getparam(0)
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except PermissionError:
        raise SystemExit("--rt-priority needs root or CAP_SYS_NICE (SCHED_FIFO)") from None
    try:
        yield
    finally:
        os.sched_setscheduler(0, old, param)
