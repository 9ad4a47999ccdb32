"""Rough-terrain policies outside training: the spec's ``terrain`` section, the ground and the height scan in NumPy.

A terrain task's policy sees a ``height_scan`` group: the base's height above the ground
at a grid of points around it, turned with the base's heading (the env's Numba kernels:
:func:`unilab_envs.locomotion.groups.write_height_scan`). Here the same numbers come from
plain NumPy:

* :class:`TerrainSpec` / :class:`HeightScan`: the deploy spec's ``terrain`` section: the scan
  grid, the heightfield geom the ground is read from, and how ``unilab play`` rebuilds the
  terrain and where its episodes start (generator config, seed, start levels).
* :class:`HeightMap`: a regular grid of ground heights, triangulated like MuJoCo's hfield
  (and like :func:`unilab_envs.terrain.lookup.ground_height`). :meth:`HeightMap.from_model`
  reads it from a model's hfield geom (``unilab play``); on a robot, build one from the
  robot's own elevation map (``HeightMap(heights, x0, y0, spacing)``) and set
  ``PolicyIO.height_map`` to it each time the map changes.
* :func:`height_scan`: the scan itself, ``base z - ground`` at each grid point.
* :func:`play_model` / :func:`place_on_terrain`: the terrain model ``unilab play`` steps and
  an episode's start tile, as the training curriculum draws first episodes.

Importing this module needs NumPy and MuJoCo only; :func:`play_model` imports the terrain
generator (NumPy), never the Numba lookups.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Mapping

import mujoco
import numpy as np

from unilab_robot.deploy.sections import SpecError, build_section, tupled
from unilab_robot.terrain import scan as terrain_scan

SCAN_FRAMES = ("heading",)
GENERATORS = ("unilab.terrain",)


@dataclass(frozen=True)
class HeightScan:
    """The scan grid: ``grid[0]`` points along the base's heading by ``grid[1]`` across, ``spacing`` m apart.

    Centred on the base, x-major: point ``k = i * grid[1] + j`` sits at
    ``((i - (grid[0]-1)/2) * spacing, (j - (grid[1]-1)/2) * spacing)`` in the ``frame``
    (``heading``: the base's x axis projected on the ground plane, z up). Each value is the
    base's z minus the ground height under that point (m).
    """

    grid: tuple[int, int]
    spacing: float
    frame: str = "heading"

    @property
    def size(self) -> int:
        return int(self.grid[0]) * int(self.grid[1])


@dataclass(frozen=True)
class TerrainSpec:
    """The deploy spec's ``terrain`` section: the ground a rough-terrain policy walked on.

    ``height_scan``: the scan grid; ``ground_geom``: the model's hfield geom the reference
    reads the ground from (a robot sets ``PolicyIO.height_map`` instead); ``generator``,
    ``config``, ``seed``: how ``unilab play`` rebuilds the training terrain
    (:func:`unilab_envs.terrain.generate_terrain` with these ``TerrainConfig`` fields);
    ``start_levels`` (inclusive) and ``spawn_clearance`` (m): an episode starts near the centre
    of a tile of a level in that range, lifted over the highest ground within that distance.
    With a terrain, the episode's ``min_base_height`` is measured from the ground under the base.
    """

    height_scan: HeightScan
    config: Mapping[str, Any]
    seed: int
    start_levels: tuple[int, int]
    spawn_clearance: float
    ground_geom: str = "floor"
    generator: str = "unilab.terrain"


# --- the scan ---------------------------------------------------------------------------------


def grid_points(grid: tuple[int, int], spacing: float) -> np.ndarray:
    """``(grid[0]*grid[1], 2)`` float64 xy offsets of the scan in its frame, x-major (see :class:`HeightScan`):
    the env's own grid (:func:`unilab_robot.terrain.scan.scan_points`)."""
    return terrain_scan.scan_points(int(grid[0]), int(grid[1]), float(spacing))


def heading(quat: np.ndarray) -> tuple[float, float]:
    """``(cos, sin)`` of the yaw of the base's x axis projected on the ground (``(1, 0)`` when it is vertical)."""
    w, x, y, z = (float(v) for v in quat)
    fx, fy = 1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z)
    norm = math.sqrt(fx * fx + fy * fy)
    return (1.0, 0.0) if norm < 1e-9 else (fx / norm, fy / norm)


