"""Reset randomization, actions to controls, the observation layout and robot defaults of the locomotion layer."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.envs import locomotion_records as rec
from unilab_envs.core.rng import seed_streams, uniform
from unilab_envs.locomotion import LocomotionConfig, LocomotionTask, RewardScales, with_defaults
from unilab_envs.locomotion.actions import apply_actions
from unilab_envs.locomotion.kernels import reset_envs
from unilab_envs.locomotion.robot import LeggedRobot
from unilab_envs.tasks.g1_joystick import G1JoystickConfig
from unilab_envs.tasks.go1_joystick import (
    OBS_GROUPS,
    PRIVILEGED_GROUPS,
    Go1Joystick,
    Go1JoystickConfig,
)


def test_reset_draws_yaw_joints_phase_and_command_in_order_and_clears_the_feet():
    robot = rec.robot()._replace(hard_low=np.array([-2.0, -0.15]))  # joint 1's home (-0.2) lies below its range
    physics, legs = rec.physics(2), rec.legs(2)
    physics.qpos[1, :3] = (1.0, 2.0, 0.3)
    legs.last_action[1], legs.air_time[1], legs.contact[1] = 0.7, 0.4, False
    rng = seed_streams(np.array([0, 9]))
    stream = rng.copy()
    reset_envs(np.array([1]), rng, physics, robot, legs, rec.reset(), rec.commands())
    u = [uniform(stream, 1) for _ in range(13)]  # x, y, yaw, 2 joints, 3 velocities, phase, zero test, 3 axes
    yaw = -math.pi + 2 * math.pi * u[2]
    np.testing.assert_array_equal(physics.qpos[1, :3], (1.0, 2.0, 0.3))  # zero xy range: the keyframe position
    np.testing.assert_allclose(physics.qpos[1, 3:7], (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)))
    np.testing.assert_array_equal(physics.qpos[1, 7:9], (0.1, -0.15))  # home, clipped to the model's range
    assert legs.phase[1] == 2 * math.pi * u[8]
    np.testing.assert_array_equal(legs.command[1], (-1.0 + 2.0 * u[10], -0.5 + u[11], 2.0 * u[12]))
    assert legs.contact[1].all() and not legs.air_time[1].any() and not legs.last_action[1].any()
    assert rng[1] == stream[1] and physics.qpos[0, 3] == 1.0  # env 0 untouched


def test_actions_clip_to_unit_and_become_targets_around_home():
    robot, legs = rec.robot(), rec.legs()
    legs.last_action[0] = (0.3, 0.4)
    ctrl = np.zeros((1, 2))
    apply_actions(np.array([[2.0, -0.5]], np.float32), ctrl, legs, robot, 0.5)
    np.testing.assert_array_equal(legs.previous_action[0], (0.3, 0.4))
    np.testing.assert_array_equal(legs.last_action[0], (1.0, -0.5))
    # joint 0 (home 0.1) drives actuator 1, joint 1 (home -0.2) actuator 0
    np.testing.assert_allclose(ctrl[0], (-0.2 - 0.25, 0.1 + 0.5))


def test_group_slices_from_the_declared_order_and_errors():
    go1 = Go1Joystick.legged
    assert (OBS_GROUPS["joint_pos"], OBS_GROUPS["phase"]) == (slice(9, 21), slice(48, 50))
    assert (PRIVILEGED_GROUPS["height"], PRIVILEGED_GROUPS["actuator_force"]) == (slice(0, 1), slice(13, 25))
    with pytest.raises(TypeError, match="names its policy observation groups"):
        class NoGroups(LocomotionTask, config=Go1JoystickConfig, legged=go1):
            pass
    with pytest.raises(ValueError, match="unknown privileged observation group 'heigth'"):
        class Typo(LocomotionTask, config=Go1JoystickConfig, legged=go1, obs_groups=("linvel",), privileged_obs_groups=("heigth",)):
            pass
    with pytest.raises(ValueError, match=r"policy observation groups listed twice: \['gyro'\]"):
        class Twice(LocomotionTask, config=Go1JoystickConfig, legged=go1, obs_groups=("gyro", "linvel", "gyro")):
            pass


def test_robot_defaults_keep_each_robots_numbers_and_reject_typos():
    go1, g1 = Go1JoystickConfig(), G1JoystickConfig()
    assert (go1.feet_phase_width, go1.contact_height, go1.clip_air_time_reward, go1.positive_clip_includes_termination) == (0.0025, 0.01, False, True)
    assert (g1.feet_phase_width, g1.contact_height, g1.clip_air_time_reward, g1.positive_clip_includes_termination) == (0.01, 0.02, True, False)
    assert (go1.float32_math, g1.float32_math) == (False, True)
    with pytest.raises(TypeError, match="Did you mean 'gait_frequency'"):
        with_defaults(LocomotionConfig, "Typo", "", gait_frequncy=1.0)
    with pytest.raises(ValueError, match="one pose weight per joint"):
        LeggedRobot("b", "k", ("j1", "j2"), ("f",), "site", (1.0,), (0.0,))


def test_go1_now_checks_its_reward_scales_like_g1():
    import gymnasium as gym

    import unilab_envs  # noqa: F401

    with pytest.raises(ValueError, match="reward_scales.orientation must be finite"):
        gym.make_vec("UniLab/Go1Joystick-v0", num_envs=1, reward_scales={"orientation": float("inf")})
    assert isinstance(Go1JoystickConfig().reward_scales, RewardScales)


def test_straight_commands_come_at_their_rate_in_the_env():
    import gymnasium as gym

    import unilab_envs  # noqa: F401

    env = gym.make_vec("UniLab/G1Joystick-v0", num_envs=2000, straight_command_probability=0.5)
    env.reset(seed=3)
    command = env.unwrapped.task.command
    moving = np.abs(command).sum(axis=1) > 0
    straight = moving & (command[:, 1] == 0.0) & (command[:, 2] == 0.0)
    # 2000 draws: moving 0.85 (G1's zero_command_probability 0.15), straight half of those; 4 sigma bounds
    assert abs(moving.mean() - 0.85) < 4 * math.sqrt(0.85 * 0.15 / 2000)
    assert abs(straight.sum() / moving.sum() - 0.5) < 4 * math.sqrt(0.25 / moving.sum())
    assert np.all(command[straight, 0] != 0.0)
    env.close()
    with pytest.raises(ValueError, match=r"straight_command_probability must be in \[0, 1\], got 1.5"):
        gym.make_vec("UniLab/G1Joystick-v0", num_envs=1, straight_command_probability=1.5)
