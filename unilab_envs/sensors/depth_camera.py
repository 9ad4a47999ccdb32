"""``DepthCamera``: a depth camera on each env's robot base, rendered for the whole batch in one call.

Every frame casts one ray per pixel and env against the world's static geoms
(:mod:`~unilab_envs.sensors.static_scene`) in a Numba ``prange`` over envs. The frame is
``images[i]``, ``height * width`` float32 depths (m), row-major; the task's ``depth``
observation group copies it. A frame is rendered every ``update_every`` control steps (the
camera's frame clock is shared by the batch, so its phase against an episode's start varies)
and for every env that starts an episode.

Per-env settings the sim-to-real camera wrappers write (zero / nominal until they do):

- ``exposure`` (s): the frame is the average of ``blur_samples`` frames at poses spread evenly over
  the last ``exposure`` seconds before the frame (motion blur). Poses between the previous control
  step's base pose and this one are interpolated (position linearly, orientation by normalized
  linear interpolation), so an exposure is at most one control step; a longer one is cut to it.
- ``mount_pos`` / ``mount_quat``: the camera's pose in the base frame (pose jitter); the config's
  ``pos`` and angles until changed.
"""

from __future__ import annotations

import math

import mujoco
import numba as nb
import numpy as np

from unilab_envs.core.batch_code import batch_kernel
from unilab_envs.sensors.camera_config import DepthCameraConfig, mount_quaternion, pixel_directions
from unilab_envs.sensors.static_scene import StaticScene, cast_ray, static_scene


@nb.njit(inline="always", cache=True)
def _rotation(qw, qx, qy, qz):
    """Row-major rotation matrix of a unit ``(w, x, y, z)`` quaternion, as 9 scalars."""
    return (1.0 - 2.0 * (qy * qy + qz * qz), 2.0 * (qx * qy - qw * qz), 2.0 * (qx * qz + qw * qy),
            2.0 * (qx * qy + qw * qz), 1.0 - 2.0 * (qx * qx + qz * qz), 2.0 * (qy * qz - qw * qx),
            2.0 * (qx * qz - qw * qy), 2.0 * (qy * qz + qw * qx), 1.0 - 2.0 * (qx * qx + qy * qy))


@nb.njit(inline="always", cache=True)
def quat_product(aw, ax, ay, az, bw, bx, by, bz):
    """The Hamilton product ``a b`` of two ``(w, x, y, z)`` quaternions, as 4 scalars (Numba)."""
    return (aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw)


@nb.njit(inline="always", cache=True)
def _render_pose(image, scale, scene, directions, near, far, px, py, pz, qw, qx, qy, qz, mount_pos, mount_quat):
    """Add ``scale`` times the depths seen from base pose ``(p, q)`` through the camera at ``mount_*`` to ``image``."""
    r = _rotation(qw, qx, qy, qz)
    cx = px + r[0] * mount_pos[0] + r[1] * mount_pos[1] + r[2] * mount_pos[2]
    cy = py + r[3] * mount_pos[0] + r[4] * mount_pos[1] + r[5] * mount_pos[2]
    cz = pz + r[6] * mount_pos[0] + r[7] * mount_pos[1] + r[8] * mount_pos[2]
    cw, c1, c2, c3 = quat_product(qw, qx, qy, qz, mount_quat[0], mount_quat[1], mount_quat[2], mount_quat[3])
    m = _rotation(cw, c1, c2, c3)
    for k in range(directions.shape[0]):
        a = directions[k, 0]
        b = directions[k, 1]
        c = directions[k, 2]
        t = cast_ray(scene, cx, cy, cz, m[0] * a + m[1] * b + m[2] * c, m[3] * a + m[4] * b + m[5] * c,
                     m[6] * a + m[7] * b + m[8] * c, far)
        depth = far if t < 0.0 else min(max(t, near), far)
        image[k] += scale * depth


