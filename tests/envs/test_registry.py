"""Smoke test over the whole registry: make, reset, step, render, close; single and batched."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import unilab_envs
from unilab_envs import UniLabEnv, UniLabVectorEnv
from tests.conftest import random_actions


def test_make_vec_gives_the_native_batched_env(task_id):
    env = gym.make_vec(task_id, num_envs=4)
    assert isinstance(env, UniLabVectorEnv)
    assert env.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert env.max_episode_steps == gym.spec(task_id).max_episode_steps
    obs, info = env.reset(seed=0)
    assert obs.shape == (4,) + env.single_observation_space.shape and obs.dtype == np.float32
    rng = np.random.default_rng(0)
    for _ in range(5):
        obs, reward, terminated, truncated, info = env.step(random_actions(rng, 4, env.single_action_space.shape[0]))
        assert obs.dtype == np.float32 and reward.dtype == np.float32
        assert terminated.dtype == bool and truncated.dtype == bool
        assert np.isfinite(obs).all() and np.isfinite(reward).all()
        assert set(info["reward_terms"]) == set(env.reward_names)
    env.close()


def test_make_gives_a_single_env(task_id):
    env = gym.make(task_id)
    assert isinstance(env.unwrapped, UniLabEnv)
    obs, info = env.reset(seed=1)
    assert env.observation_space.contains(obs)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    assert isinstance(reward, float) and isinstance(terminated, bool)
    env.close()


# one action per PD actuator on every task (the README's action column), except the grasp:
# 3 end-effector deltas + 1 gripper command for 6 arm actuators + 1 gripper actuator
ACTIONS = {"UniLab/Go1Joystick-v0": 12, "UniLab/Go1JoystickRough-v0": 12, "UniLab/Go1JoystickDepth-v0": 12, "UniLab/Go2Joystick-v0": 12, "UniLab/G1Joystick-v0": 29, "UniLab/UR5Reach-v0": 6, "UniLab/UR5Grasp-v0": 4, "UniLab/G1Track-v0": 29}
ACTUATORS = {"UniLab/UR5Grasp-v0": 7}


def test_every_task_has_its_action_size():
    assert set(ACTIONS) == set(unilab_envs.TASKS)


def test_public_attributes_of_mujoco_envs(task_id):
    env = gym.make_vec(task_id, num_envs=2)
    assert env.single_action_space.shape[0] == ACTIONS[task_id]
    assert env.model.nu == ACTUATORS.get(task_id, ACTIONS[task_id])
    assert env.frame_skip >= 1
    assert env.dt == pytest.approx(env.model.opt.timestep * env.frame_skip)
    assert env.metadata["render_fps"] == round(1.0 / env.dt)
    env.close()


def test_render_single_and_batched(task_id):
    single = gym.make(task_id, render_mode="rgb_array")
    single.reset(seed=0)
    frame = single.render()
    assert frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8 and frame.std() > 0
    single.close()
    batched = gym.make_vec(task_id, num_envs=2, render_mode="rgb_array")
    batched.reset(seed=0)
    frame = batched.render()
    assert frame.ndim == 3 and frame.std() > 0
    batched.close()


def test_make_with_module_prefix_needs_no_prior_import():
    env = gym.make("unilab_envs:UniLab/Go1Joystick-v0")
    assert isinstance(env.unwrapped, UniLabEnv)
    env.close()


def test_every_task_is_registered_with_both_entry_points():
    for env_id in unilab_envs.TASKS:
        spec = gym.spec(env_id)
        assert spec.entry_point and spec.vector_entry_point and spec.max_episode_steps
