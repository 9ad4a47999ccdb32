"""Real Go1 observations to test a policy's mirror symmetry on, and the tiny Go1 runs that make those policies."""

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


def train_tiny_go1(out, *overrides: str):
    """A two-iteration Go1 run (16 envs, 32x32 networks) into ``out`` with the config ``overrides``;
    returns ``out`` (its checkpoint.pt holds the weights)."""
    from trainers import cli

    assert cli.main(["train", "--task", "UniLab/Go1Joystick-v0", "--num-envs", "16", "--total-steps", "768",
                     "--out", str(out), "--no-progress", "algo.num_steps=24", "log.tensorboard=false",
                     "log.plot=false", "policy.actor_hidden=[32,32]", "policy.critic_hidden=[32,32]",
                     *overrides]) == 0
    return out
