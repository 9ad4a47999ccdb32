"""Shared Numba helpers of the task kernels: rigid-body math on MuJoCo quaternions
``(w, x, y, z)``, gait-phase stepping, and transcendentals at the precision of the float32
outputs."""

from __future__ import annotations

import math

import numba as nb
import numpy as np


@nb.njit(inline="always", cache=True)
def rotate_inverse(q, v0, v1, v2):
    """Rotate the world vector ``v`` into the frame of quaternion ``q``: ``R(q)^T v``."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    # rows of R(q); the result is R^T v
    r00 = 1.0 - 2.0 * (y * y + z * z)
    r01 = 2.0 * (x * y - w * z)
    r02 = 2.0 * (x * z + w * y)
    r10 = 2.0 * (x * y + w * z)
    r11 = 1.0 - 2.0 * (x * x + z * z)
    r12 = 2.0 * (y * z - w * x)
    r20 = 2.0 * (x * z - w * y)
    r21 = 2.0 * (y * z + w * x)
    r22 = 1.0 - 2.0 * (x * x + y * y)
    return (
        r00 * v0 + r10 * v1 + r20 * v2,
        r01 * v0 + r11 * v1 + r21 * v2,
        r02 * v0 + r12 * v1 + r22 * v2,
    )


@nb.njit(inline="always", cache=True)
def projected_gravity(q):
    """Unit gravity direction ``(0, 0, -1)`` seen in the body frame of ``q``."""
    return rotate_inverse(q, 0.0, 0.0, -1.0)


@nb.njit(inline="always", cache=True)
def yaw_quat(yaw):
    """Quaternion ``(w, x, y, z)`` of a rotation by ``yaw`` about world z."""
    return np.cos(0.5 * yaw), 0.0, 0.0, np.sin(0.5 * yaw)


@nb.njit(inline="always", cache=True)
def exp_tracking(error_sq, sigma):
    """Tracking reward ``exp(-error^2 / sigma)`` in (0, 1]."""
    return np.exp(-error_sq / sigma)


@nb.njit(inline="always", cache=True)
def advance_phase(phase, step):
    """``(phase + step) % 2pi`` for ``phase`` in [0, 2pi): the same bits, taking ``%`` only when it wraps."""
    p = phase + step
    return p if p < 2.0 * math.pi else p % (2.0 * math.pi)


@nb.njit(inline="always", cache=True)
def exp_f32(x):
    """``exp(x)`` evaluated in float32, returned as float64.

    For values that leave the kernel as float32 (reward terms): float32 ``expf`` is
    faster than the float64 ``exp`` and as exact as float32 arithmetic allows.
    """
    return np.float64(np.exp(np.float32(x)))


@nb.njit(inline="always", cache=True)
def sin_cos_f32(angle):
    """``(sin, cos)`` of ``angle`` evaluated in float32 (see ``exp_f32``), as float64.

    For angles of a few turns at most (gait phases); float32's error grows with ``|angle|``.
    """
    a = np.float32(angle)
    return np.float64(np.sin(a)), np.float64(np.cos(a))
