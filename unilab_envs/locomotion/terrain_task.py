"""``TerrainLocomotionTask``: a legged joystick task on generated terrain, with a curriculum and a height scan.

On top of :class:`~unilab_envs.locomotion.task.LocomotionTask` it replaces the robot's
floor by a heightfield of tiles (:mod:`unilab_envs.terrain`, generated from
``terrain_seed``), measures heights from the ground under the robot
(:mod:`unilab_envs.locomotion.ground`), moves each env through the tiles
(:mod:`unilab_envs.locomotion.curriculum`) and writes a height scan: the base's height
above the ground at :data:`SCAN_POINTS` (legged_gym's 17 x 11 grid at 10 cm, 1.6 m x 1.0 m,
turned with the base's heading), always for the critic and, with
``policy_height_scan``, for the policy too.
``info["terrain_level"]`` holds each env's level.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from unilab_envs.core.batch_code import batch_kernel
from unilab_envs.core.config import require
from unilab_envs.locomotion.config import LocomotionConfig
from unilab_envs.locomotion.curriculum import reset_on_terrain, start_curriculum
from unilab_envs.locomotion.ground import terrain_ground
from unilab_envs.locomotion.records import Ground
from unilab_envs.locomotion.task import LocomotionTask
from unilab_envs.sensors.camera_config import DepthCameraConfig
from unilab_envs.terrain import TerrainConfig, generate_terrain, scan_points, terrain_model

SCAN_POINTS = scan_points(17, 11, 0.1)  # (187, 2) base-frame xy, x-major


@dataclass(frozen=True, kw_only=True)
class TerrainLocomotionConfig(LocomotionConfig):
    """The shared locomotion config plus the terrain, its seed, the policy's scan and the curriculum's rule."""

    terrain: TerrainConfig = TerrainConfig()
    terrain_seed: int = 0  # the terrain is generated from it: the same seed, the same tiles
    policy_height_scan: bool = True  # the policy sees the height scan (the critic always does)
    init_levels: tuple[int, int] = (0, 2)  # first episodes start on a level drawn from low..high (inclusive)
    demote_fraction: float = 0.5  # an episode that ends nearer its spawn point than this share of where its commands led drops a level
    spawn_clearance: float = 0.3  # m: the robot spawns above the highest ground within this distance (square)
    camera: DepthCameraConfig = DepthCameraConfig()  # the depth camera, rendered when the task's groups have ``depth``

    def validate(self) -> None:
        super().validate()
        self.terrain.validate()
        low, high = self.init_levels
        require(0 <= low <= high < self.terrain.num_levels,
                f"init_levels must be (low, high) with 0 <= low <= high < terrain.num_levels ({self.terrain.num_levels}), got {self.init_levels}")
        require(0.0 <= self.demote_fraction <= 1.0, f"demote_fraction must be in [0, 1], got {self.demote_fraction}")
        require(self.spawn_clearance >= 0.0, f"spawn_clearance must be >= 0, got {self.spawn_clearance}")
        self.camera.validate()


class TerrainLocomotionTask(LocomotionTask):
    """A :class:`LocomotionTask` on terrain (see the module docstring); a robot subclasses it as it would ``LocomotionTask``."""

    config: TerrainLocomotionConfig
    state_names = LocomotionTask.state_names + ("_spawn_xy", "_walked", "_commanded_xy", "_level", "_column")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(num_scan_points=len(SCAN_POINTS), **kwargs)

    def observation_groups(self, cfg: TerrainLocomotionConfig):
        """The class's groups; without ``policy_height_scan`` the policy's ``height_scan`` left out (the critic keeps its own)."""
        policy, privileged = super().observation_groups(cfg)
        if not cfg.policy_height_scan:
            policy = tuple(g for g in policy if g.name != "height_scan")
        return policy, privileged

    def load_model(self, cfg: TerrainLocomotionConfig):
        self.terrain = generate_terrain(cfg.terrain, cfg.terrain_seed)
        return terrain_model(cfg.model_path, self.terrain.map, cfg.sim_dt)

    def make_ground(self, num_envs: int) -> Ground:
        ground = terrain_ground(self.terrain.map, SCAN_POINTS, num_envs)
        cfg = self.config
        self.course = start_curriculum(num_envs, self.terrain.tile_centers, 0.5 * cfg.terrain.tile_size, cfg.demote_fraction,
                                       cfg.init_levels, cfg.spawn_clearance)  # fmt: skip
        self._spawn_xy, self._walked, self._commanded_xy = ground.spawn_xy, ground.walked, ground.commanded_xy
        self._level, self._column = self.course.level, self.course.column
        self._terrain_reset_kernel = batch_kernel(reset_on_terrain)
        return ground

    def reset_envs(self, ids: np.ndarray, rng: np.ndarray) -> None:
        super().reset_envs(ids, rng)
        self._terrain_reset_kernel(ids, rng, self.physics, self.robot, self.ground, self.course)

    def task_info(self) -> dict[str, np.ndarray]:
        return {"terrain_level": self.course.level.astype(np.float32)}
