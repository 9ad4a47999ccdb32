"""benchmarks/grasp_misses.py counts the same episodes as ``unilab eval`` and splits its misses."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.grasp_misses import main, run_outcomes
from trainers.ppo.evaluate import evaluate


def test_outcomes_match_the_evaluation_of_the_same_policy_and_seed():
    out = run_outcomes("policies/ur5_grasp_real", "ur5_grasp_real", num_envs=12, seed=3)
    result = evaluate("policies/ur5_grasp_real", episodes=12, num_envs=12, seed=3, sim2real="ur5_grasp_real")
    assert len(out["success"]) == 12
    assert out["success"].mean() == pytest.approx(result.success_rate)
    assert not (out["success"] & out["dropped"]).any()
    assert (out["grasp_steps"][out["success"]] > 0).all()  # a success held the cube up, grasped
    # the cube starts within the task's range (x -0.28..0.02, y 0.38..0.62) of a pinch point near its middle
    assert np.all((out["distance"] >= 0) & (out["distance"] < 0.35))


def test_refuses_a_run_of_another_task(capsys):
    with pytest.raises(SystemExit, match="UR5Grasp"):
        main(["policies/go1_joystick_fast"])
