"""Real Go1 observations to test a policy's mirror symmetry on."""

from __future__ import annotations

import numpy as np


def go1_observations(num_envs: int):
    """``(obs float32 (num_envs, 50), the task's mirror map)`` after 10 random-action steps from a seeded reset."""
    import gymnasium as gym

    import unilab_envs  # noqa: F401

    env = gym.make_vec("UniLab/Go1Joystick-v0", num_envs=num_envs, num_threads=1)
    mirror = env.unwrapped.task.mirror
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(10):
        obs, *_ = env.step(rng.uniform(-1, 1, (num_envs, 12)).astype(np.float32))
    env.close()
    return obs.astype(np.float32), mirror
