"""Gymnasium's and Stable-Baselines3's env checkers pass on every single env, without a warning."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import check_env as gym_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env


def test_gymnasium_check_env(task_id):
    env = gym.make(task_id)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. "A Box observation space minimum value is -infinity"
        gym_check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_sb3_check_env(task_id):
    env = gym.make(task_id)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check_env(env, warn=True)
    env.close()


def test_spaces_are_finite_float32_boxes(task_id):
    """Observations are always finite (a diverged row's entries become 0), and the spaces say so:
    the batched env's, its privileged one's, and the Sim2Real critic's."""
    import wrappers

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = gym.make_vec(task_id, num_envs=2, num_threads=1)
        critic = wrappers.Sim2Real(env, profile={"privileged_critic": True})
        spaces = [env.single_observation_space, env.single_action_space, env.privileged_observation_space,
                  critic.single_observation_space, critic.privileged_observation_space]
    for space in [s for s in spaces if s is not None]:
        assert space.dtype == np.float32, space
        assert np.isfinite(space.low).all() and np.isfinite(space.high).all(), space
    env.close()
