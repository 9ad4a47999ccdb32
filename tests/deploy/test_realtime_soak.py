"""benchmarks/realtime_soak.py and its parts (benchmarks/soak/): statistics, deadline-miss counting and the pacing
loop (logic, not timings)."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest

from benchmarks.realtime_soak import main
from benchmarks.soak.pacing import paced_loop, phases
from benchmarks.soak.stats import ACTED, DONE, RELEASE, SKIPPED, START, first_break, percentile, summarize

MS = 1_000_000


def test_percentile_is_nearest_rank():
    values = np.arange(1, 101)  # 1 .. 100
    assert percentile(values, 50) == 50
    assert percentile(values, 99) == 99
    assert percentile(values, 100) == 100
    assert percentile(np.arange(1, 1001), 99) == 990
    assert percentile([7.0], 99) == 7.0
    assert math.isnan(percentile([], 50))


def _record(latencies_ms, period_ms=20, compute_ms=0.5, physics_ms=1.0, skipped=()):
    """A robot's record with the given latencies (ms); rows in ``skipped`` are missed ticks."""
    n = len(latencies_ms)
    rec = np.full((n, 4), SKIPPED, np.int64)
    rec[:, RELEASE] = np.arange(n) * period_ms * MS
    for k, lat in enumerate(latencies_ms):
        if k in skipped:
            continue
        acted = rec[k, RELEASE] + round(lat * MS)
        rec[k, START] = acted - round(compute_ms * MS)
        rec[k, ACTED] = acted
        rec[k, DONE] = acted + round(physics_ms * MS)
    return rec


def test_summarize_counts_late_steps_and_skipped_ticks_as_misses():
    a = _record([1.0] * 98 + [25.0, 2.0])            # one step past the 20 ms deadline
    b = _record([1.0] * 100, skipped={10, 11})       # two missed ticks
    s = summarize([a, b], period_ns=20 * MS)
    assert (s["ticks"], s["steps"], s["late"], s["skipped"], s["misses"]) == (200, 198, 1, 2, 3)
    assert s["latency_ms"]["p50"] == pytest.approx(1.0)
    assert s["latency_ms"]["max"] == pytest.approx(25.0)
    assert s["latency_ms"]["p99"] == pytest.approx(2.0)  # 198 steps: the 197th smallest is 2 ms
    assert s["compute_ms"]["p50"] == pytest.approx(0.5)
    assert s["wake_ms"]["p50"] == pytest.approx(0.5)
    assert s["physics_ms"]["max"] == pytest.approx(1.0)
    assert [r["late"] for r in s["per_robot"]] == [1, 0]
    assert [r["skipped"] for r in s["per_robot"]] == [0, 2]


def test_summarize_deadline_and_physics_options():
    rec = _record([4.0, 6.0, 19.5], physics_ms=1.0)
    assert summarize([rec], 20 * MS)["misses"] == 0
    assert summarize([rec], 20 * MS, deadline_ns=5 * MS)["late"] == 2           # 6 and 19.5 ms
    with_physics = summarize([rec], 20 * MS, include_physics=True)             # 5, 7, 20.5 ms
    assert with_physics["late"] == 1
    assert with_physics["latency_ms"]["max"] == pytest.approx(20.5)


class FakeClock:
    """A clock that moves only when the loop sleeps or a robot works."""

    def __init__(self):
        self.now = 0

    def __call__(self) -> int:
        return self.now

    def sleep_until(self, t: int) -> None:
        self.now = max(self.now, t)


class FakeRobot:
    def __init__(self, clock: FakeClock, work_ns, sim_ns: int = 0):
        self.clock, self.work_ns, self.sim_ns, self.calls = clock, work_ns, sim_ns, 0

    def act(self):
        self.clock.now += self.work_ns(self.calls) if callable(self.work_ns) else self.work_ns
        self.calls += 1

    def simulate(self):
        self.clock.now += self.sim_ns


def test_a_late_step_skips_to_the_newest_tick():
    clock = FakeClock()
    slow_at_3 = FakeRobot(clock, lambda call: 25 * MS if call == 3 else MS)  # tick 3 takes 1.25 periods
    rec = paced_loop([slow_at_3], 20 * MS, [0], 0, 200 * MS, clock=clock, sleep_until=clock.sleep_until)[0]
    assert len(rec) == 10
    assert list(np.flatnonzero(rec[:, START] == SKIPPED)) == []  # at 25 ms late tick 4 is still the newest
    assert rec[4, START] == 85 * MS  # tick 3 started at 60 ms and ended at 85 ms: tick 4 (80 ms) runs at once
    clock = FakeClock()
    very_slow = FakeRobot(clock, lambda call: 45 * MS if call == 3 else MS)  # 2.25 periods: tick 4 is skipped
    rec = paced_loop([very_slow], 20 * MS, [0], 0, 200 * MS, clock=clock, sleep_until=clock.sleep_until)[0]
    assert list(np.flatnonzero(rec[:, START] == SKIPPED)) == [4]
    assert rec[5, START] == 105 * MS and rec[5, RELEASE] == 100 * MS
    assert very_slow.calls == 9
    s = summarize([rec], 20 * MS)
    assert (s["late"], s["skipped"], s["misses"]) == (1, 1, 2)  # tick 3 acted 45 ms after release; tick 4 missed


