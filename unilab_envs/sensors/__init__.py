"""Exteroceptive sensors of the batched envs: the depth camera (:class:`DepthCamera`), its config and its
observation group's place in a task."""

from __future__ import annotations

import dataclasses

from unilab_envs.core.obs_groups import ObsGroup
from unilab_envs.sensors.camera_config import DepthCameraConfig, pixel_directions
from unilab_envs.sensors.depth_camera import DepthCamera
from unilab_envs.sensors.static_scene import StaticScene, static_scene

CAMERA_PIXELS = "camera_pixels"
"""The size of an image group that is the task's camera frame: its pixels, from the task's ``camera`` config."""

__all__ = ["CAMERA_PIXELS", "DepthCamera", "DepthCameraConfig", "StaticScene", "camera_group", "pixel_directions", "static_scene"]


def camera_group(group: ObsGroup, camera: DepthCameraConfig) -> ObsGroup:
    """``group`` with its size and image shape set from ``camera`` when it is a camera frame (size
    :data:`CAMERA_PIXELS`); any other group as it is."""
    if group.size != CAMERA_PIXELS:
        return group
    return dataclasses.replace(group, size=camera.pixels, shape=(1, camera.height, camera.width))
