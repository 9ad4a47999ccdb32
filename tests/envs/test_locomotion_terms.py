"""The shared locomotion terms, each against a hand-computed case: commands, gait, feet, base, joints, precision."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.envs import locomotion_records as rec
from unilab_envs.core.rng import seed_streams, uniform
from unilab_envs.locomotion import base, commands, feet, gait, groups, joints, precision
from unilab_envs.locomotion.ground import flat_ground

FLAT = flat_ground()


def test_sample_command_draws_zero_or_uniform_per_axis_from_the_env_stream():
    rng = seed_streams(np.array([4, 5]))
    expected = rng.copy()
    command = np.full((2, 3), 9.0)
    commands.sample_command(1, command, rng, rec.commands(zero_probability=0.0))
    # by hand: one uniform for the zero test, then low + (high - low) * u per axis, on env 1's stream only
    u = [uniform(expected, 1) for _ in range(4)]
    assert u[0] >= 0.0
    np.testing.assert_array_equal(command[1], [-1.0 + 2.0 * u[1], -0.5 + 1.0 * u[2], 0.0 + 2.0 * u[3]])
    np.testing.assert_array_equal(command[0], 9.0)
    assert rng[0] == expected[0] and rng[1] == expected[1]
    commands.sample_command(0, command, rng, rec.commands(zero_probability=1.0))
    np.testing.assert_array_equal(command[0], 0.0)


def test_a_straight_draw_zeroes_sideways_and_yaw_and_costs_one_more_uniform():
    rng = seed_streams(np.array([4, 5]))
    expected = rng.copy()
    command = np.zeros((2, 3))
    commands.sample_command(0, command, rng, rec.commands(straight_probability=1.0))
    u = [uniform(expected, 0) for _ in range(5)]  # zero test, three axes, straight test
    assert u[4] < 1.0
    np.testing.assert_array_equal(command[0], [-1.0 + 2.0 * u[1], 0.0, 0.0])
    assert rng[0] == expected[0]
    # never straight: the axes stay drawn, and the straight test still costs its uniform
    commands.sample_command(0, command, rng, rec.commands(straight_probability=1e-300))
    u = [uniform(expected, 0) for _ in range(5)]
    np.testing.assert_array_equal(command[0], [-1.0 + 2.0 * u[1], -0.5 + 1.0 * u[2], 0.0 + 2.0 * u[3]])
    assert rng[0] == expected[0]


def test_resample_every_n_steps_and_moving_threshold():
    spec = rec.commands(resample_steps=250)
    assert [commands.resample_due(s, spec) for s in (0, 1, 249, 250, 500)] == [True, False, False, True, True]
    command = np.array([[0.09, 0.0, 0.0], [0.0, 0.2, 0.0], [0.0, 0.0, -0.11], [0.05, 0.05, 0.1]])
    # |v|^2: 0.0081, 0.04 (> 0.01), 0, 0.005; |yaw|: 0, 0, 0.11 (> 0.1), 0.1 (not > 0.1)
    assert [commands.is_moving(command, i) for i in range(4)] == [False, True, True, False]


def test_gait_step_and_swing_target():
    assert gait.gait_step(2.0, 0.02) == pytest.approx(0.08 * math.pi)
    assert gait.swing_target(0.5, True, 0.08) == pytest.approx(0.02)  # 0.08 * 0.5^2
    assert gait.swing_target(-0.5, True, 0.08) == 0.0  # stance half
    assert gait.swing_target(0.5, False, 0.08) == 0.0  # standing still


@pytest.mark.parametrize("clip, expected", [(False, [-0.05, 0.1, 0.3]), (True, [0.0, 0.1, 0.2])])
def test_touchdown_reward(clip, expected):
    got = [feet.touchdown_reward(air, 0.2, clip) for air in (0.15, 0.3, 0.5)]
    np.testing.assert_allclose(got, expected, atol=1e-15)


def test_step_foot_landing_slipping_and_phase_error():
    robot, physics, legs, params = rec.robot(foot_offset=0.02), rec.physics(), rec.legs(), rec.params()
    # foot 0 lands: in the air for 0.3 s, now at z = 0.025 (height 0.005 < 0.01), moved 0.01 m in x since the last step
    legs.contact[0, 0], legs.air_time[0, 0] = False, 0.3
    legs.previous_foot_pos[0, 0] = (0.99, 0.0, 0.1)
    physics.foot_xpos[0, 0] = (1.0, 0.0, 0.025)
    phase = math.pi / 2  # sin(phase + 0) = 1: foot 0 in mid-swing, target 0.08
    air, slip, error = feet.step_foot(0, 0, physics, robot, legs, params, FLAT, True, phase, 1.0, 0.0, False)
    assert air == pytest.approx(0.3 + 0.02 - 0.1)
    assert slip == pytest.approx((0.01 / 0.02) ** 2)
    assert error == pytest.approx((0.005 - 0.08) ** 2)
    assert legs.contact[0, 0] and legs.air_time[0, 0] == 0.0 and legs.foot_height[0, 0] == pytest.approx(0.005)
    np.testing.assert_array_equal(legs.previous_foot_pos[0, 0], (1.0, 0.0, 0.025))
    # foot 1 in the air at height 0.2: no reward, no slip, air time grows; sin(pi/2 + pi) = -1: stance target 0
    physics.foot_xpos[0, 1] = (0.0, 0.0, 0.22)
    legs.contact[0, 1] = False
    air, slip, error = feet.step_foot(0, 1, physics, robot, legs, params, FLAT, True, phase, 1.0, 0.0, False)
    assert (air, slip) == (0.0, 0.0) and error == pytest.approx(0.2**2) and legs.air_time[0, 1] == pytest.approx(0.02)


def test_place_feet_takes_the_current_positions():
    robot, physics, legs = rec.robot(foot_offset=0.02), rec.physics(), rec.legs()
    physics.foot_xpos[0] = ((1.0, 2.0, 0.03), (4.0, 5.0, 0.06))
    feet.place_feet(0, physics, robot, legs, FLAT)
    np.testing.assert_array_equal(legs.previous_foot_pos[0], physics.foot_xpos[0])
    np.testing.assert_allclose(legs.foot_height[0], (0.01, 0.04))


def test_base_state_of_a_base_turned_90_degrees_about_z():
    physics = rec.physics()
    qpos, qvel = physics.qpos, physics.qvel
    qpos[0, :7] = (0.5, -1.0, 0.3, math.cos(math.pi / 4), 0.0, 0.0, math.sin(math.pi / 4))
    qvel[0, :6] = (1.0, 0.0, 0.2, 0.1, 0.2, 0.3)
    vx, vy, vz, wx, wy, wz, gx, gy, gz, h = base.base_state(0, qpos, qvel, 0, 0)
    # world +x is the body's -y after a +90 degree yaw; gravity stays -z; the angular velocity is read as is
    np.testing.assert_allclose((vx, vy, vz, gx, gy, gz), (0.0, -1.0, 0.2, 0.0, 0.0, -1.0), atol=1e-12)
    assert (wx, wy, wz, h) == (0.1, 0.2, 0.3, 0.3)


def test_has_fallen_by_tilt_or_height_and_velocity_errors():
    p = rec.params(cos_max_tilt=0.5, min_base_height=0.1)
    assert not base.has_fallen(-0.9, 0.3, p)
    assert base.has_fallen(-0.4, 0.3, p)  # tilted beyond 60 degrees
    assert base.has_fallen(-1.0, 0.05, p)  # too low
    command = np.array([[1.0, 0.5, -0.2]])
    lin, yaw = base.velocity_errors(command, 0, 0.5, 0.0, 0.3)
    assert lin == pytest.approx(0.25 + 0.25) and yaw == pytest.approx(0.25)


def test_joint_sums_and_the_joint_group_writers():
    robot, physics, legs = rec.robot(), rec.physics(), rec.legs()
    physics.qpos[0, 7:9] = (0.6, 0.7)  # deviations from home (0.1, -0.2): 0.5, 0.9; joint 1 is 0.2 past its soft high 0.5
    physics.qvel[0, 6:8] = (1.5, -2.5)
    physics.actuator_force[0] = (3.0, 4.0)  # joint 0 drives actuator 1 (4.0), joint 1 actuator 0 (3.0)
    legs.last_action[0], legs.previous_action[0] = (0.5, -0.5), (0.25, 0.5)
    sums = joints.joint_sums(0, physics, robot, legs)
    np.testing.assert_allclose(sums, (16.0 + 9.0, 0.0625 + 1.0, 0.25 + 0.5 * 0.81, 1.4, 0.2), rtol=1e-12)
    obs, priv = np.zeros((1, 6), np.float32), np.zeros((1, 2), np.float32)
    groups.write_joint_pos.py_func(obs[0, 0:2], 0, physics, robot)
    groups.write_joint_vel.py_func(obs[0, 2:4], 0, physics, robot)
    groups.write_last_action.py_func(obs[0, 4:6], 0, legs)
    groups.write_actuator_force.py_func(priv[0], 0, physics, robot)
    np.testing.assert_allclose(obs[0], (0.5, 0.9, 1.5, -2.5, 0.5, -0.5), rtol=1e-6)
    np.testing.assert_array_equal(priv[0], (4.0, 3.0))
    assert joints.limit_violation(-1.5, -1.0, 1.0) == 0.5 and joints.limit_violation(0.0, -1.0, 1.0) == 0.0


@pytest.mark.parametrize("f32", [False, True])
def test_precision_modes_compute_the_same_maths(f32):
    tol = 1e-6 if f32 else 1e-15
    assert precision.exp_kernel(0.5, 0.25, 4.0, f32) == pytest.approx(math.exp(-2.0), rel=tol)
    s, c = precision.phase_sin_cos(1.0, f32)
    assert (s, c) == (pytest.approx(math.sin(1.0), abs=tol), pytest.approx(math.cos(1.0), abs=tol))
    assert precision.shifted_sin(1.0, s, c, math.pi, -1.0, 0.0, f32) == pytest.approx(-math.sin(1.0), abs=tol)
    assert precision.per_dt(0.01, 0.02, 50.0, f32) == pytest.approx(0.5, rel=1e-15)
    assert precision.weighted_square(-2.0, 3.0, f32) == -18.0
    # float32 mode rounds the transcendentals through float32: its exp is exactly a float32 value, float64's is not
    e = precision.exp_kernel(0.3, 0.25, 4.0, f32)
    assert bool(np.float64(np.float32(e)) == e) is f32
