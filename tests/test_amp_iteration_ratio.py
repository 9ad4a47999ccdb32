"""benchmarks/amp_iteration_ratio.py times a committed config's training iteration in float32 and bf16."""

from __future__ import annotations

import pytest

from benchmarks.amp_iteration_ratio import main


def test_times_both_precisions_and_scales_a_measured_wall_clock(capsys):
    result = main(["--config", "trainers/configs/go1_joystick_fast.yaml", "--iterations", "1",
                   "--fp32-seconds", "100", "num_envs=8", "algo.num_steps=4", "algo.num_minibatches=1"])
    assert result["steps_per_iteration"] == 8 * 4
    assert result["fp32_s"] > 0 and result["bf16_s"] > 0
    assert result["speedup"] == pytest.approx(result["fp32_s"] / result["bf16_s"])
    assert result["bf16_predicted_s"] == pytest.approx(100 * result["bf16_s"] / result["fp32_s"])
    assert "float32" in capsys.readouterr().out