@nb.njit(parallel=True, cache=True)
def render_rows(images, rows, qpos, root_q, previous_pose, exposure, dt, blur_samples, mount_pos, mount_quat, directions,
                near, far, scene):
    """Frames of envs ``rows`` into ``images`` (module docstring: the exposure's poses and their average)."""
    for k in nb.prange(rows.shape[0]):
        i = rows[k]
        image = np.zeros(directions.shape[0])
        share = min(max(exposure[i] / dt, 0.0), 1.0)
        still = True  # no motion since the last step (an episode's start): every pose of the exposure is the same
        for c in range(7):
            still = still and previous_pose[i, c] == qpos[i, root_q + c]
        samples = blur_samples if share > 0.0 and not still else 1
        for s in range(samples):
            alpha = 1.0 - share * s / (samples - 1) if samples > 1 else 1.0  # 1: now, 1 - share: the exposure's start
            p = previous_pose[i]
            x = p[0] + alpha * (qpos[i, root_q] - p[0])
            y = p[1] + alpha * (qpos[i, root_q + 1] - p[1])
            z = p[2] + alpha * (qpos[i, root_q + 2] - p[2])
            qw, qx, qy, qz = qpos[i, root_q + 3], qpos[i, root_q + 4], qpos[i, root_q + 5], qpos[i, root_q + 6]
            sign = 1.0 if p[3] * qw + p[4] * qx + p[5] * qy + p[6] * qz >= 0.0 else -1.0  # the shorter way round
            qw = p[3] + alpha * (sign * qw - p[3])
            qx = p[4] + alpha * (sign * qx - p[4])
            qy = p[5] + alpha * (sign * qy - p[5])
            qz = p[6] + alpha * (sign * qz - p[6])
            norm = math.sqrt(qw * qw + qx * qx + qy * qy + qz * qz)
            _render_pose(image, 1.0 / samples, scene, directions, near, far, x, y, z, qw / norm, qx / norm, qy / norm,
                         qz / norm, mount_pos[i], mount_quat[i])
        for j in range(directions.shape[0]):
            images[i, j] = image[j]


class DepthCamera:
    """A batch's depth camera (module docstring). ``images``: ``(N, height * width)`` float32, the latest frames."""

    state_names = ("images", "exposure", "mount_pos", "mount_quat", "previous_pose", "frame_clock")

    def __init__(self, config: DepthCameraConfig, model: mujoco.MjModel, num_envs: int, root_q: int, control_dt: float) -> None:
        config.validate()
        self.config = config
        self.scene: StaticScene = static_scene(model, config.geom_groups)
        self.directions = pixel_directions(config)
        self.root_q, self.control_dt = int(root_q), float(control_dt)
        n = num_envs
        self.images = np.zeros((n, config.pixels), np.float32)
        self.exposure = np.zeros(n)
        self.mount_pos = np.tile(np.asarray(config.pos, dtype=np.float64), (n, 1))
        self.mount_quat = np.tile(mount_quaternion(config), (n, 1))
        self.previous_pose = np.zeros((n, 7))
        self.previous_pose[:, 3] = 1.0
        self.frame_clock = np.zeros(1, np.int64)  # control steps since the batch's first frame
        self._all = np.arange(n, dtype=np.int64)
        self._render_rows = batch_kernel(render_rows)  # one env renders with a batch's kernel (core.batch_code)

    @property
    def shape(self) -> tuple[int, int, int]:
        """``(1, height, width)``: one frame as an image."""
        return (1, self.config.height, self.config.width)

    def render(self, qpos: np.ndarray, rows: np.ndarray | None = None) -> None:
        """Render the frames of ``rows`` (all envs when ``None``) from the batch's ``qpos``."""
        cfg = self.config
        rows = self._all if rows is None else np.ascontiguousarray(rows, dtype=np.int64)
        self._render_rows(self.images, rows, qpos, self.root_q, self.previous_pose, self.exposure, self.control_dt, cfg.blur_samples,
                    self.mount_pos, self.mount_quat, self.directions, cfg.near, cfg.far, self.scene)

    def after_step(self, qpos: np.ndarray) -> None:
        """One control step has passed: a frame for every env when the frame clock says so; the base poses kept for
        the next exposure."""
        if self.frame_clock[0] % self.config.update_every == 0:
            self.render(qpos)
        self.frame_clock[0] += 1
        self.previous_pose[:] = qpos[:, self.root_q:self.root_q + 7]

    def after_reset(self, qpos: np.ndarray, rows: np.ndarray) -> None:
        """Rows ``rows`` start an episode: a fresh, unblurred frame from their new pose."""
        self.previous_pose[rows] = qpos[rows, self.root_q:self.root_q + 7]
        self.render(qpos, rows)
