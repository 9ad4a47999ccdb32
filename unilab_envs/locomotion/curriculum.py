"""The terrain curriculum: which tile an episode starts on, from how the last one went.

The terrain is a grid of tiles, one row per difficulty level and one column per terrain
type (:mod:`unilab_envs.terrain`). Each env keeps its column and climbs or drops levels,
the rule legged_gym made standard: when an episode ends, an env that walked farther from
its spawn point than ``promote_distance`` (half a tile) moves one level up, one that
ended nearer its spawn point than ``demote_fraction`` of how far exact tracking of its
velocity commands would have taken it moves one level down (never below 0), and one that
passes the top level goes to a random level, so the hardest tiles never hoard the envs
that solved them. The commanded walk follows the base's heading (see
:func:`~unilab_envs.locomotion.ground.track_walk`): legged_gym compares with the command's
speed times the episode length, which its heading commands make a straight line; under
yaw-rate commands that would demote a robot that tracked every command on a curved path. The first episode of an env
draws its column and a level in ``init_levels`` from the env's own random stream,
so env ``i`` of a batch starts where a single env with the same seed starts.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba as nb
import numpy as np

from unilab_envs.core.rng import uniform
from unilab_envs.locomotion.ground import ground_at


class Curriculum(NamedTuple):
    """Each env's tile and the rule that moves it (per-env arrays are ``(N,)``, written in place)."""

    level: np.ndarray  # (N,) int64 difficulty row of the env's tile; -1 until its first episode
    column: np.ndarray  # (N,) int64 terrain-type column of the env's tile
    tile_centers: np.ndarray  # (L, T, 2) world xy of each tile's centre
    promote_distance: float  # m walked from the spawn point that earns the next level
    demote_fraction: float  # share of the commanded walk's distance below which an env drops a level
    init_low: int  # first episodes start on a level in init_low..init_high (checked against the levels by the config)
    init_high: int
    spawn_clearance: float  # m: half side of the square around the spawn point whose highest ground lifts the robot


def start_curriculum(num_envs: int, tile_centers: np.ndarray, promote_distance: float, demote_fraction: float,
                     init_levels: tuple[int, int], spawn_clearance: float) -> Curriculum:  # fmt: skip
    """A curriculum over ``num_envs`` envs that have not started yet."""
    return Curriculum(np.full(num_envs, -1, dtype=np.int64), np.zeros(num_envs, dtype=np.int64),
                      np.ascontiguousarray(tile_centers, dtype=np.float64), float(promote_distance), float(demote_fraction),
                      int(init_levels[0]), int(init_levels[1]), float(spawn_clearance))  # fmt: skip


@nb.njit(inline="always", cache=True)
def draw_index(rng, i, count):
    """A uniform integer in ``[0, count)`` from env ``i``'s stream."""
    return min(int(uniform(rng, i) * count), count - 1)


@nb.njit(inline="always", cache=True)
def next_level(level, walked, commanded, num_levels, course, rng, i):
    """The level of env ``i``'s next episode (see the module docstring)."""
    if walked > course.promote_distance:
        level += 1
        if level >= num_levels:
            level = draw_index(rng, i, num_levels)
    elif walked < course.demote_fraction * commanded:
        level = max(level - 1, 0)
    return level


@nb.njit(inline="always", cache=True)
def highest_ground(ground, x, y, half):
    """The highest ground in the square of half side ``half`` around ``(x, y)``, sampled no sparser than the heightfield."""
    count = int(math.ceil(half / ground.spacing))
    step = half / count if count > 0 else 0.0
    top = ground_at(ground, x, y)
    for a in range(-count, count + 1):
        for b in range(-count, count + 1):
            top = max(top, ground_at(ground, x + a * step, y + b * step))
    return top


@nb.njit(cache=True)
def reset_on_terrain(ids, rng, physics, robot, ground, course):
    """Rows ``ids`` (already randomized around the keyframe) move to their next tile.

    The base keeps its random offset and yaw from the keyframe, now around the tile's
    centre, and is lifted by the highest ground under it; the walk restarts from there.
    """
    num_levels, num_columns = course.tile_centers.shape[0], course.tile_centers.shape[1]
    rq = robot.root_q
    for i in ids:
        if course.level[i] < 0:
            course.column[i] = draw_index(rng, i, num_columns)
            course.level[i] = course.init_low + draw_index(rng, i, course.init_high - course.init_low + 1)
        else:
            commanded = math.sqrt(ground.commanded_xy[i, 0] ** 2 + ground.commanded_xy[i, 1] ** 2)
            course.level[i] = next_level(course.level[i], ground.walked[i], commanded, num_levels, course, rng, i)
        center = course.tile_centers[course.level[i], course.column[i]]
        x = physics.qpos[i, rq] + center[0]
        y = physics.qpos[i, rq + 1] + center[1]
        physics.qpos[i, rq] = x
        physics.qpos[i, rq + 1] = y
        physics.qpos[i, rq + 2] += highest_ground(ground, x, y, course.spawn_clearance)
        ground.spawn_xy[i, 0] = x
        ground.spawn_xy[i, 1] = y
        ground.walked[i] = 0.0
        ground.commanded_xy[i, 0] = 0.0
        ground.commanded_xy[i, 1] = 0.0
