"""Generate the tiled heightfield of a :class:`~unilab_robot.terrain.config.TerrainConfig`.

Layout (world frame, metres): the heightfield covers ``[0, 2*border + num_levels*tile_size]``
along x by ``[0, 2*border + num_types*tile_size]`` along y, so the world origin is the
outer corner of the flat border; tile ``(level l, type t)`` has its centre at
``(border + (l + 0.5)*tile_size, border + (t + 0.5)*tile_size)``. Every tile's outer edge
is at height 0 (like the border), so neighbouring tiles meet without a cliff.

Tile shapes at difficulty ``d`` (``r`` is the Chebyshev distance from the tile centre,
``c = tile_size/2``, ``p = platform/2``; the square ``r <= p`` is always flat):

* ``flat``: 0.
* ``slope``: pyramid ``s * tan(d*max_slope) * (c - max(r, p))``, ``s = +1`` on even levels
  (hill, centre highest) and ``-1`` on odd levels (pit, centre lowest), so a robot moving up
  the curriculum meets both up- and down-slopes.
* ``rough``: uniform noise of peak-to-peak ``amplitude(d)`` drawn every 0.1 m (or every
  sample if coarser) and bilinearly interpolated between.
* ``steps``: 20 random axis-aligned blocks, sides 0.4..1.0 m, each of height one of
  ``-h, -h/2, +h/2, +h`` with ``h = step_height(d)`` (later blocks overwrite earlier ones).
* ``stairs_up``: rings of tread ``stair_width`` from the tile edge (height 0) inward, each one
  riser ``stair_height(d)`` higher; the platform is the top.
* ``stairs_down``: the same, negated (the platform is the bottom).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from unilab_robot.terrain.config import TerrainConfig

ROUGH_NOISE_SPACING = 0.1  # m between independent noise values of a rough tile
NUM_BLOCKS = 20  # random blocks per steps tile
BLOCK_SIDE = (0.4, 1.0)  # m, range of each block side


class TerrainMap(NamedTuple):
    """A regular grid of ground heights; a Numba-friendly record.

    ``heights[ix, iy]`` (float64, metres) is the ground height at world
    ``(x0 + ix*spacing, y0 + iy*spacing)``; ``inv_spacing = 1/spacing``.
    """

    heights: np.ndarray
    x0: float
    y0: float
    spacing: float
    inv_spacing: float


class Terrain(NamedTuple):
    """A generated terrain: its height map and the centre of every tile.

    ``tile_centers[l, t]`` is the world xy (float64) of the tile at level ``l`` and type
    index ``t`` (the index into ``TerrainConfig.types``).
    """

    map: TerrainMap
    tile_centers: np.ndarray
    num_levels: int
    num_types: int
    tile_size: float


def flat_terrain() -> TerrainMap:
    """A 2x2 grid of zeros: every lookup (clamped to the grid) gives 0.0; for flat-ground tasks.

    It is a lookup table, not a floor: it spans 1 m, so a flat task keeps its plane geom
    rather than passing this to :func:`~unilab_robot.terrain.scene.terrain_model`.
    """
    return TerrainMap(heights=np.zeros((2, 2), dtype=np.float64), x0=-0.5, y0=-0.5, spacing=1.0, inv_spacing=1.0)


def _lerp(bounds: tuple[float, float], d: float) -> float:
    return float(bounds[0]) + d * (float(bounds[1]) - float(bounds[0]))


def _rough(u: np.ndarray, amplitude: float, resolution: float, rng: np.random.Generator) -> np.ndarray:
    """Uniform noise in ``[-amplitude/2, amplitude/2]`` on a coarse grid, bilinear in between."""
    m = u.size
    stride = max(1, round(ROUGH_NOISE_SPACING / resolution))
    coarse = rng.uniform(-0.5 * amplitude, 0.5 * amplitude, size=(m // stride + 2, m // stride + 2))
    pos = np.arange(m) / stride
    i0 = np.floor(pos).astype(np.int64)
    t = pos - i0
    rows = coarse[i0] * (1 - t)[:, None] + coarse[i0 + 1] * t[:, None]  # interpolate along x
    return rows[:, i0] * (1 - t)[None, :] + rows[:, i0 + 1] * t[None, :]  # then along y


def _steps(u: np.ndarray, height: float, resolution: float, rng: np.random.Generator) -> np.ndarray:
    """Random blocks of heights ``+-height, +-height/2`` over a zero tile."""
    m = u.size
    tile = np.zeros((m, m))
    levels = np.array([-height, -0.5 * height, 0.5 * height, height])
    for _ in range(NUM_BLOCKS):
        wx, wy = (np.round(rng.uniform(*BLOCK_SIDE, size=2) / resolution)).astype(np.int64)
        ix, iy = rng.integers(0, m, size=2)
        tile[ix:ix + wx, iy:iy + wy] = levels[rng.integers(0, 4)]
    return tile


def _tile(kind: str, level: int, cfg: TerrainConfig, u: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Heights of one tile at its samples ``u`` (offsets from the centre along x and y)."""
    d = cfg.difficulty(level)
    half = 0.5 * cfg.tile_size
    p = 0.5 * cfg.platform
    r = np.maximum(np.abs(u)[:, None], np.abs(u)[None, :])  # Chebyshev distance from the centre
    on_platform = r <= p + 1e-9
    from_edge = half - np.maximum(r, p)  # distance inward from the tile edge, frozen on the platform
    if kind == "flat":
        tile = np.zeros_like(r)
    elif kind == "slope":
        sign = 1.0 if level % 2 == 0 else -1.0
        tile = sign * math.tan(d * cfg.max_slope) * from_edge
    elif kind == "rough":
        tile = _rough(u, _lerp(cfg.rough_amplitude, d), cfg.resolution, rng)
    elif kind == "steps":
        tile = _steps(u, _lerp(cfg.step_height, d), cfg.resolution, rng)
    elif kind in ("stairs_up", "stairs_down"):
        sign = 1.0 if kind == "stairs_up" else -1.0
        tile = sign * _lerp(cfg.stair_height, d) * np.floor(from_edge / cfg.stair_width + 1e-9)
    else:  # validate() rejects unknown types; this guards a config that skipped it
        raise ValueError(f"unknown terrain type {kind!r}; call TerrainConfig.validate() first")
    if kind in ("rough", "steps"):
        tile[on_platform] = 0.0
    return tile