class HeightMap:
    """Ground heights on a regular grid: ``heights[ix, iy]`` (m) at world ``(x0 + ix*spacing_x, y0 + iy*spacing_y)``.

    :meth:`at` interpolates each cell on the two triangles MuJoCo's hfield uses (the diagonal
    from the low-x/low-y to the high-x/high-y corner); outside the grid it gives the height at
    the nearest edge, as the training lookup does.
    """

    def __init__(self, heights: np.ndarray, x0: float, y0: float, spacing_x: float, spacing_y: float | None = None):
        self.heights = np.asarray(heights, dtype=np.float64)
        if self.heights.ndim != 2 or min(self.heights.shape) < 2:
            raise SpecError(f"a height map needs a 2-D grid of at least 2x2 heights, got shape {self.heights.shape}")
        spacing_y = spacing_x if spacing_y is None else spacing_y
        if not (spacing_x > 0 and spacing_y > 0):
            raise SpecError(f"a height map needs spacings > 0, got {spacing_x}, {spacing_y}")
        self.x0, self.y0 = float(x0), float(y0)
        self.inv_x, self.inv_y = 1.0 / float(spacing_x), 1.0 / float(spacing_y)

    @classmethod
    def from_model(cls, model: mujoco.MjModel, geom: str) -> HeightMap:
        """The ground of ``model``'s hfield geom ``geom`` (world frame; the geom must be static and unrotated)."""
        gid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, geom)
        if gid < 0 or model.geom_type[gid] != mujoco.mjtGeom.mjGEOM_HFIELD:
            raise SpecError(f"the model has no heightfield geom named {geom!r}: the height scan reads the ground from "
                            f"it (unilab play builds it from the spec's terrain section; on a robot set "
                            f"PolicyIO.height_map to a HeightMap of your elevation map)")
        if model.geom_bodyid[gid] != 0 or not np.allclose(np.abs(model.geom_quat[gid]), (1.0, 0.0, 0.0, 0.0)):
            raise SpecError(f"heightfield geom {geom!r} must belong to the world body and be unrotated")
        hid = int(model.geom_dataid[gid])
        nrow, ncol = int(model.hfield_nrow[hid]), int(model.hfield_ncol[hid])
        rx, ry, elevation = (float(v) for v in model.hfield_size[hid, :3])
        adr = int(model.hfield_adr[hid])
        data = np.asarray(model.hfield_data[adr:adr + nrow * ncol], dtype=np.float64).reshape(nrow, ncol)
        px, py, pz = (float(v) for v in model.geom_pos[gid])
        return cls(pz + elevation * data.T, px - rx, py - ry, 2.0 * rx / (ncol - 1), 2.0 * ry / (nrow - 1))

    def at(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Ground heights (m) at world points ``(x, y)`` (arrays of one shape, or floats)."""
        h = self.heights
        nx, ny = h.shape
        fx = np.clip((np.asarray(x, dtype=np.float64) - self.x0) * self.inv_x, 0.0, nx - 1.0)
        fy = np.clip((np.asarray(y, dtype=np.float64) - self.y0) * self.inv_y, 0.0, ny - 1.0)
        ix = np.minimum(fx.astype(np.int64), nx - 2)
        iy = np.minimum(fy.astype(np.int64), ny - 2)
        tx, ty = fx - ix, fy - iy
        h00, h11 = h[ix, iy], h[ix + 1, iy + 1]
        lower = h00 + tx * (h[ix + 1, iy] - h00) + ty * (h11 - h[ix + 1, iy])  # triangle (0,0), (1,0), (1,1)
        upper = h00 + ty * (h[ix, iy + 1] - h00) + tx * (h11 - h[ix, iy + 1])  # triangle (0,0), (0,1), (1,1)
        return np.where(tx >= ty, lower, upper)

    def height(self, x: float, y: float) -> float:
        """The ground height (m) at one world point."""
        return float(self.at(np.float64(x), np.float64(y)))


def height_scan(height_map: HeightMap, points: np.ndarray, position: np.ndarray, quat: np.ndarray) -> np.ndarray:
    """``position[2]`` minus the ground under each of ``points`` (``(n, 2)``, turned with ``quat``'s heading)."""
    c, s = heading(quat)
    x = position[0] + c * points[:, 0] - s * points[:, 1]
    y = position[1] + s * points[:, 0] + c * points[:, 1]
    return position[2] - height_map.at(x, y)


# --- the spec section -------------------------------------------------------------------------


def _grid_of(points: np.ndarray) -> tuple[tuple[int, int], float]:
    """The ``(grid, spacing)`` that :func:`grid_points` turns into ``points``; :class:`SpecError` for another layout."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    xs, ys = np.unique(np.round(points[:, 0], 9)), np.unique(np.round(points[:, 1], 9))
    spacing = float(xs[1] - xs[0]) if xs.size > 1 else float(ys[1] - ys[0]) if ys.size > 1 else 0.0
    grid = (int(xs.size), int(ys.size))
    if not spacing > 0 or points.shape[0] != grid[0] * grid[1] or not np.allclose(grid_points(grid, spacing), points,
                                                                                  atol=1e-9):
        raise SpecError("the task's height scan points are not a centred, evenly spaced x-major grid; the deploy "
                        "spec describes only such scans")
    return grid, round(spacing, 9)


def terrain_section(task: Any) -> TerrainSpec | None:
    """The ``terrain`` section of a task's deploy spec, or ``None`` for a task on flat ground."""
    terrain = getattr(task, "terrain", None)
    if terrain is None:
        return None
    cfg = task.config
    grid, spacing = _grid_of(task.ground.scan_points)
    config = {f.name: getattr(cfg.terrain, f.name) for f in dataclasses.fields(cfg.terrain)}
    return TerrainSpec(height_scan=HeightScan(grid=grid, spacing=spacing), config=tupled(config),
                       seed=int(cfg.terrain_seed), start_levels=tuple(int(v) for v in cfg.init_levels),
                       spawn_clearance=float(cfg.spawn_clearance))


def terrain_from_dict(data: Any, where: str = "spec.terrain") -> TerrainSpec | None:
    """The spec's ``terrain`` section from its JSON object (``None`` stays ``None``)."""
    if data is None:
        return None
    return build_section(TerrainSpec, data, where, {"height_scan": HeightScan, "config": _config})


def _config(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise SpecError(f"{where} must be a JSON object of terrain config fields")
    return tupled(value)


def _need(condition: bool, message: str) -> None:
    if not condition:
        raise SpecError(message)


def validate_terrain(spec: Any) -> None:
    """Raise :class:`SpecError` when the ``terrain`` section is malformed or does not fit the ``height_scan`` group."""
    t = spec.terrain
    groups = {g.name: g for g in spec.observation.groups}
    _need(t is not None or "height_scan" not in groups,
          "observation group 'height_scan' needs the spec's terrain section (its grid and ground)")
    if t is None:
        return
    _need(isinstance(t, TerrainSpec), f"terrain must be a TerrainSpec (or null), got {type(t).__name__}")
    s = t.height_scan
    _need(len(s.grid) == 2 and all(isinstance(n, int) and n >= 1 for n in s.grid),
          f"terrain.height_scan.grid must be two whole numbers >= 1, got {s.grid!r}")
    _need(isinstance(s.spacing, (int, float)) and math.isfinite(s.spacing) and s.spacing > 0,
          f"terrain.height_scan.spacing must be a number > 0 (m), got {s.spacing!r}")
    _need(s.frame in SCAN_FRAMES, f"terrain.height_scan.frame must be one of {SCAN_FRAMES}, got {s.frame!r}")
    if "height_scan" in groups:
        _need(groups["height_scan"].size == s.size,
              f"observation group 'height_scan' has {groups['height_scan'].size} entries, but the terrain's scan "
              f"grid {tuple(s.grid)} has {s.size} points")
    _need(t.generator in GENERATORS, f"terrain.generator must be one of {GENERATORS}, got {t.generator!r}")
    _need(isinstance(t.seed, int), f"terrain.seed must be a whole number, got {t.seed!r}")
    _need(len(t.start_levels) == 2 and all(isinstance(v, int) for v in t.start_levels)
          and 0 <= t.start_levels[0] <= t.start_levels[1],
          f"terrain.start_levels must be (low, high) levels with 0 <= low <= high, got {t.start_levels!r}")
    _need(isinstance(t.spawn_clearance, (int, float)) and t.spawn_clearance >= 0,
          f"terrain.spawn_clearance must be >= 0 (m), got {t.spawn_clearance!r}")
    _need(spec.model.root_body is not None, "a terrain spec needs a floating base (model.root_body)")


# --- the reference path and play --------------------------------------------------------------


def ground_map(spec: Any, model: mujoco.MjModel) -> HeightMap | None:
    """The ground ``PolicyIO`` reads: the spec's heightfield geom in ``model`` when it has one, else ``None``
    (a flat spec; or a robot's model, with no geom of that name or a plane: its program sets
    ``PolicyIO.height_map`` itself, rather than the scan silently seeing a flat floor)."""
    t = getattr(spec, "terrain", None)
    gid = -1 if t is None else mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, t.ground_geom)
    if gid < 0 or model.geom_type[gid] != mujoco.mjtGeom.mjGEOM_HFIELD:
        return None
    return HeightMap.from_model(model, t.ground_geom)


def scan_points(spec: Any) -> np.ndarray | None:
    """The spec's scan points, ``(n, 2)`` in the heading frame, or ``None`` without a terrain section."""
    t = getattr(spec, "terrain", None)
    return None if t is None else grid_points(t.height_scan.grid, t.height_scan.spacing)


def scan_group(io: Any, data: mujoco.MjData) -> np.ndarray:
    """The ``height_scan`` observation group of ``PolicyIO`` ``io`` on ``data``."""
    if io.height_map is None:
        raise SpecError(f"the height scan needs the ground: the model has no heightfield geom "
                        f"{io.spec.terrain.ground_geom!r}; set PolicyIO.height_map to a "
                        f"unilab_robot.deploy.height_scan.HeightMap of the robot's elevation map")
    q = io.root_q
    return height_scan(io.height_map, io.scan_points, data.qpos[q:q + 3], data.qpos[q + 3:q + 7])


def base_ground(io: Any, data: mujoco.MjData) -> float:
    """The ground height (m) under the floating base: 0 without a height map (flat ground)."""
    if getattr(io, "height_map", None) is None or io.root_q < 0:
        return 0.0
    return io.height_map.height(data.qpos[io.root_q], data.qpos[io.root_q + 1])


def terrain_config(t: TerrainSpec):
    """The section's ``TerrainConfig`` (validated); :class:`SpecError` for fields it does not know."""
    from unilab_robot.config import ConfigError
    from unilab_robot.terrain.config import TerrainConfig

    known = {f.name for f in dataclasses.fields(TerrainConfig)}
    unknown = sorted(set(t.config) - known)
    if unknown:
        raise SpecError(f"terrain.config has unknown keys {unknown}; known: {sorted(known)}")
    try:
        cfg = TerrainConfig(**dict(t.config))
        cfg.validate()
    except ConfigError as e:
        raise SpecError(f"terrain.config: {e}") from None
    return cfg


def play_model(spec: Any, xml: str) -> mujoco.MjModel:
    """The model ``unilab play`` steps: the MJCF at ``xml``, its ``floor`` plane replaced by the spec's terrain."""
    t = getattr(spec, "terrain", None)
    if t is None:
        return mujoco.MjModel.from_xml_path(xml)
    from unilab_robot.terrain.generate import generate_terrain
    from unilab_robot.terrain.scene import terrain_model

    terrain = generate_terrain(terrain_config(t), t.seed)
    return terrain_model(xml, terrain.map, spec.timing.physics_dt)


def tile_centers(t: TerrainSpec) -> np.ndarray:
    """``(levels, types, 2)`` world xy of every tile's centre (the layout of :mod:`unilab_robot.terrain.generate`)."""
    cfg = terrain_config(t)
    levels = cfg.border + (np.arange(cfg.num_levels) + 0.5) * cfg.tile_size
    types = cfg.border + (np.arange(len(cfg.types)) + 0.5) * cfg.tile_size
    centers = np.empty((cfg.num_levels, len(cfg.types), 2))
    centers[:, :, 0], centers[:, :, 1] = levels[:, None], types[None, :]
    return centers


def highest_ground(height_map: HeightMap, x: float, y: float, half: float, spacing: float) -> float:
    """The highest ground in the square of half side ``half`` around ``(x, y)``, sampled no sparser than ``spacing``."""
    count = int(math.ceil(half / spacing))
    offsets = (np.arange(-count, count + 1) * (half / count)) if count > 0 else np.zeros(1)
    gx, gy = np.meshgrid(x + offsets, y + offsets, indexing="ij")
    return max(height_map.height(x, y), float(height_map.at(gx, gy).max()))


def place_on_terrain(io: Any, data: mujoco.MjData, rng: np.random.Generator) -> tuple[int, int]:
    """Move a base randomized around the keyframe onto a start tile, as training's first episodes start.

    Draws a level in ``start_levels`` and a terrain-type column, shifts the base's xy by that
    tile's centre and lifts it by the highest ground within ``spawn_clearance``; returns
    ``(level, column)``.
    """
    t = io.spec.terrain
    if io.height_map is None:
        raise SpecError(f"the model has no heightfield geom {t.ground_geom!r} to start the episode on")
    if getattr(io, "_terrain_layout", None) is None:
        io._terrain_layout = (tile_centers(t), terrain_config(t).resolution)
    centers, resolution = io._terrain_layout
    level = int(rng.integers(t.start_levels[0], min(t.start_levels[1], centers.shape[0] - 1) + 1))
    column = int(rng.integers(centers.shape[1]))
    q = io.root_q
    data.qpos[q:q + 2] += centers[level, column]
    data.qpos[q + 2] += highest_ground(io.height_map, data.qpos[q], data.qpos[q + 1], t.spawn_clearance, resolution)
    return level, column
