"""Procedurally generated heightfield terrain, NumPy and MuJoCo only: what the simulator trains on and what
``unilab play`` / the simulated robot rebuild from a deploy spec's terrain section.

* :mod:`.config`: :class:`~.config.TerrainConfig`, tile layout, curriculum levels and tile shapes.
* :mod:`.generate`: :func:`~.generate.generate_terrain`, a :class:`~.generate.Terrain` (its
  :class:`~.generate.TerrainMap` and tile centres), deterministic from ``(cfg, seed)``; ``flat_terrain``.
* :mod:`.scene`: :func:`~.scene.terrain_model`, the robot's MJCF with its floor plane replaced by an hfield.
* :mod:`.scan`: :func:`~.scan.scan_points`, legged_gym's scan grid.

The simulator's Numba lookups of the same heightfield are :mod:`unilab_envs.terrain.lookup`.
"""
