"""Ground height lookups on a :class:`~unilab_robot.terrain.generate.TerrainMap`, for Numba kernels.

:func:`ground_height` interpolates a grid cell exactly as MuJoCo's heightfield surface
does, so it agrees with ``mj_ray`` / the contact surface of the hfield built by
:func:`~unilab_robot.terrain.scene.terrain_model` (to float32 rounding of
``hfield_data``). MuJoCo (``src/engine/engine_ray.c``, ``mj_rayHfield``) splits the cell
between samples ``(c, r)`` and ``(c+1, r+1)`` (column ``c`` along x, row ``r`` along y) into
the triangles ``{(c,r), (c+1,r+1), (c+1,r)}`` and ``{(c,r), (c+1,r+1), (c,r+1)}``: the
diagonal runs from the low-x/low-y corner to the high-x/high-y corner. With fractional
offsets ``tx, ty`` in the cell, ``tx >= ty`` lies on the first triangle, ``ty > tx`` on the second.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(inline="always", cache=True)
def ground_height(terrain_map, x, y):
    """Ground height at world ``(x, y)``; outside the grid, the height at the nearest grid edge."""
    heights = terrain_map.heights
    nx = heights.shape[0]
    ny = heights.shape[1]
    fx = (x - terrain_map.x0) * terrain_map.inv_spacing
    fy = (y - terrain_map.y0) * terrain_map.inv_spacing
    fx = min(max(fx, 0.0), nx - 1.0)
    fy = min(max(fy, 0.0), ny - 1.0)
    ix = min(int(fx), nx - 2)
    iy = min(int(fy), ny - 2)
    tx = fx - ix
    ty = fy - iy
    h00 = heights[ix, iy]
    h11 = heights[ix + 1, iy + 1]
    if tx >= ty:  # triangle (0,0), (1,0), (1,1)
        h10 = heights[ix + 1, iy]
        return h00 + tx * (h10 - h00) + ty * (h11 - h10)
    h01 = heights[ix, iy + 1]  # triangle (0,0), (0,1), (1,1)
    return h00 + ty * (h01 - h00) + tx * (h11 - h01)


@nb.njit(inline="always", cache=True)
def scan_heights(out, terrain_map, base_x, base_y, base_z, cos_yaw, sin_yaw, points):
    """``out[k] = base_z - ground_height`` under scan point ``k``, rotated by the base yaw.

    ``points`` is ``(n, 2)`` in the yaw-aligned base frame (see :func:`unilab_robot.terrain.scan.scan_points`); ``out``
    a 1-D float32 or float64 array (or row view) of length ``n``.
    """
    for k in range(points.shape[0]):
        px = points[k, 0]
        py = points[k, 1]
        wx = base_x + cos_yaw * px - sin_yaw * py
        wy = base_y + sin_yaw * px + cos_yaw * py
        out[k] = base_z - ground_height(terrain_map, wx, wy)
