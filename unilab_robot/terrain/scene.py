"""Put a :class:`~unilab_robot.terrain.generate.TerrainMap` into a robot's MJCF as a MuJoCo hfield.

MuJoCo's hfield conventions (``mjModel.hfield_*``, ``mj_rayHfield``): ``nrow`` rows run
along the geom's y axis and ``ncol`` columns along x; sample ``(row r, col c)`` is
``hfield_data[r*ncol + c]`` (float32 in [0, 1]) at local
``(-size[0] + 2*size[0]*c/(ncol-1), -size[1] + 2*size[1]*r/(nrow-1), data*size[2])``;
``size = (radius_x, radius_y, elevation_z, base_z)``, with a base box of depth ``base_z``
below the geom origin. So a ``heights[ix, iy]`` grid becomes ``ncol = nx``, ``nrow = ny``,
data ``(heights.T - min) / (max - min)``, elevation ``max - min`` and the geom at
``(x0 + radius_x, y0 + radius_y, min)``.
"""

from __future__ import annotations

import mujoco
import numpy as np

from unilab_robot.assets import mjcf_file
from unilab_robot.terrain.generate import TerrainMap

FLOOR_GEOM = "floor"
HFIELD_NAME = "terrain"
BASE_DEPTH = 1.0  # m of solid box below the lowest ground point
MIN_ELEVATION = 1e-3  # m; MuJoCo needs elevation_z > 0 even for a flat map


def terrain_model(model_path: str, terrain: TerrainMap, sim_dt: float) -> mujoco.MjModel:
    """Compile the MJCF at ``model_path`` with its ``floor`` plane replaced by ``terrain``.

    The hfield geom (named ``floor``, so code that looks the floor up keeps working) keeps
    the plane's friction, contact bits, solver parameters and material; its collision
    surface is ``terrain.heights`` (MuJoCo triangulates each cell, as
    :func:`~unilab_envs.terrain.lookup.ground_height` does). ``model.opt.timestep = sim_dt``.
    """
    path = mjcf_file(model_path)
    heights = np.asarray(terrain.heights, dtype=np.float64)
    nx, ny = heights.shape
    if nx < 2 or ny < 2:
        raise ValueError(f"a terrain map needs at least 2x2 samples, got {heights.shape}")
    try:
        spec = mujoco.MjSpec.from_file(str(path))
    except ValueError as error:
        raise ValueError(f"could not read MJCF {str(path)!r}: {error}") from error
    floor = spec.geom(FLOOR_GEOM)
    if floor is None or floor.type != mujoco.mjtGeom.mjGEOM_PLANE:
        raise ValueError(f"MJCF {str(path)!r} has no plane geom named {FLOOR_GEOM!r} to replace by the terrain; "
                         f"add <geom name={FLOOR_GEOM!r} type='plane' .../> to its worldbody")
    low, high = float(heights.min()), float(heights.max())
    elevation = max(high - low, MIN_ELEVATION)
    radius_x = 0.5 * (nx - 1) * terrain.spacing
    radius_y = 0.5 * (ny - 1) * terrain.spacing
    normalised = ((heights.T - low) / elevation).ravel()  # row-major (nrow = ny, ncol = nx)
    spec.add_hfield(name=HFIELD_NAME, size=[radius_x, radius_y, elevation, BASE_DEPTH], nrow=ny, ncol=nx,
                    userdata=normalised)
    ground = spec.worldbody.add_geom(
        type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname=HFIELD_NAME,
        pos=[terrain.x0 + radius_x, terrain.y0 + radius_y, low],
        friction=floor.friction, contype=floor.contype, conaffinity=floor.conaffinity, condim=floor.condim,
        priority=floor.priority, solref=floor.solref, solimp=floor.solimp, solmix=floor.solmix,
        margin=floor.margin, gap=floor.gap, material=floor.material, rgba=floor.rgba, group=floor.group,
    )
    spec.delete(floor)
    ground.name = FLOOR_GEOM
    try:
        model = spec.compile()
    except ValueError as error:
        raise ValueError(f"could not compile MJCF {str(path)!r} with the terrain: {error}") from error
    hid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_HFIELD, HFIELD_NAME)
    adr = model.hfield_adr[hid]
    model.hfield_data[adr:adr + nx * ny] = normalised  # the compiler rescales userdata to [0, 1]; undo that
    model.opt.timestep = sim_dt
    return model
