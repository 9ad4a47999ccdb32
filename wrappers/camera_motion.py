"""The camera as a physical sensor on the robot: ``MotionBlur`` (its exposure) and ``CameraPose`` (where it
really sits).

Both act on the env's :class:`~unilab_envs.sensors.DepthCamera` before it renders, not on the pixels
afterwards, and both draw once per episode and env:

* ``MotionBlur``: each env's exposure time (s), uniform in ``exposure = (low, high)``, written into
  ``camera.exposure``. The camera then averages each frame over ``blur_samples`` poses spread over the
  last ``exposure`` seconds of the base's motion (the sensor's model: at most one control step). A
  depth camera's exposure follows its auto-exposure: a few ms outdoors, up to ~30 ms indoors (RealSense
  D435: global shutter, exposure set in 1 us steps up to the frame time); the profile's range stays
  within one 20 ms control step.
* ``CameraPose``: the camera mount's error as domain randomization. Each episode draws offsets
  ``(dx, dy, dz)`` (m, in the base frame) and ``(droll, dpitch, dyaw)`` (deg, about the camera's own
  axes: x forward, y left, z up; pitch > 0 looks down) uniformly in ``[-position, position]`` and
  ``[-rotation, rotation]`` per axis; the camera sits at ``pos + (dx, dy, dz)`` turned by
  ``q_nominal * q_z(dyaw) * q_y(dpitch) * q_x(droll)``. A bracket off by a few mm and a degree or two
  (a mount printed or bolted by hand, a calibration's residual) is what such offsets stand for. The
  episode's first frame was rendered at the old mount; this wrapper renders it again at the new one
  and writes it into the image group, so no frame of an episode is seen from another episode's mount.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numba as nb
import numpy as np
from gymnasium.vector import VectorEnv

from unilab_envs.core.rng import uniform
from unilab_envs.sensors.camera_config import mount_quaternion
from unilab_envs.sensors.depth_camera import quat_product
from wrappers._base import Sim2RealWrapper, as_range, make_config, require, row_kernel
from wrappers.camera_common import camera_columns, camera_of


# --- motion blur -----------------------------------------------------------------


@nb.njit(cache=True)
def _draw_exposure(started, rng, exposure, low, high):
    for i in range(started.shape[0]):
        if started[i]:
            exposure[i] = low + (high - low) * uniform(rng, i)


@dataclass(frozen=True)
class MotionBlurConfig:
    """Each episode's exposure time.

    Attributes:
        exposure: s, a number or ``(low, high)``: drawn uniformly per env at each episode start; at most one
            control step (the camera blurs over the motion since the previous step).
    """

    exposure: Any = (0.0, 0.01)

    def __post_init__(self) -> None:
        object.__setattr__(self, "exposure", as_range(self.exposure, "exposure"))

    def validate(self) -> None:
        require(self.exposure is not None, "exposure must be a number of seconds or a (low, high) pair")
        low, high = self.exposure
        require(math.isfinite(low) and math.isfinite(high) and 0.0 <= low <= high,
                f"exposure must satisfy 0 <= low <= high (s), got {self.exposure}")


class MotionBlur(Sim2RealWrapper):
    """Each env's camera exposure, drawn per episode (module docstring): ``MotionBlur(env, exposure=(0.002, 0.015))``.

    The observation passes unchanged: the camera renders the blur. ``critic_groups()`` gives the exposures.
    """

    SECTION = "motion_blur"
    CONFIG = MotionBlurConfig  # the section's keys: its fields (unilab_robot.profiles.SECTION_KEYS)

    def __init__(self, env: VectorEnv, config: MotionBlurConfig | Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(env)
        self.config = cfg = make_config(MotionBlurConfig, config, kwargs)
        self.camera = camera_of(env, "MotionBlur")
        dt, samples = self.camera.control_dt, self.camera.config.blur_samples
        require(cfg.exposure[1] <= dt * (1.0 + 1e-9),
                f"MotionBlur: exposure {cfg.exposure} s is longer than one control step ({dt} s), the most the camera "
                f"blurs over; give exposure <= {dt}")
        require(samples > 1 or cfg.exposure[1] == 0.0,
                "MotionBlur: the camera renders one pose per frame (blur_samples=1), so no exposure blurs; give the "
                "task's camera blur_samples >= 2 (camera={'blur_samples': 4})")
        self._range = cfg.exposure

    def _apply_profile_level(self, level):
        low, high = self.config.exposure
        self._range = (low * level, high * level)

    def _on_start(self, started):
        _draw_exposure(started, self._rng, self.camera.exposure, *self._range)

    def critic_groups(self):
        return {"camera_exposure": self.camera.exposure[:, None].astype(np.float32)}


# --- camera pose jitter -------------------------------------------------------------


@nb.njit(inline="always", cache=True)
def _multiply(a, b):
    """:func:`~unilab_envs.sensors.depth_camera.quat_product` of two ``(4,)`` arrays, as an array."""
    return np.array(quat_product(a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]))


@nb.njit(inline="always", cache=True)
def _axis(degrees, axis):
    q = np.zeros(4)
    half = 0.5 * math.radians(degrees)
    q[0], q[1 + axis] = math.cos(half), math.sin(half)
    return q


@row_kernel
def _jitter(started, rng, offset, mount_pos, mount_quat, nominal_pos, nominal_quat, position, rotation):
    for i in nb.prange(started.shape[0]):
        if not started[i]:
            continue
        for a in range(3):
            offset[i, a] = position[a] * (2.0 * uniform(rng, i) - 1.0)
        for a in range(3):
            offset[i, 3 + a] = rotation[a] * (2.0 * uniform(rng, i) - 1.0)
        for a in range(3):
            mount_pos[i, a] = nominal_pos[a] + offset[i, a]
        q = _multiply(_multiply(_multiply(nominal_quat, _axis(offset[i, 5], 2)), _axis(offset[i, 4], 1)), _axis(offset[i, 3], 0))
        mount_quat[i, :] = q


@row_kernel
def _put_frames(obs, out, touch, started, images, cols):
    for i in nb.prange(obs.shape[0]):
        if not touch[i]:
            continue
        out[i, :] = obs[i, :]
        if started[i]:
            for k in range(cols.shape[0]):
                out[i, cols[k]] = images[i, k]


def _per_axis(value: Any, name: str, units: str) -> tuple[float, float, float]:
    values = (value,) * 3 if np.isscalar(value) else tuple(value)
    require(len(values) == 3, f"{name} must be a number or 3 numbers ({units}), got {value!r}")
    values = tuple(float(v) for v in values)
    require(all(math.isfinite(v) and v >= 0 for v in values), f"{name} must be >= 0 ({units}), got {value!r}")
    return values


@dataclass(frozen=True)
class CameraPoseConfig:
    """The camera mount's error, drawn per episode (module docstring).

    Attributes:
        position: m, the half-width of the uniform offset along the base frame's x, y, z (a number for all three).
        rotation: deg, the half-width of the uniform offset of roll, pitch, yaw about the camera's axes.
        group: the camera's image group in the observation (the episode's first frame is rewritten there).
    """

    position: Any = 0.005
    rotation: Any = 1.0
    group: str = "depth"

    def __post_init__(self) -> None:
        object.__setattr__(self, "position", _per_axis(self.position, "position", "metres"))
        object.__setattr__(self, "rotation", _per_axis(self.rotation, "rotation", "degrees"))

    def validate(self) -> None:
        require(max(self.rotation) <= 45.0, f"rotation must be <= 45 degrees per axis, got {self.rotation}")


class CameraPose(Sim2RealWrapper):
    """Per-episode offsets of the camera's mount (module docstring): ``CameraPose(env, position=0.01, rotation=2.0)``.

    ``pose_offset``: ``(N, 6)`` each env's ``(dx, dy, dz)`` m and ``(droll, dpitch, dyaw)`` deg of the episode.
    """

    SECTION = "camera_pose"
    CONFIG = CameraPoseConfig  # the section's keys: its fields (unilab_robot.profiles.SECTION_KEYS)
    STATE = ("pose_offset", "_out")

    def __init__(self, env: VectorEnv, config: CameraPoseConfig | Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(env)
        self.config = cfg = make_config(CameraPoseConfig, config, kwargs)
        self.camera = camera_of(env, "CameraPose")
        self._cols = camera_columns(env, self.camera, cfg.group, "CameraPose")
        self._nominal_pos = np.asarray(self.camera.config.pos, dtype=np.float64)
        self._nominal_quat = mount_quaternion(self.camera.config)
        self._position, self._rotation = np.array(cfg.position), np.array(cfg.rotation)
        self.pose_offset = np.zeros((self.num_envs, 6))
        self._out = np.zeros((self.num_envs, int(np.prod(self.single_observation_space.shape))), np.float32)

    def _apply_profile_level(self, level):
        self._position, self._rotation = np.array(self.config.position) * level, np.array(self.config.rotation) * level

    def _observe(self, obs, info, touch, started, final):
        cam = self.camera
        _jitter(started, self._rng, self.pose_offset, cam.mount_pos, cam.mount_quat, self._nominal_pos, self._nominal_quat,
                self._position, self._rotation)
        rows = np.flatnonzero(started)
        if rows.size:  # the episode's first frame, again, from the new mount
            cam.render(self.env.unwrapped.task.physics.qpos, rows)
        _put_frames(obs, self._out, touch, started, cam.images, self._cols)
        return self._hand_out(self._out)

    def critic_groups(self):
        return {"camera_pose_offset": self.pose_offset.astype(np.float32)}
