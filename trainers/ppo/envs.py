"""Building the vector env for a task id and reading its spaces.

``make_vec_env`` lives in :mod:`trainers.common.envs` (one builder for both trainers,
``sim2real`` included) and is re-exported here.
"""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np

from ..common.envs import make_vec_env

__all__ = ["EnvDims", "env_dims", "make_vec_env"]


@dataclass(frozen=True)
class EnvDims:
    obs: int
    act: int
    privileged: int | None  # critic input size (policy obs + privileged obs), None when the task offers none


def env_dims(env: gym.vector.VectorEnv) -> EnvDims:
    """Flat sizes of the policy observation, action and privileged observation."""
    obs_space, act_space = env.single_observation_space, env.single_action_space
    if not isinstance(obs_space, gym.spaces.Box) or len(obs_space.shape) != 1:
        raise TypeError(f"PPO needs a flat Box observation space, got {obs_space}")
    if not isinstance(act_space, gym.spaces.Box) or len(act_space.shape) != 1:
        raise TypeError(f"PPO needs a flat Box action space (continuous control), got {act_space}")
    if not (np.all(np.isfinite(act_space.low)) and np.all(np.isfinite(act_space.high))):
        raise TypeError("PPO clips actions to the action space: its bounds must be finite")
    priv = getattr(env, "privileged_observation_space", None)
    if priv is None:
        priv = getattr(env.unwrapped, "privileged_observation_space", None)
    # the critic reads the policy observation followed by the privileged extras
    p = int(obs_space.shape[0]) + int(priv.shape[-1]) if priv is not None else None
    return EnvDims(obs=int(obs_space.shape[0]), act=int(act_space.shape[0]), privileged=p)
