"""Where ``unilab play`` looks from, in the window and in the video."""

from __future__ import annotations

from typing import TYPE_CHECKING

import mujoco

if TYPE_CHECKING:
    from .player import Player


def play_camera(player: Player) -> mujoco.MjvCamera:
    """A camera following the robot's root body; a fixed one on an arm (on the grasp, its table)."""
    cam = mujoco.MjvCamera()
    root = player.spec.model.root_body
    body = mujoco.mj_name2id(player.model, mujoco.mjtObj.mjOBJ_BODY, root) if root else -1
    if body > 0:
        cam.type, cam.trackbodyid = mujoco.mjtCamera.mjCAMERA_TRACKING, body
        cam.distance, cam.elevation, cam.azimuth = 1.6 if player.spec.action.size < 20 else 3.0, -20.0, 120.0
    else:
        cam.type = mujoco.mjtCamera.mjCAMERA_FREE
        cam.lookat[:] = (0.0, 0.0, 0.4)
        cam.distance, cam.elevation, cam.azimuth = 2.2, -25.0, 135.0
        if player.io.grasp is not None:  # the grasp: the table in front of the arm, as examples/film_grasp.py
            cam.lookat[:] = (-0.12, 0.48, 0.22)
            cam.distance, cam.elevation, cam.azimuth = 1.2, -18.0, -50.0
    return cam
