"""benchmarks/iteration_ratio.py times two variants of a committed config's training iteration."""

from __future__ import annotations

import pytest

from benchmarks.iteration_ratio import main

TINY = ["num_envs=8", "algo.num_steps=4", "algo.num_minibatches=1"]


def test_times_float32_and_bf16_and_scales_a_measured_wall_clock(capsys):
    result = main(["--config", "trainers/configs/go1_joystick_fast.yaml", "--iterations", "1",
                   "--a-seconds", "100", *TINY])
    assert result["steps_per_iteration"] == 8 * 4
    assert result["a_s"] > 0 and result["b_s"] > 0
    assert result["speedup"] == pytest.approx(result["a_s"] / result["b_s"])
    assert result["b_predicted_s"] == pytest.approx(100 * result["b_s"] / result["a_s"])
    out = capsys.readouterr().out
    assert "algo.amp=false" in out and "algo.amp=true" in out


def test_other_variants_are_overrides():
    result = main(["--config", "trainers/configs/go1_joystick_fast.yaml", "--iterations", "1",
                   "--a", "algo.num_epochs=1", "--b", "algo.num_epochs=3", *TINY])
    assert result["a_update_s"] > 0 and result["b_update_s"] > 0
