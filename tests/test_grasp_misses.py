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
    # the task's draws (UR5GraspConfig: mass 0.05-0.25 kg, friction 0.5-1.0, yaw -0.4..0.4 rad), not all alike
    assert np.all((out["mass"] >= 0.05) & (out["mass"] <= 0.25)) and out["mass"].std() > 0.02
    assert np.all((out["friction"] >= 0.5) & (out["friction"] <= 1.0)) and out["friction"].std() > 0.05
    assert np.all(np.abs(out["yaw"]) <= 0.4 + 1e-9) and out["yaw"].std() > 0.05
    assert out["hold_breaks"].dtype.kind == "i" and (out["hold_breaks"] >= 0).all()


def test_the_report_breaks_success_down_by_each_draw(capsys):
    main(["policies/ur5_grasp_real", "--num-envs", "12", "--seed", "3"])
    report = capsys.readouterr().out
    assert "hold breaks:" in report
    for label in ("m from the pinch point", "kg:", "friction:", "rad of |yaw|"):
        assert sum(label in line for line in report.splitlines()) == 3, label


def test_refuses_a_run_of_another_task(capsys):
    with pytest.raises(SystemExit, match="UR5Grasp"):
        main(["policies/go1_joystick_fast"])


def test_a_sac_run_counts_as_its_evaluation_does(tmp_path):
    """An off-policy run (``unilab train --algo sac``) is read by its deterministic actor, as ``unilab eval`` reads it."""
    from trainers import cli
    from trainers.offpolicy.evaluate import evaluate_offpolicy

    run = tmp_path / "sac"
    tiny = ["num_envs=4", "total_steps=80", "algo.learning_starts=40", "algo.batch_size=16", "algo.buffer_size=400",
            "nets.actor_hidden=[16]", "nets.critic_hidden=[16]", "log.progress=false", "log.tensorboard=false",
            "log.plot=false", "torch_threads=1", "algo.demonstrations=null"]  # the recipe's 8 demonstrating envs need > 8
    assert cli.main(["train", "--algo", "sac", "--task", "UniLab/UR5Grasp-v0", "--out", str(run), *tiny]) == 0
    out = run_outcomes(str(run), "none", num_envs=6, seed=3)
    result = evaluate_offpolicy(run, episodes=6, num_envs=6, seed=3, sim2real="none", progress=False)
    assert len(out["success"]) == 6
    assert out["success"].mean() == pytest.approx(result.success_rate)
    # a success and a drop both end the episode terminated: together they are the evaluator's terminated share
    assert (out["success"] | out["dropped"]).mean() == pytest.approx(result.fall_rate)
