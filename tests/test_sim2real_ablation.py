"""benchmarks/sim2real_ablation.py evaluates a policy under each section of a profile alone, and whole."""

from __future__ import annotations

from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest

import trainers.common.envs as common_envs
from benchmarks.sim2real_ablation import ablation_profiles, friction_profiles, main, nearby_profiles, table
from trainers import cli
from wrappers.sim2real import SECTIONS, Sim2Real, load_profile

TINY_REACH = ["--task", "UniLab/UR5Reach-v0", "--num-envs", "2", "--no-progress", "algo.num_steps=8",
              "algo.num_minibatches=1", "policy.actor_hidden=[16]", "policy.critic_hidden=[16]",
              "log.tensorboard=false", "log.plot=false"]
G1_SECTIONS = ["domain_randomization", "random_push", "motor_strength", "action_noise", "action_latency",
               "imu_bias_drift", "observation_noise", "observation_latency", "packet_loss"]


def test_rows_are_bare_each_section_alone_and_the_whole_profile():
    profile = load_profile("g1_real")
    rows = ablation_profiles(profile)
    assert [label for label, _ in rows] == ["bare task", *(f"{s} alone" for s in G1_SECTIONS), "whole profile"]
    assert rows[0][1] is None
    for (label, row), section in zip(rows[1:-1], G1_SECTIONS):
        assert [k for k in row if k in SECTIONS] == [section]
        assert row[section] == profile[section]
        assert row["env_id"] == "UniLab/G1Joystick-v0"  # still checked against the task
    whole = rows[-1][1]
    assert {k: v for k, v in whole.items() if k in SECTIONS} == {k: v for k, v in profile.items() if k in SECTIONS}


def test_leave_one_out_rows_drop_exactly_one_section():
    profile = load_profile("g1_real")
    rows = dict(ablation_profiles(profile, leave_one_out=True))
    for section in G1_SECTIONS:
        kept = [k for k in rows[f"all but {section}"] if k in SECTIONS]
        assert kept == [s for s in G1_SECTIONS if s != section]


def test_push_magnitude_rows_keep_the_push_schedule_at_one_fixed_strength():
    profile = load_profile({"extends": "g1_real", "random_push": {"levels": 10}})
    rows = dict(ablation_profiles(profile, push_magnitudes=[0.5, 2]))
    for m in (0.5, 2.0):
        row = rows[f"random_push of {m:g} alone"]
        assert [k for k in row if k in SECTIONS] == ["random_push"]
        assert row["random_push"] == {**profile["random_push"], "magnitude": [m, m], "levels": 0}
    with pytest.raises(ValueError, match="random_push"):
        ablation_profiles(load_profile("ur5_real"), push_magnitudes=[1.0])


def test_nearby_rows_move_one_condition_outside_the_profile():
    profile = load_profile("go1_real")
    rows = dict(nearby_profiles(profile))
    assert list(rows) == ["nearby: no latency", "nearby: 2 steps of latency each way",
                          "nearby: slippery floor (friction 0.2-0.4)", "nearby: payload 2-3 kg", "nearby: motors at 80%",
                          "nearby: PD gains at 80%"]
    whole = {k: v for k, v in profile.items() if k in SECTIONS}
    for label, row in rows.items():
        changed = [k for k in SECTIONS if row.get(k) != whole.get(k)]
        assert 1 <= len(changed) <= 2, (label, changed)  # latency rows change both latency sections
        assert load_profile(row)  # a valid profile
    assert rows["nearby: payload 2-3 kg"]["domain_randomization"]["added_mass"] == [2.0, 3.0]
    assert rows["nearby: slippery floor (friction 0.2-0.4)"]["domain_randomization"]["kp_scale"] == profile["domain_randomization"]["kp_scale"]
    assert [label for label, _ in nearby_profiles(load_profile("ur5_grasp_real"))] == [
        "nearby: no latency", "nearby: 2 steps of latency each way", "nearby: motors at 80%", "nearby: PD gains at 80%"]


@pytest.fixture
def stacks(monkeypatch):
    """The wrapper layers of every env the evaluation built (empty for a bare env)."""
    seen: list[list[str]] = []
    original = common_envs.wrap_sim2real

    def spy(env, sim2real):
        out = original(env, sim2real)
        seen.append(list(getattr(out, "layers", {})))
        return out

    monkeypatch.setattr(common_envs, "wrap_sim2real", spy)
    return seen


def test_friction_rows_set_the_floor_friction_and_perturb_nothing_else():
    profile = load_profile("g1_real")
    rows = friction_profiles(profile, [0.2, 0.35])
    assert [label for label, _ in rows] == ["floor friction 0.2 alone", "floor friction 0.35 alone"]
    go1 = friction_profiles(load_profile("go1_real"), [0.35])[0][1]
    assert [k for k in go1 if k in SECTIONS] == ["domain_randomization"]
    env = Sim2Real(gym.make_vec("UniLab/Go1Joystick-v0", num_envs=3), go1)
    try:
        env.reset(seed=0)
        layer = env.layers["domain_randomization"]
        assert list(layer.params) == ["friction"]  # no mass, CoM, gains, armature draws
        model = env.unwrapped.batch
        np.testing.assert_allclose(model.expanded("geom_friction")[:, :, 0], 0.35)
    finally:
        env.close()


def test_each_row_evaluates_under_its_own_wrappers(tmp_path, capsys, stacks):
    run = tmp_path / "reach"
    assert cli.main(["train", *TINY_REACH, "--total-steps", "32", "--out", str(run)]) == 0
    stacks.clear()
    main([str(run), "--profile", "ur5_real", "--episodes", "2", "--num-envs", "2"])
    sections = [s for s in SECTIONS if s in load_profile("ur5_real")]
    assert stacks == [[], *([s] for s in sections), sections]
    out = capsys.readouterr().out
    table = [line for line in out.splitlines() if line.startswith("| ") and "wrappers" not in line]
    assert [line.split(" | ")[0][2:] for line in table] == ["bare task", *(f"{s} alone" for s in sections),
                                                           "whole profile"]


def test_a_run_trained_bare_needs_a_profile(tmp_path, capsys):
    run = tmp_path / "reach"
    assert cli.main(["train", *TINY_REACH, "--total-steps", "16", "--out", str(run)]) == 0
    with pytest.raises(SystemExit):
        main([str(run)])
    assert "--profile" in capsys.readouterr().err


def test_a_task_with_success_gets_a_success_column():
    grasp = SimpleNamespace(success_rate=0.953, fall_rate=0.961, tracking_share=None, mean_return=23.4, mean_length=58.9)
    walk = SimpleNamespace(success_rate=None, fall_rate=0.055, tracking_share=0.925, mean_return=50.0, mean_length=980.0)
    assert table([("whole profile", grasp)]).splitlines()[2] == "| whole profile | 95.3% | 96.1% | 23.4 | 59 |"
    assert "| success | ended early |" in table([("whole profile", grasp)])
    assert table([("whole profile", walk)]).splitlines()[2] == "| whole profile | 5.5% | 92.5% | 50.0 | 980 |"
