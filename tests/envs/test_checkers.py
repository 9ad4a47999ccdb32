"""Gymnasium's and Stable-Baselines3's env checkers pass on every single env."""

from __future__ import annotations

import gymnasium as gym
from gymnasium.utils.env_checker import check_env as gym_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env


def test_gymnasium_check_env(task_id):
    env = gym.make(task_id)
    gym_check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_sb3_check_env(task_id):
    env = gym.make(task_id)
    sb3_check_env(env, warn=True)
    env.close()
