"""Procedurally generated heightfield terrain for the simulator: the robot side's generation, plus Numba lookups.

* :class:`TerrainConfig`, :func:`generate_terrain` (a :class:`Terrain`: its :class:`TerrainMap` and tile
  centres, deterministic from ``(cfg, seed)``), :func:`flat_terrain`, :func:`terrain_model` (the robot's MJCF
  with its floor plane replaced by an hfield) and :func:`scan_points` (legged_gym's scan grid): NumPy and
  MuJoCo only, so they live in :mod:`unilab_robot.terrain` (``unilab play`` and the simulated robot build
  a spec's terrain with them) and are named here for the tasks.
* :func:`ground_height`, :func:`scan_heights` (:mod:`.lookup`, Numba, inlined): the height
  under a point, triangulated like MuJoCo's hfield.
"""

from unilab_robot.terrain.config import TERRAIN_TYPES, TerrainConfig
from unilab_robot.terrain.generate import Terrain, TerrainMap, flat_terrain, generate_terrain
from unilab_robot.terrain.scan import scan_points
from unilab_robot.terrain.scene import terrain_model

_LOOKUPS = ("ground_height", "scan_heights")


def __getattr__(name: str):
    # the lookups are Numba kernels: import them on first use, so that importing this package for the
    # NumPy terrain names compiles nothing
    if name in _LOOKUPS:
        from unilab_envs.terrain import lookup

        return getattr(lookup, name)
    raise AttributeError(f"module 'unilab_envs.terrain' has no attribute {name!r}")


__all__ = ["TERRAIN_TYPES", "Terrain", "TerrainConfig", "TerrainMap", "flat_terrain", "generate_terrain",
           "ground_height", "scan_heights", "scan_points", "terrain_model"]
