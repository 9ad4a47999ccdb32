"""The typed config of a procedurally generated heightfield terrain.

The terrain is a grid of square tiles: ``num_levels`` rows of difficulty along +x
(level 0 easiest, ``num_levels - 1`` hardest) by one column per entry of ``types``
along +y, surrounded by ``border`` metres of flat ground. The difficulty of level ``l``
is ``d = l / (num_levels - 1)``; every ``(low, high)`` range below is interpolated
linearly, ``low + d * (high - low)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from unilab_robot.config import closest, did_you_mean, require, require_range

TERRAIN_TYPES = ("flat", "slope", "rough", "steps", "stairs_up", "stairs_down")
"""The tile types :func:`~unilab_robot.terrain.generate.generate_terrain` knows."""


def _whole_multiple(value: float, unit: float) -> bool:
    ratio = value / unit
    return abs(ratio - round(ratio)) < 1e-6


@dataclass(frozen=True, kw_only=True)
class TerrainConfig:
    """How to lay out and shape the terrain tiles (lengths in metres, angles in radians).

    Attributes:
        tile_size: side of each square tile.
        resolution: distance between heightfield samples; ``tile_size`` and ``border``
            must be whole multiples of it.
        num_levels: difficulty rows along +x (at least 2).
        types: one column of tiles per entry along +y, from :data:`TERRAIN_TYPES`
            (a type may repeat).
        border: flat ground around the grid of tiles: wide enough that a robot on an edge tile
            cannot walk off the heightfield (into the void) within an episode (20 s at up to 1 m/s).
        max_slope: slope angle of the ``"slope"`` tile at the hardest level (``d * max_slope``
            at difficulty ``d``); the tile is a pyramid whose sign alternates with the level
            (even levels rise toward the centre, odd levels fall toward it).
        rough_amplitude: peak-to-peak height of the uniform noise of ``"rough"`` tiles,
            (easiest, hardest).
        step_height: height of the random blocks of ``"steps"`` tiles (each block is one of
            ``-h, -h/2, +h/2, +h``), (easiest, hardest).
        stair_height: riser of ``"stairs_up"`` / ``"stairs_down"`` tiles, (easiest, hardest).
        stair_width: tread of the stairs.
        platform: side of the flat square at each tile centre, where robots spawn.
    """

    tile_size: float = 5.0
    resolution: float = 0.05
    num_levels: int = 10
    types: tuple[str, ...] = ("slope", "rough", "steps", "stairs_up", "stairs_down")
    border: float = 20.0
    max_slope: float = 0.35
    rough_amplitude: tuple[float, float] = (0.01, 0.06)
    step_height: tuple[float, float] = (0.02, 0.12)
    stair_height: tuple[float, float] = (0.02, 0.13)
    stair_width: float = 0.3
    platform: float = 1.0

    def validate(self) -> None:
        """Raise :class:`~unilab_robot.config.ConfigError` naming the first bad field and what is allowed."""
        require(self.resolution > 0, f"resolution must be > 0 m, got {self.resolution}")
        require(self.tile_size > 0 and _whole_multiple(self.tile_size, self.resolution),
                f"tile_size must be > 0 and a whole multiple of resolution ({self.resolution} m), "
                f"got {self.tile_size}")
        require(self.border >= 0 and _whole_multiple(self.border, self.resolution),
                f"border must be >= 0 and a whole multiple of resolution ({self.resolution} m), got {self.border}")
        require(isinstance(self.num_levels, int) and self.num_levels >= 2,
                f"num_levels must be an int >= 2 (level 0 easiest, num_levels-1 hardest), got {self.num_levels!r}")
        require(isinstance(self.types, tuple) and len(self.types) >= 1,
                f"types must be a non-empty tuple of tile types from {TERRAIN_TYPES}, got {self.types!r}")
        for name in self.types:
            require(name in TERRAIN_TYPES,
                    f"unknown terrain type {name!r}.{did_you_mean(closest(name, TERRAIN_TYPES))} "
                    f"Known types: {', '.join(TERRAIN_TYPES)}")
        require(0 <= self.max_slope < math.pi / 2,
                f"max_slope must be in [0, pi/2) rad, got {self.max_slope}")
        for name in ("rough_amplitude", "step_height", "stair_height"):
            value = getattr(self, name)
            require_range(name, value)
            require(value[0] >= 0, f"{name} must be >= 0 m at both ends, got {value!r}")
        require(self.stair_width >= self.resolution,
                f"stair_width must be >= resolution ({self.resolution} m), got {self.stair_width}")
        require(0 <= self.platform <= self.tile_size,
                f"platform must be in [0, tile_size={self.tile_size}] m, got {self.platform}")

    def difficulty(self, level: int) -> float:
        """``level / (num_levels - 1)``: 0 at the easiest level, 1 at the hardest."""
        return level / (self.num_levels - 1)
