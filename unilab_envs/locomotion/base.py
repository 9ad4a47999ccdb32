"""The floating base: its body-frame velocities, orientation and height, and when it has fallen."""

from __future__ import annotations

import numba as nb

from unilab_envs.core.quat import projected_gravity, rotate_inverse


@nb.njit(inline="always", cache=True)
def base_state(i, qpos, qvel, root_q, root_d):
    """``(vx, vy, vz, wx, wy, wz, gx, gy, gz, height)`` of env ``i``.

    Linear velocity and gravity direction in the base frame; angular velocity as the
    free joint's ``qvel`` holds it (base frame); height is the base's world z.
    """
    q = (qpos[i, root_q + 3], qpos[i, root_q + 4], qpos[i, root_q + 5], qpos[i, root_q + 6])  # a tuple: no array view
    vx, vy, vz = rotate_inverse(q, qvel[i, root_d], qvel[i, root_d + 1], qvel[i, root_d + 2])
    gx, gy, gz = projected_gravity(q)
    wx, wy, wz = qvel[i, root_d + 3], qvel[i, root_d + 4], qvel[i, root_d + 5]
    return vx, vy, vz, wx, wy, wz, gx, gy, gz, qpos[i, root_q + 2]


@nb.njit(inline="always", cache=True)
def has_fallen(gz, height, params):
    """Tilted beyond ``max_tilt`` (gravity's base-frame z above ``-cos(max_tilt)``) or base below ``min_base_height``."""
    return gz > -params.cos_max_tilt or height < params.min_base_height


@nb.njit(inline="always", cache=True)
def velocity_errors(command, i, vx, vy, wz):
    """Squared tracking errors ``(planar velocity, yaw rate)`` of env ``i`` against its command."""
    return (command[i, 0] - vx) ** 2 + (command[i, 1] - vy) ** 2, (command[i, 2] - wz) ** 2


@nb.njit(inline="always", cache=True)
def above_ground(base, ground_z):
    """:func:`base_state`'s tuple with the height measured from ``ground_z`` (the ground under the base)."""
    vx, vy, vz, wx, wy, wz, gx, gy, gz, height = base
    return vx, vy, vz, wx, wy, wz, gx, gy, gz, height - ground_z
