"""Joystick metrics: tracking share of its maximum, base speed in the base frame, speed per command."""

import math

import gymnasium as gym
import numpy as np

import unilab_envs  # noqa: F401
from trainers import cli
from trainers.ppo import train
from trainers.ppo.config import TrainConfig, from_dict
from trainers.common.evaluation import tracking_share
from trainers.ppo.joystick_eval import base_velocity, measure_commands

GO1 = "UniLab/Go1Joystick-v0"


def test_tracking_share_is_the_term_over_its_weight():
    env = gym.make_vec(GO1, num_envs=2)
    weight = env.unwrapped.task.reward_weights[env.unwrapped.reward_names.index("tracking_lin_vel")]
    assert math.isclose(tracking_share(env, {"tracking_lin_vel": 0.25 * weight}), 0.25)
    assert tracking_share(gym.make_vec("UniLab/UR5Reach-v0", num_envs=1), {"distance": -0.1}) is None


def test_base_velocity_is_forward_speed_in_the_base_frame():
    env = gym.make_vec(GO1, num_envs=2)
    env.reset(seed=0)
    batch, model = env.unwrapped.batch, env.unwrapped.model
    qpos, qvel = batch.bind("qpos"), batch.bind("qvel")
    yaw = 0.5 * math.pi  # env 0 faces +y and moves along +y at 0.7 m/s; env 1 faces +x and moves along +y
    qpos[0, 3:7] = (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))
    qpos[1, 3:7] = (1.0, 0.0, 0.0, 0.0)
    qvel[:, 0:3] = (0.0, 0.7, 0.0)
    qvel[:, 5] = (0.3, -0.2)
    speed, yaw_rate = base_velocity(batch, model)
    np.testing.assert_allclose(speed, [0.7, 0.0], atol=1e-12)
    np.testing.assert_allclose(yaw_rate, [0.3, -0.2])


def test_speed_per_command_runs_a_policy_under_fixed_commands(tmp_path, capsys):
    cfg = from_dict(TrainConfig, {"task": GO1, "num_envs": 4, "total_steps": 64, "out": str(tmp_path / "run"),
                                  "algo": {"num_steps": 16, "num_minibatches": 2},
                                  "policy": {"actor_hidden": [16], "critic_hidden": [16]},
                                  "log": {"tensorboard": False, "progress": False, "plot": False}})
    run = train(cfg)
    rows = measure_commands(run.checkpoint, [0.0, 0.8], seconds=0.4, settle_s=0.1, num_envs=3)
    assert [r.command for r in rows] == [0.0, 0.8]
    assert all(np.isfinite(r.speed) or r.fall_rate == 1.0 for r in rows)
    assert all(0.0 <= r.fall_rate <= 1.0 for r in rows)
    assert cli.main(["eval", str(tmp_path / "run"), "--episodes", "2", "--num-envs", "2"]) == 0
    out = capsys.readouterr().out
    assert "planar velocity tracking" in out and "terminated" in out and "ended early" not in out
