"""A diverging simulation is reset and reported; it never leaks NaN or disturbs the others."""

from __future__ import annotations

import gymnasium as gym
import numpy as np


def test_diverged_env_is_reset_and_reported():
    env = gym.make_vec("UniLab/Go1Joystick-v0", num_envs=4, spread_episode_starts=False)
    env.reset(seed=0)
    zero = np.zeros((4, 12), np.float32)
    for _ in range(3):
        env.step(zero)
    twin = gym.make_vec("UniLab/Go1Joystick-v0", num_envs=4, spread_episode_starts=False)
    twin.reset(seed=0)
    for _ in range(3):
        twin.step(zero)

    qvel = env.batch.bind("qvel")
    qvel[2, :] = 1e12  # provoke an unstable simulation in env 2 only
    obs, reward, terminated, truncated, info = env.step(zero)
    twin_obs, twin_reward, *_ = twin.step(zero)

    assert info["diverged"].tolist() == [False, False, True, False]
    assert terminated[2] and reward[2] == 0.0
    assert np.isfinite(obs).all() and np.isfinite(info["final_obs"]).all()
    assert env.episode_step[2] == 0  # reset within the step
    for i in (0, 1, 3):  # the other envs are untouched
        np.testing.assert_array_equal(obs[i], twin_obs[i])
        assert reward[i] == twin_reward[i]
    obs, *_ , info = env.step(zero)
    assert not info["diverged"].any() and np.isfinite(obs).all()
    env.close()
    twin.close()
