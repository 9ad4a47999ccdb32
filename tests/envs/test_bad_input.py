"""Bad input gets a clear error that says what is wrong."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest


@pytest.fixture
def env():
    env = gym.make_vec("UniLab/Go1Joystick-v0", num_envs=4)
    env.reset(seed=0)
    yield env
    env.close()


def test_wrong_action_shape(env):
    with pytest.raises(ValueError, match=r"shape \(4, 12\)"):
        env.step(np.zeros((4, 11), np.float32))
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(12, np.float32))


def test_integer_actions(env):
    with pytest.raises(TypeError, match="floating point"):
        env.step(np.zeros((4, 12), np.int64))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_actions_name_the_rows(env, bad):
    actions = np.zeros((4, 12), np.float32)
    actions[2, 5] = bad
    with pytest.raises(ValueError, match=r"NaN or inf in envs \[2\]"):
        env.step(actions)


def test_single_env_wrong_action_shape():
    env = gym.make("UniLab/Go1Joystick-v0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(3, np.float32))
    env.close()


def test_unknown_config_key_suggests_the_right_one():
    with pytest.raises(TypeError, match="Did you mean 'action_scale'"):
        gym.make_vec("UniLab/Go1Joystick-v0", num_envs=2, action_scael=0.3)


def test_unknown_reward_term():
    with pytest.raises(TypeError, match="unknown reward_scales key 'tracking_lin'"):
        gym.make_vec("UniLab/Go1Joystick-v0", num_envs=2, reward_scales={"tracking_lin": 1.0})


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_envs": 0}, "num_envs must be a positive integer"),
        ({"num_envs": 2, "control_dt": -0.02}, "control_dt must be > 0"),
        ({"num_envs": 2, "sim_dt": 0.0}, "sim_dt must be > 0"),
        ({"num_envs": 2, "control_dt": 0.021}, "whole multiple"),
        ({"num_envs": 2, "command_vx": (1.0, -1.0)}, "low <= high"),
        ({"num_envs": 2, "max_episode_steps": 0}, "max_episode_steps must be >= 1"),
        ({"num_envs": 2, "num_threads": 0}, "num_threads must be >= 1"),
        ({"num_envs": 2, "autoreset_mode": "sometimes"}, "autoreset_mode must be one of"),
    ],
)
def test_out_of_range_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gym.make_vec("UniLab/Go1Joystick-v0", **kwargs)


def test_missing_model_path():
    with pytest.raises(FileNotFoundError, match="does not exist"):
        gym.make_vec("UniLab/Go1Joystick-v0", num_envs=2, model_path="/nowhere/go1.xml")


def test_model_without_the_expected_names(tmp_path):
    path = tmp_path / "box.xml"
    path.write_text('<mujoco><worldbody><body name="trunk"><freejoint/><geom size=".1"/></body></worldbody></mujoco>')
    with pytest.raises(ValueError, match="no joint named 'FR_hip_joint'"):
        gym.make_vec("UniLab/Go1Joystick-v0", num_envs=2, model_path=str(path))


def test_bad_seed_and_reset_options(env):
    with pytest.raises(ValueError, match="non-negative"):
        env.reset(seed=-1)
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(options={"reset_maks": None})


def test_step_before_reset_raises_reset_needed():
    from unilab_envs.tasks.ur5_reach import make_env

    vec = gym.make_vec("UniLab/UR5Reach-v0", num_envs=3, seed=0)  # seeded, but no episode yet
    single = make_env()  # the env class itself, without gym.make's OrderEnforcing wrapper
    actions = np.zeros((3, 6), np.float32)
    with pytest.raises(gym.error.ResetNeeded, match=r"UR5Reach: step\(\) was called before reset\(\); call env.reset"):
        vec.step(actions)
    with pytest.raises(gym.error.ResetNeeded, match="before reset"):
        single.step(np.zeros(6, np.float32))
    vec.reset(options={"reset_mask": np.array([True, False, True])})  # env 1 has no episode yet
    with pytest.raises(gym.error.ResetNeeded, match="a partial reset_mask reset"):
        vec.step(actions)
    vec.reset(seed=0)
    assert vec.step(actions)[1].shape == (3,)
    single.reset(seed=0)
    assert isinstance(single.step(np.zeros(6, np.float32))[1], float)
    fresh = gym.make_vec("UniLab/UR5Reach-v0", num_envs=3)
    fresh.set_state(vec.get_state())  # a restored env goes on with the saved episodes
    np.testing.assert_array_equal(fresh.step(actions)[0], vec.step(actions)[0])
    for env in (vec, single, fresh):
        env.close()
