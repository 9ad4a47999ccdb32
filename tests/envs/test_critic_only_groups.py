"""``critic_only_groups``: a legged policy on what the robot measures, the critic keeping the rest.

The same seed and actions give the same physics with or without the option; only where the
columns go differs: the policy's observation loses the group, the privileged one gains it at
its end. Sim-to-real noise on a group the policy no longer reads is not applied (training and
play sides alike), and the deploy spec of such a task asks the robot for no odometry.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import unilab_envs  # noqa: F401  (registers UniLab/*)
import wrappers
from unilab_envs.config import ConfigError

N, STEPS = 8, 6


def _rollout(**kwargs):
    env = gym.make_vec("UniLab/Go1Joystick-v0", num_envs=N, **kwargs)
    obs, info = env.reset(seed=3)
    rows = [(obs.copy(), info["privileged_obs"].copy())]
    rng = np.random.default_rng(0)
    for _ in range(STEPS):
        obs, _, _, _, info = env.step(rng.uniform(-1, 1, (N, 12)).astype(np.float32))
        rows.append((obs.copy(), info["privileged_obs"].copy()))
    return env, rows


def test_linvel_moves_from_the_policy_to_the_end_of_the_critic_observation():
    full_env, full = _rollout()
    blind_env, blind = _rollout(critic_only_groups=["linvel"])
    lin = full_env.unwrapped.task.obs_groups["linvel"]
    assert (lin.start, lin.stop) == (0, 3)
    task = blind_env.unwrapped.task
    assert "linvel" not in task.obs_groups and blind_env.single_observation_space.shape == (47,)
    assert list(task.privileged_obs_groups)[-1] == "linvel"
    assert task.privileged_obs_groups["linvel"] == slice(25, 28)
    for (obs, priv), (b_obs, b_priv) in zip(full, blind):
        np.testing.assert_array_equal(b_obs, obs[:, 3:])  # the rest of the policy's columns, bit for bit
        np.testing.assert_array_equal(b_priv[:, :25], priv)
        np.testing.assert_array_equal(b_priv[:, 25:28], obs[:, :3])  # the critic reads the velocity the policy did


def test_an_unknown_group_is_refused_with_the_policy_groups_named():
    with pytest.raises(ConfigError, match=r"critic_only_groups names \['linvelo'\].*policy groups are \['linvel'"):
        gym.make_vec("UniLab/Go1Joystick-v0", num_envs=2, critic_only_groups=["linvelo"])


def test_profile_noise_on_a_critic_only_group_is_not_applied():
    env = gym.make_vec("UniLab/Go1Joystick-v0", num_envs=2, critic_only_groups=["linvel"])
    stack = wrappers.Sim2Real(env, profile="go1_real")
    assert "linvel" not in stack.layers["observation_noise"].config.scales
    assert set(stack.layers["observation_noise"].config.scales) == {"gyro", "gravity", "joint_pos", "joint_vel"}
    with pytest.raises(ValueError, match="unknown observation group 'nope'"):  # a typo is still refused
        wrappers.ObservationNoise(gym.make_vec("UniLab/Go1Joystick-v0", num_envs=2, critic_only_groups=["linvel"]),
                                  scales={"nope": 0.1})


def test_the_deploy_spec_needs_no_odometry_and_play_skips_the_unread_noise():
    from unilab_envs.deploy_spec import spec_from_env
    from unilab_robot.deploy.sim2real import PlaySim2Real
    from wrappers.sim2real import load_profile

    env = gym.make_vec("UniLab/Go1Joystick-v0", num_envs=2, critic_only_groups=["linvel"])
    spec = spec_from_env(env, "UniLab/Go1Joystick-v0")
    assert [g.name for g in spec.observation.groups][0] == "gyro" and spec.observation.size == 47
    assert all(g.name != "linvel" for g in spec.observation.groups)
    replay = PlaySim2Real(load_profile("go1_real"), spec)
    assert "observation_noise on linvel not applied (the policy does not read that group)" in replay.describe()
    assert np.count_nonzero(replay._obs_scale) == 3 + 3 + 12 + 12
