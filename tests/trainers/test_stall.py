"""The stall detector (trainers/common/stall.py): hand-made readings, then the learners' runs.

The learners' runs are the off-policy PointReach learning test's (tests/trainers/test_offpolicy_learning.py): its
frozen run (learning rates ~0) must be said to stall, its learning run must not; that test checks the lines.
"""

from __future__ import annotations

import pytest

from trainers.common.stall import StallDetector, return_is_flat


def test_flat_is_a_span_within_the_tolerance_of_the_return_size():
    assert return_is_flat([-80.2, -79.6, -80.9], 0.05)      # span 1.3 <= 0.05 * 80.2
    assert not return_is_flat([-80.0, -60.0], 0.05)          # span 20 > 3.5
    assert return_is_flat([0.01, 0.03], 0.05)                # small returns: a span of 0.05 of at least 1.0
    assert not return_is_flat([], 0.05) and not return_is_flat([1.0, float("nan")], 0.05)


def test_it_speaks_once_after_a_whole_flat_window_with_no_success():
    d = StallDetector(window_steps=1000)
    assert [d.observe(step, -80.0 + 0.1 * (step % 3), 0.0) for step in range(0, 1000, 100)] == [None] * 10
    line = d.observe(1000, -80.0, 0.0)  # 1000 steps of readings: 0..1000
    assert line.startswith("[unilab] stalled at 1000 env steps: success at most 0% and return flat (-80 to -79.8)")
    assert "the lift was never found" in line
    assert d.observe(1100, -80.0, 0.0) is None  # once per run


def test_a_rising_return_a_success_of_10_percent_or_no_success_signal_keeps_it_quiet():
    rising, learned, rare, unjudged = StallDetector(1000), StallDetector(1000), StallDetector(1000), StallDetector(1000)
    for step in range(0, 3001, 100):
        assert rising.observe(step, -80.0 + step / 100, 0.0) is None
        assert learned.observe(step, -4.0, 1.0 if step > 500 else 0.05) is None  # learned: flat at 100% is done
        assert unjudged.observe(step, 5.0, None) is None  # a walking Go1's flat return is no stall
    said = [rare.observe(step, -70.0, 0.05) for step in range(0, 3001, 100)]  # a frozen PointReach: 5% by luck
    assert said.index(next(s for s in said if s)) == 10 and "success at most 5% and return flat" in said[10]


def test_off_and_bad_settings():
    off = StallDetector(0)
    assert all(off.observe(step, 1.0, 0.0) is None for step in range(0, 10**6, 10**4))
    assert StallDetector(10).observe(0, float("nan"), 0.0) is None
    with pytest.raises(ValueError, match="stall window"):
        StallDetector(-1)
