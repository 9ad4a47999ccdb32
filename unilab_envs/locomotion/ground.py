"""Heights measured from the ground under the robot, the heading, and the distance walked.

On a flat task (:func:`flat_ground`) every height is world z, as on a plane at z = 0: no
lookup is made and the results are bit for bit those of a task without a ground record.
On a terrain task, the base height, the foot heights (and so contact) and the fall test
are measured from the heightfield under the base or the foot
(:func:`~unilab_envs.terrain.lookup.ground_height`), the height scan samples it on a grid
around the base, turned with the base's heading (its writer: :mod:`unilab_envs.locomotion.groups`), and the walk from the spawn point is
tracked for the terrain curriculum (:mod:`unilab_envs.locomotion.curriculum`).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from unilab_envs.locomotion.records import Ground
from unilab_robot.terrain.generate import flat_terrain
from unilab_envs.terrain.lookup import ground_height

NO_CAMERA = np.zeros((0, 0), np.float32)  # Ground.depth_image of a task without a depth camera


def flat_ground() -> Ground:
    """The ground of a flat task: z = 0 everywhere, no scan, no curriculum arrays."""
    return Ground(*flat_terrain(), True, np.zeros((0, 2)), np.zeros((0, 2)), np.zeros(0), np.zeros((0, 2)), NO_CAMERA)


def terrain_ground(terrain_map, scan_points: np.ndarray, num_envs: int) -> Ground:
    """The ground of a terrain task over ``num_envs`` envs (spawn points at the origin until the first reset)."""
    points = np.ascontiguousarray(scan_points, dtype=np.float64).reshape(-1, 2)
    return Ground(*terrain_map, False, points, np.zeros((num_envs, 2)), np.zeros(num_envs), np.zeros((num_envs, 2)), NO_CAMERA)


@nb.njit(inline="always", cache=True)
def ground_at(ground, x, y):
    """The ground height (m) at world ``(x, y)``: 0 on a flat ground."""
    if ground.flat:
        return 0.0
    return ground_height(ground, x, y)


@nb.njit(inline="always", cache=True)
def heading(qw, qx, qy, qz):
    """``(cos, sin)`` of the yaw of the base's forward (x) axis projected on the ground plane."""
    fx = 1.0 - 2.0 * (qy * qy + qz * qz)
    fy = 2.0 * (qx * qy + qw * qz)
    norm = math.sqrt(fx * fx + fy * fy)
    if norm < 1e-9:  # pointing straight up or down: any heading will do
        return 1.0, 0.0
    return fx / norm, fy / norm


@nb.njit(inline="always", cache=True)
def base_ground(i, physics, robot, ground):
    """The ground height under env ``i``'s base."""
    return ground_at(ground, physics.qpos[i, robot.root_q], physics.qpos[i, robot.root_q + 1])


@nb.njit(inline="always", cache=True)
def track_walk(i, physics, robot, ground, command, dt):
    """Update env ``i``'s distance from its spawn point and where its commands would have taken it (terrain only).

    The commanded walk integrates the xy velocity command turned by the base's heading, so
    a robot that tracks its commands exactly has walked exactly as far as it was asked, also
    along the arcs a yaw-rate command draws (summing ``|v| dt`` would count an arc's length).
    """
    if ground.flat:
        return
    rq = robot.root_q
    qpos = physics.qpos
    dx = qpos[i, rq] - ground.spawn_xy[i, 0]
    dy = qpos[i, rq + 1] - ground.spawn_xy[i, 1]
    ground.walked[i] = math.sqrt(dx * dx + dy * dy)
    c, s = heading(qpos[i, rq + 3], qpos[i, rq + 4], qpos[i, rq + 5], qpos[i, rq + 6])
    ground.commanded_xy[i, 0] += (c * command[i, 0] - s * command[i, 1]) * dt
    ground.commanded_xy[i, 1] += (s * command[i, 0] + c * command[i, 1]) * dt
