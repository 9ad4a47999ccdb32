"""Helpers for the wrapper tests: a small Go1 batch and a tap that records the exact signals."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, VectorWrapper

import unilab_envs  # noqa: F401  (registers the tasks)

GO1 = "UniLab/Go1Joystick-v0"
MODES = [AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP]


def make_go1(num_envs: int = 8, *, mode=AutoresetMode.SAME_STEP, max_episode_steps: int = 1000, **kwargs):
    """A Go1 batch on one thread, episodes not spread (so time-outs are predictable)."""
    kwargs.setdefault("num_threads", 1)
    kwargs.setdefault("spread_episode_starts", False)
    return gym.make_vec(GO1, num_envs=num_envs, autoreset_mode=mode, max_episode_steps=max_episode_steps, **kwargs)


class Tap(VectorWrapper):
    """Records what crosses it: the exact observations (and final_obs) going up, the actions going down."""

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        self.obs, self.final_obs = obs.copy(), None
        return obs, info

    def step(self, actions):
        self.actions = np.array(actions, dtype=np.float32, copy=True)
        obs, reward, terminated, truncated, info = self.env.step(actions)
        self.obs = obs.copy()
        self.final_obs = np.array(info["final_obs"], copy=True) if "final_obs" in info else None
        return obs, reward, terminated, truncated, info


def columns(env, *groups: str) -> np.ndarray:
    """Observation columns of the named groups."""
    obs_groups = env.unwrapped.obs_groups
    return np.concatenate([np.arange(env.single_observation_space.shape[0])[obs_groups[g]] for g in groups])


@pytest.fixture
def rng():
    return np.random.default_rng(0)
