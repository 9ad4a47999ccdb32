"""Building the vector env for a task id and reading its spaces."""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np


def make_vec_env(task: str, num_envs: int, env_kwargs: dict | None = None,
                 vectorization_mode: str | None = None, render_mode: str | None = None) -> gym.vector.VectorEnv:
    """``gym.make_vec`` with UniLab's conventions.

    ``UniLab/*`` ids import :mod:`unilab_envs` (which registers them). A task with a
    ``vector_entry_point`` gets its native batched env; other Gymnasium ids get a
    ``SyncVectorEnv`` in SAME_STEP autoreset mode (so truncations bootstrap from the
    true final observation without a wasted reset step).
    """
    if task.startswith("UniLab/"):
        import unilab_envs  # noqa: F401  (registers the suite)
    try:
        spec = gym.spec(task)
    except gym.error.Error as e:
        raise ValueError(f"unknown task {task!r}: {e}") from None
    mode = vectorization_mode or ("vector_entry_point" if spec.vector_entry_point is not None else "sync")
    vector_kwargs = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP} if mode in ("sync", "async") else {}
    kwargs = dict(env_kwargs or {})
    if render_mode is not None:
        kwargs["render_mode"] = render_mode
    return gym.make_vec(task, num_envs=num_envs, vectorization_mode=mode, vector_kwargs=vector_kwargs, **kwargs)


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
