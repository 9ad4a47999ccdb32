"""Batched equals single; seeding is bit-exact and independent of the thread count."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from tests.conftest import random_actions

NUM_ENVS = 3
STEPS = 40


def _rollout_batched(task_id, seed, actions, **kwargs):
    env = gym.make_vec(task_id, num_envs=NUM_ENVS, spread_episode_starts=False, autoreset_mode=AutoresetMode.DISABLED, **kwargs)
    obs, _ = env.reset(seed=seed)
    trace = [obs]
    rewards = []
    for a in actions:
        obs, reward, terminated, truncated, _ = env.step(a)
        trace.append(obs)
        rewards.append(reward)
    env.close()
    return np.stack(trace), np.stack(rewards)


def test_batched_equals_single_envs(task_id):
    probe = gym.make(task_id)
    act = probe.action_space.shape[0]
    probe.close()
    rng = np.random.default_rng(7)
    actions = [0.3 * random_actions(rng, NUM_ENVS, act) for _ in range(STEPS)]
    batched_obs, batched_rewards = _rollout_batched(task_id, 100, actions)
    for i in range(NUM_ENVS):
        env = gym.make(task_id).unwrapped  # no TimeLimit: the batch above has no time limit either
        obs, _ = env.reset(seed=100 + i)
        np.testing.assert_array_equal(obs, batched_obs[0, i])
        for t, a in enumerate(actions):
            obs, reward, *_ = env.step(a[i])
            np.testing.assert_array_equal(obs, batched_obs[t + 1, i], err_msg=f"env {i} step {t}")
            assert np.float32(reward) == batched_rewards[t, i]
        env.close()


def test_same_seed_same_trajectory_with_one_and_two_threads(task_id):
    probe = gym.make(task_id)
    act = probe.action_space.shape[0]
    probe.close()
    rng = np.random.default_rng(3)
    actions = [random_actions(rng, NUM_ENVS, act) for _ in range(STEPS)]
    one, r1 = _rollout_batched(task_id, 5, actions, num_threads=1)
    two, r2 = _rollout_batched(task_id, 5, actions, num_threads=2)
    again, r3 = _rollout_batched(task_id, 5, actions, num_threads=2)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(two, again)
    np.testing.assert_array_equal(r1, r2)
    other, _ = _rollout_batched(task_id, 6, actions, num_threads=2)
    assert not np.array_equal(one, other)
