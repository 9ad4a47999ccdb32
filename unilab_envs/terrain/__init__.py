"""Procedurally generated heightfield terrain: config, generation, MuJoCo scene, Numba lookups.

* :class:`TerrainConfig` (:mod:`.config`): tile layout, curriculum levels and tile shapes.
* :func:`generate_terrain` (:mod:`.generate`): a :class:`Terrain` (its :class:`TerrainMap`
  and tile centres), deterministic from ``(cfg, seed)``; :func:`flat_terrain` for flat tasks.
* :func:`terrain_model` (:mod:`.scene`): the robot's MJCF with its floor plane replaced by an hfield.
* :func:`ground_height`, :func:`scan_heights` (:mod:`.lookup`, Numba, inlined): the height
  under a point, triangulated like MuJoCo's hfield.
* :func:`scan_points` (:mod:`.scan`, NumPy): legged_gym's scan grid.
"""

from unilab_envs.terrain.config import TERRAIN_TYPES, TerrainConfig
from unilab_envs.terrain.generate import Terrain, TerrainMap, flat_terrain, generate_terrain
from unilab_envs.terrain.scan import scan_points
from unilab_envs.terrain.scene import terrain_model

_LOOKUPS = ("ground_height", "scan_heights")


def __getattr__(name: str):
    # the lookups are Numba kernels: import them on first use, so that building a terrain
    # (``unilab play`` on a rough-terrain policy, through unilab_envs.deploy) stays free of Numba
    if name in _LOOKUPS:
        from unilab_envs.terrain import lookup

        return getattr(lookup, name)
    raise AttributeError(f"module 'unilab_envs.terrain' has no attribute {name!r}")


__all__ = ["TERRAIN_TYPES", "Terrain", "TerrainConfig", "TerrainMap", "flat_terrain", "generate_terrain",
           "ground_height", "scan_heights", "scan_points", "terrain_model"]
