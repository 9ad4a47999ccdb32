"""The retargeter's pure math (unilab_envs.motion.kinematics), against values worked out by hand."""

import numpy as np
import pytest

from unilab_envs.motion import kinematics as km


def test_finite_difference_of_a_parabola_is_exact_inside():
    dt = 0.1
    t = np.arange(6) * dt
    x = t**2  # dx/dt = 2t; central differences are exact on a parabola
    v = km.finite_difference(x, dt)
    np.testing.assert_allclose(v[1:-1], 2 * t[1:-1], atol=1e-12)
    # the ends are one-sided: (0.01 - 0) / 0.1 and (0.25 - 0.16) / 0.1
    np.testing.assert_allclose(v[[0, -1]], [0.1, 0.9], atol=1e-12)
    assert km.finite_difference(np.ones((1, 3)), dt).tolist() == [[0.0, 0.0, 0.0]]


def test_angular_velocity_of_a_constant_spin():
    dt, w = 0.03, 2.0  # 2 rad/s about z
    angle = w * dt * np.arange(10)
    q = np.stack([np.cos(angle / 2), 0 * angle, 0 * angle, np.sin(angle / 2)], axis=1)
    q[3] *= -1.0  # the same orientation, the other sign: must not matter
    omega = km.angular_velocity(q, dt)
    np.testing.assert_allclose(omega, np.tile([0.0, 0.0, w], (10, 1)), atol=1e-9)


def test_quaternion_helpers():
    qz90 = np.array([np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)])
    np.testing.assert_allclose(km.quat_to_rotvec(km.quat_mul(qz90, qz90)), [0, 0, np.pi], atol=1e-12)
    np.testing.assert_allclose(km.quat_mul(qz90, km.quat_conj(qz90)), [1, 0, 0, 0], atol=1e-12)


def test_scale_chain_keeps_directions_and_takes_new_lengths():
    # root at (0, 0, 1); child 1 m below it; grandchild 1 m ahead of the child
    pts = np.array([[[0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]])
    out = km.scale_chain(pts, (-1, 0, 1), np.array([1.0, 0.5, 2.0]), root_scale=0.8)
    np.testing.assert_allclose(out[0], [[0, 0, 0.8], [0, 0, 0.3], [2.0, 0, 0.3]])
    with pytest.raises(ValueError):
        km.scale_chain(pts, (1, -1, 1), np.ones(3), 1.0)


def test_stance_is_low_and_slow_and_long_enough():
    height = np.array([0.0, 0.0, 0.0, 0.2, 0.0, 0.0, 0.0, 0.0])
    speed = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0])
    stance = km.detect_stance(height, speed, max_height=0.05, max_speed=0.3, min_frames=2)
    # frame 3 is high, frame 5 fast; the single frame 4 is too short a run
    assert stance.tolist() == [True, True, True, False, False, False, True, True]
    assert km.runs(stance) == [(0, 3), (6, 8)]


def test_skate_is_the_mean_move_per_stance_frame_pair():
    xy = np.zeros((5, 2))
    xy[:, 0] = [0.0, 0.01, 0.02, 0.5, 0.51]  # 1 cm per frame in stance, a jump while swinging
    stance = np.array([True, True, True, False, True])
    assert km.skate_cm_per_stance_frame(xy, stance) == pytest.approx(1.0)
    assert km.skate_cm_per_stance_frame(xy, np.zeros(5, bool)) == 0.0


def test_locked_stance_does_not_slide_and_swing_eases_in():
    xy = np.stack([np.linspace(0, 0.9, 10), np.zeros(10)], axis=1)  # a foot gliding 10 cm per frame
    stance = np.array([False] * 3 + [True] * 4 + [False] * 3)
    locked = km.lock_stance_xy(xy, stance, blend_frames=2)
    assert km.skate_cm_per_stance_frame(locked, stance) == 0.0
    np.testing.assert_allclose(locked[3:7, 0], 0.45)  # the run's mean
    np.testing.assert_allclose(locked[0, 0], 0.0)     # far from the run: untouched
    # one frame before touch-down: two thirds of the way to the pin (offset 0.45 - 0.3 = 0.15)
    np.testing.assert_allclose(locked[2, 0], 0.2 + 0.15 * 2 / 3)
