"""Height scan under each env's base: the Numba lookup vs MuJoCo batched rays.

Both scan legged_gym's 17 x 11 grid (187 points, 1.6 m x 1.0 m, rotated by the base yaw)
for N envs of Go1 standing at random points of the default rough terrain
(:class:`~unilab_envs.terrain.TerrainConfig`), on 2 threads each:

* ``numba``: :func:`~unilab_envs.terrain.scan_heights` in a ``prange`` over envs, reading the
  base pose from ``qpos`` (yaw from the quaternion) and writing a float32 ``(N, 187)`` scan;
* ``batch.ray``: ``mujoco.batch.Batch(model, N, nthread=2).ray(pnt, vec)`` with the ray
  origins (scan points above the highest ground, built with NumPy, counted in its time)
  pointing straight down, scan ``base_z - (top - dist)``; it runs ``mj_kinematics`` per sim first. Only the terrain's geom group is
  included, so rays do not stop on the robot's own legs.

The two are interleaved in one process; each row is the best of ``--repeats`` timings
(the machine is shared), in microseconds per env-step, plus the max |difference| of the
two scans (metres). Run it as::

    UNILAB_NUM_THREADS=2 NUMBA_NUM_THREADS=2 OMP_NUM_THREADS=1 nice -n 10 python benchmarks/bench_height_scan.py
"""

from __future__ import annotations

import argparse
import math
import time

import mujoco
import mujoco.batch
import numba as nb
import numpy as np

from unilab_robot.assets import go1
from unilab_envs.terrain import TerrainConfig, generate_terrain, ground_height, scan_heights, scan_points, terrain_model

TERRAIN_GROUP = 3  # the hfield's geom group here, so that rays see only the terrain
THREADS = 2


@nb.njit(parallel=True, cache=True)
def scan_all(out, terrain_map, qpos, points):
    """``out[i]``: the scan of env ``i``, base pose from ``qpos[i, :7]`` (free joint first)."""
    for i in nb.prange(qpos.shape[0]):
        w, x, y, z = qpos[i, 3], qpos[i, 4], qpos[i, 5], qpos[i, 6]
        yaw = math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
        scan_heights(out[i], terrain_map, qpos[i, 0], qpos[i, 1], qpos[i, 2], math.cos(yaw), math.sin(yaw),
                     points)


def ray_origins(qpos: np.ndarray, points: np.ndarray, top: float) -> np.ndarray:
    """``(N, P, 3)`` world scan points at height ``top`` (above all the terrain: a ray that starts
    under the surface would hit its underside)."""
    w, x, y, z = qpos[:, 3], qpos[:, 4], qpos[:, 5], qpos[:, 6]
    yaw = np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    c, s = np.cos(yaw)[:, None], np.sin(yaw)[:, None]
    pnt = np.empty((qpos.shape[0], points.shape[0], 3))
    pnt[:, :, 0] = qpos[:, :1] + c * points[:, 0] - s * points[:, 1]
    pnt[:, :, 1] = qpos[:, 1:2] + s * points[:, 0] + c * points[:, 1]
    pnt[:, :, 2] = top
    return pnt


def place_robots(batch: mujoco.batch.Batch, terrain, rng: np.random.Generator) -> np.ndarray:
    """Put each sim's base at a random point of a random tile, 0.3 m above the ground, random yaw."""
    batch.reset(keyframe=0)
    qpos = batch.bind("qpos")
    n = qpos.shape[0]
    centres = terrain.tile_centers.reshape(-1, 2)[rng.integers(0, terrain.num_levels * terrain.num_types, n)]
    xy = centres + rng.uniform(-0.4, 0.4, size=(n, 2)) * terrain.tile_size
    yaw = rng.uniform(-math.pi, math.pi, n)
    qpos[:, :2] = xy
    qpos[:, 2] = [ground_height(terrain.map, x, y) + 0.3 for x, y in xy]
    qpos[:, 3:7] = np.stack([np.cos(yaw / 2), 0 * yaw, 0 * yaw, np.sin(yaw / 2)], axis=1)
    return np.array(qpos)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", type=int, nargs="+", default=[1024, 4096])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    nb.set_num_threads(min(THREADS, nb.config.NUMBA_NUM_THREADS))
    terrain = generate_terrain(TerrainConfig(), seed=0)
    model = terrain_model(str(go1.MJCF_PATH), terrain.map, sim_dt=0.004)
    model.geom_group[model.geom("floor").id] = TERRAIN_GROUP
    geomgroup = np.zeros(6, np.uint8)
    geomgroup[TERRAIN_GROUP] = 1
    points = scan_points()
    top = float(terrain.map.heights.max()) + 1.0
    down = np.array([0.0, 0.0, -1.0])
    rng = np.random.default_rng(0)
    print(f"height scan of {points.shape[0]} points, {THREADS} threads each (numba: {nb.get_num_threads()}), "
          f"best of {args.repeats}; us per env-step")
    print(f"{'envs':>6} {'numba':>9} {'batch.ray':>10} {'ratio':>7} {'max |diff| m':>13}")
    for n in args.envs:
        batch = mujoco.batch.Batch(model, n, nthread=THREADS)
        qpos = place_robots(batch, terrain, rng)
        out = np.zeros((n, points.shape[0]), np.float32)
        scan_all(out, terrain.map, qpos, points)  # compile / warm up
        batch.ray(ray_origins(qpos, points, top), down, geomgroup=geomgroup)
        best_numba = best_ray = math.inf
        for _ in range(args.repeats):
            start = time.perf_counter()
            scan_all(out, terrain.map, qpos, points)
            best_numba = min(best_numba, time.perf_counter() - start)
            start = time.perf_counter()
            dist, _ = batch.ray(ray_origins(qpos, points, top), down, geomgroup=geomgroup)
            ray_scan = qpos[:, 2:3] - (top - dist)
            best_ray = min(best_ray, time.perf_counter() - start)
        if (dist < 0).any():
            raise RuntimeError(f"{int((dist < 0).sum())} rays missed the terrain")
        diff = float(np.abs(ray_scan - out).max())
        print(f"{n:>6} {best_numba / n * 1e6:>9.3f} {best_ray / n * 1e6:>10.3f} {best_ray / best_numba:>6.1f}x "
              f"{diff:>13.2e}")


if __name__ == "__main__":
    main()