def generate_terrain(cfg: TerrainConfig, seed: int) -> Terrain:
    """The terrain of ``cfg``; the same ``(cfg, seed)`` always gives the same heights.

    Validates ``cfg`` first (a bad config raises :class:`~unilab_robot.config.ConfigError`).
    Random tiles draw from one ``np.random.default_rng(seed)``, tile by tile, level-major.
    """
    cfg.validate()
    rng = np.random.default_rng(seed)
    res = cfg.resolution
    m = round(cfg.tile_size / res)  # samples per tile side (the next tile owns the edge sample)
    nb = round(cfg.border / res)
    num_types = len(cfg.types)
    heights = np.zeros((2 * nb + cfg.num_levels * m + 1, 2 * nb + num_types * m + 1), dtype=np.float64)
    u = (np.arange(m) - 0.5 * m) * res  # sample offsets from the tile centre
    centers = np.empty((cfg.num_levels, num_types, 2), dtype=np.float64)
    for level in range(cfg.num_levels):
        for t, kind in enumerate(cfg.types):
            ix, iy = nb + level * m, nb + t * m
            heights[ix:ix + m, iy:iy + m] = _tile(kind, level, cfg, u, rng)
            centers[level, t] = (cfg.border + (level + 0.5) * cfg.tile_size,
                                 cfg.border + (t + 0.5) * cfg.tile_size)
    terrain_map = TerrainMap(heights=heights, x0=0.0, y0=0.0, spacing=float(res), inv_spacing=1.0 / res)
    return Terrain(map=terrain_map, tile_centers=centers, num_levels=cfg.num_levels, num_types=num_types,
                   tile_size=float(cfg.tile_size))