def test_one_loop_serves_robots_earliest_release_first():
    clock = FakeClock()
    robots = [FakeRobot(clock, 2 * MS, sim_ns=MS) for _ in range(3)]
    recs = paced_loop(robots, 20 * MS, [0, 0, 10 * MS], 0, 100 * MS, clock=clock, sleep_until=clock.sleep_until)
    assert [len(r) for r in recs] == [5, 5, 5]
    # aligned robots 0 and 1: robot 1 waits for robot 0's 3 ms (act + physics); robot 2 is alone at +10 ms
    assert list(recs[0][:, START] - recs[0][:, RELEASE]) == [0] * 5
    assert list(recs[1][:, START] - recs[1][:, RELEASE]) == [3 * MS] * 5
    assert list(recs[2][:, START] - recs[2][:, RELEASE]) == [0] * 5
    assert list(recs[2][:, RELEASE]) == [10 * MS, 30 * MS, 50 * MS, 70 * MS, 90 * MS]
    assert (recs[1][:, ACTED] - recs[1][:, START] == 2 * MS).all()
    assert (recs[1][:, DONE] - recs[1][:, ACTED] == MS).all()


def test_pacing_on_the_wall_clock_with_fast_fake_robots():
    """~0.5 s of real pacing: every tick is accounted for, none runs before its release."""

    class Fast:
        calls = 0

        def act(self):
            self.calls += 1

        def simulate(self):
            pass

    robots = [Fast() for _ in range(3)]
    period = 10 * MS
    t0 = time.monotonic_ns() + 20 * MS
    recs = paced_loop(robots, period, phases("spread", 3, period, 0), t0, 500 * MS)
    assert time.monotonic_ns() - t0 >= 490 * MS  # it ran in real time, not as fast as it could
    for robot, rec, phase in zip(robots, recs, (0, period // 3, 2 * period // 3)):
        assert len(rec) == 50
        assert list(rec[:, RELEASE]) == [phase + k * period for k in range(50)]
        ran = rec[rec[:, START] != SKIPPED]
        assert robot.calls == len(ran) >= 1
        assert (ran[:, START] >= ran[:, RELEASE]).all()
        assert (ran[:, ACTED] >= ran[:, START]).all() and (ran[:, DONE] >= ran[:, ACTED]).all()
        assert rec[-1, START] != SKIPPED  # the newest tick always runs


def test_phases():
    assert phases("aligned", 3, 20, 0) == [0, 0, 0]
    assert phases("spread", 4, 20, 0) == [0, 5, 10, 15]
    drawn = phases("random", 16, 20 * MS, 1)
    assert drawn == phases("random", 16, 20 * MS, 1) and all(0 <= p < 20 * MS for p in drawn)


def test_first_break_per_rate():
    def point(k, rate, misses, p99=1.0):
        return {"robots": k, "rate_hz": rate, "misses": misses, "latency_ms": {"p99": p99}}

    points = [point(1, 50, 0), point(16, 50, 0), point(32, 50, 2), point(64, 50, 9),
              point(1, 500, 0), point(4, 500, 0, p99=6.0), point(1, 100, 0)]
    out = first_break(points, p99_budget_ms=5.0)
    assert out[50] == {"holds": 16, "breaks": 32, "why": "2 misses"}
    assert out[500]["holds"] == 1 and out[500]["breaks"] == 4 and "p99" in out[500]["why"]
    assert out[100] == {"holds": 1, "breaks": None, "why": ""}


def test_the_script_runs_robots_in_processes(tmp_path):
    """The whole path (forkserver workers, Player with the guard, the summary), briefly; timings not checked."""
    out = tmp_path / "soak.json"
    main(["--precision", "fp32", "--robots", "2", "--duration-s", "0.3", "--workers", "process",
          "--json", str(out)])
    result = json.loads(out.read_text())
    (point,) = result["points"]
    assert result["guard"] is True and result["workers"] == "process"
    assert point["robots"] == 2 and point["ticks"] == 2 * 15 and point["steps"] + point["skipped"] == 30
    assert point["misses"] == point["late"] + point["skipped"]
    assert set(point["latency_ms"]) == {"p50", "p99", "max"}
