"""The static geoms of a MuJoCo model, packed for the depth camera's Numba ray caster.

A static geom belongs to a body welded to the world (``body_weldid == 0``): the ground, the
terrain's heightfield, walls, steps, obstacles. What a camera on the robot sees of the robot
itself (its legs, its other envs' copies never: each env is its own world) is left out, as a
height scan leaves it out: the depth image is the world's geometry.
:func:`cast_ray` returns the nearest hit of one world-frame ray among them, with
:mod:`~unilab_envs.sensors.raycast`'s per-type intersections.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import mujoco
import numba as nb
import numpy as np

from unilab_envs.sensors.raycast import MISS, ray_box, ray_capsule, ray_hfield, ray_plane, ray_sphere

PLANE, SPHERE, CAPSULE, BOX, HFIELD = (int(mujoco.mjtGeom.mjGEOM_PLANE), int(mujoco.mjtGeom.mjGEOM_SPHERE),
                                       int(mujoco.mjtGeom.mjGEOM_CAPSULE), int(mujoco.mjtGeom.mjGEOM_BOX),
                                       int(mujoco.mjtGeom.mjGEOM_HFIELD))
SUPPORTED = {PLANE: "plane", SPHERE: "sphere", CAPSULE: "capsule", BOX: "box", HFIELD: "hfield"}


class StaticScene(NamedTuple):
    """``G`` static geoms in the world frame (``mat`` row-major, as ``geom_xmat``) and the heightfields' samples."""

    kind: np.ndarray  # (G,) int64 mjtGeom
    pos: np.ndarray  # (G, 3)
    mat: np.ndarray  # (G, 9)
    size: np.ndarray  # (G, 3) geom_size
    rbound: np.ndarray  # (G,) bounding-sphere radius (0: none, a plane or a heightfield)
    hfield_adr: np.ndarray  # (G,) start of the geom's heightfield in ``hfield_data`` (-1: not a heightfield)
    hfield_nrow: np.ndarray  # (G,)
    hfield_ncol: np.ndarray  # (G,)
    hfield_size: np.ndarray  # (G, 4) (radius x, radius y, elevation z, base depth)
    hfield_data: np.ndarray  # (S,) float64 samples in [0, 1]


def static_scene(model: mujoco.MjModel, geom_groups: Sequence[int] | None = None) -> StaticScene:
    """The model's static geoms (in ``geom_groups`` when given) at their world poses; ``ValueError`` naming a
    static geom of a type the camera cannot see (put it in a group left out of ``geom_groups``)."""
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    static = [g for g in range(model.ngeom) if model.body_weldid[model.geom_bodyid[g]] == 0
              and (geom_groups is None or int(model.geom_group[g]) in geom_groups)]
    for g in static:
        if int(model.geom_type[g]) not in SUPPORTED:
            name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g) or f"#{g}"
            kind = mujoco.mjtGeom(int(model.geom_type[g])).name
            raise ValueError(f"the depth camera cannot see static geom {name!r} ({kind}); it sees {', '.join(SUPPORTED.values())}: "
                             f"put the geom in a group the camera's geom_groups leaves out")
    ids = np.array(static, dtype=np.int64)
    hfield_adr = np.full(len(ids), -1, np.int64)
    nrow, ncol, hsize = np.zeros(len(ids), np.int64), np.zeros(len(ids), np.int64), np.zeros((len(ids), 4))
    for k, g in enumerate(ids):
        h = int(model.geom_dataid[g])
        if int(model.geom_type[g]) == HFIELD:
            hfield_adr[k], nrow[k], ncol[k] = model.hfield_adr[h], model.hfield_nrow[h], model.hfield_ncol[h]
            hsize[k] = model.hfield_size[h]
    kinds = model.geom_type[ids].astype(np.int64)
    rbound = np.where((kinds == PLANE) | (kinds == HFIELD), 0.0, model.geom_rbound[ids])
    return StaticScene(kinds, data.geom_xpos[ids].copy(), data.geom_xmat[ids].copy(), model.geom_size[ids].copy(), rbound,
                       hfield_adr, nrow, ncol, hsize, np.asarray(model.hfield_data, dtype=np.float64).copy())


@nb.njit(inline="always", cache=True)
def _misses_bound(scene, g, ox, oy, oz, dx, dy, dz):
    """The ray passes outside geom ``g``'s bounding sphere (or behind it)."""
    radius = scene.rbound[g]
    if radius <= 0.0:
        return False
    cx = scene.pos[g, 0] - ox
    cy = scene.pos[g, 1] - oy
    cz = scene.pos[g, 2] - oz
    dd = dx * dx + dy * dy + dz * dz
    along = (cx * dx + cy * dy + cz * dz) / dd
    if along < 0.0:
        along = 0.0
    ex = cx - along * dx
    ey = cy - along * dy
    ez = cz - along * dz
    return ex * ex + ey * ey + ez * ez > radius * radius


@nb.njit(cache=True)  # a call, not inlined: the camera kernel compiles in a quarter of the time, at the same speed
def cast_ray(scene, ox, oy, oz, dx, dy, dz, t_max):
    """The smallest ``t`` in ``[0, t_max]`` at which world ray ``o + t d`` meets a static geom, or MISS."""
    best = MISS
    for g in range(scene.kind.shape[0]):
        if _misses_bound(scene, g, ox, oy, oz, dx, dy, dz):
            continue
        m = scene.mat[g]
        px = ox - scene.pos[g, 0]
        py = oy - scene.pos[g, 1]
        pz = oz - scene.pos[g, 2]
        lx = m[0] * px + m[3] * py + m[6] * pz  # the origin and direction in the geom's frame (mat transposed)
        ly = m[1] * px + m[4] * py + m[7] * pz
        lz = m[2] * px + m[5] * py + m[8] * pz
        vx = m[0] * dx + m[3] * dy + m[6] * dz
        vy = m[1] * dx + m[4] * dy + m[7] * dz
        vz = m[2] * dx + m[5] * dy + m[8] * dz
        kind = scene.kind[g]
        size = scene.size[g]
        limit = t_max if best < 0.0 else best
        if kind == PLANE:
            t = ray_plane(lx, ly, lz, vx, vy, vz, size[0], size[1])
        elif kind == SPHERE:
            t = ray_sphere(lx, ly, lz, vx, vy, vz, size[0])
        elif kind == CAPSULE:
            t = ray_capsule(lx, ly, lz, vx, vy, vz, size[0], size[1])
        elif kind == BOX:
            t = ray_box(lx, ly, lz, vx, vy, vz, size[0], size[1], size[2])
        else:
            h = scene.hfield_size[g]
            t = ray_hfield(lx, ly, lz, vx, vy, vz, scene.hfield_data, scene.hfield_adr[g], scene.hfield_nrow[g],
                           scene.hfield_ncol[g], h[0], h[1], h[2], h[3], limit)
        if t >= 0.0 and t <= limit:
            best = t
    return best
