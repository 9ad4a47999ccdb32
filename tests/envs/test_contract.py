"""The vector env contract: reward terms, autoreset modes, time limits, spread starts."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from tests.conftest import random_actions


def test_reward_is_the_sum_of_its_weighted_terms(task_id):
    env = gym.make_vec(task_id, num_envs=8)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        _, reward, _, _, info = env.step(random_actions(rng, 8, env.single_action_space.shape[0]))
        terms = np.stack([info["reward_terms"][name] for name in env.reward_names])
        np.testing.assert_allclose(reward, terms.sum(axis=0), rtol=1e-5, atol=1e-7)
    env.close()


def test_a_reward_scale_scales_exactly_its_term(task_id):
    base = gym.make_vec(task_id, num_envs=4, spread_episode_starts=False)
    name = base.reward_names[0]
    scales = dataclasses.asdict(base.task.config.reward_scales)
    doubled = gym.make_vec(task_id, num_envs=4, spread_episode_starts=False, reward_scales={name: 2.0 * scales[name]})
    rng = np.random.default_rng(1)
    actions = [random_actions(rng, 4, base.single_action_space.shape[0]) for _ in range(5)]
    base.reset(seed=3)
    doubled.reset(seed=3)
    for a in actions:
        _, _, _, _, info_a = base.step(a)
        _, _, _, _, info_b = doubled.step(a)
        np.testing.assert_allclose(info_b["reward_terms"][name], 2.0 * info_a["reward_terms"][name], rtol=1e-6)
    base.close()
    doubled.close()


def _run_until_truncation(task_id, mode, steps=6):
    env = gym.make_vec(task_id, num_envs=4, max_episode_steps=steps, autoreset_mode=mode, spread_episode_starts=False)
    obs, _ = env.reset(seed=0)
    zero = np.zeros((4, env.single_action_space.shape[0]), np.float32)
    history = [obs]
    infos = []
    for _ in range(steps + 1):
        obs, reward, terminated, truncated, info = env.step(zero)
        history.append((obs, reward, terminated, truncated))
        infos.append(info)
    return env, history, infos


def test_same_step_autoreset_returns_final_obs_and_reset_obs(task_id):
    env, history, infos = _run_until_truncation(task_id, AutoresetMode.SAME_STEP)
    steps = 6
    obs, reward, terminated, truncated = history[steps]
    info = infos[steps - 1]
    assert truncated.all() and not terminated.any()
    assert info["_final_obs"].all()
    assert info["final_obs"].shape == obs.shape and info["final_obs"].dtype == np.float32
    # the final obs continues the episode; the returned obs starts a new one
    assert not np.array_equal(info["final_obs"], obs)
    assert (env.episode_step == 1).all()  # one step into the new episode after the extra step
    env.close()


def test_next_step_autoreset_resets_on_the_following_step(task_id):
    env, history, infos = _run_until_truncation(task_id, AutoresetMode.NEXT_STEP)
    steps = 6
    _, _, terminated, truncated = history[steps]
    assert truncated.all()
    assert "final_obs" not in infos[steps - 1]
    obs, reward, terminated, truncated = history[steps + 1]
    np.testing.assert_array_equal(reward, 0.0)
    assert not terminated.any() and not truncated.any()
    assert (env.episode_step == 0).all()
    assert env.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    env.close()


def test_terminated_and_truncated_are_never_both_set(task_id):
    env = gym.make_vec(task_id, num_envs=16, max_episode_steps=30)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(60):
        _, _, terminated, truncated, _ = env.step(random_actions(rng, 16, env.single_action_space.shape[0]))
        assert not (terminated & truncated).any()
    env.close()


def test_first_reset_spreads_episode_starts(task_id):
    env = gym.make_vec(task_id, num_envs=64)
    env.reset(seed=0)
    starts = env.episode_step.copy()
    assert starts.min() >= 0 and starts.max() < env.max_episode_steps
    assert len(np.unique(starts)) > 32
    env.close()


def test_disabled_autoreset_resets_only_the_masked_rows(task_id):
    env = gym.make_vec(task_id, num_envs=3, autoreset_mode=AutoresetMode.DISABLED, spread_episode_starts=False)
    env.reset(seed=0)
    zero = np.zeros((3, env.single_action_space.shape[0]), np.float32)
    for _ in range(3):
        env.step(zero)
    env.reset(options={"reset_mask": np.array([False, True, False])})
    np.testing.assert_array_equal(env.episode_step, [3, 0, 3])
    env.close()
