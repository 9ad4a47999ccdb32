"""The typed config of a depth camera on a robot's base, and its pixels' ray directions.

The camera frame follows the robot's body convention: ``x`` forward along the optical axis, ``y``
left, ``z`` up. It sits at ``pos`` in the base body's frame, turned by ``yaw``, then ``pitch``
(positive looks down), then ``roll``, in degrees. A pinhole: square pixels, the vertical field of
view ``fovy``, the horizontal one from the aspect ratio (as MuJoCo's cameras). Pixel ``(row,
column)`` with row 0 at the top and column 0 at the left looks along
``(1, -(2 (column + 0.5) / width - 1) tan(fovx / 2), -(2 (row + 0.5) / height - 1) tan(fovy / 2))``;
that direction's forward component is 1, so the distance along it to a hit is the hit's depth
(the z-depth a depth camera reports, not the length of the ray).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from unilab_envs.config import require


@dataclass(frozen=True, kw_only=True)
class DepthCameraConfig:
    """A depth camera (module docstring for the frame).

    Attributes:
        width, height: pixels.
        fovy: vertical field of view (degrees).
        near, far: metres of depth. A hit nearer than ``near`` reads ``near``; a miss (the sky) or a hit
            beyond ``far`` reads ``far``.
        pos: metres, the camera in the base body's frame.
        yaw, pitch, roll: degrees (pitch > 0 looks down).
        update_every: control steps between frames (a camera slower than the control loop holds its
            last frame); every episode's first observation has a fresh frame.
        blur_samples: poses the image is averaged over during an exposure (motion blur; the exposure
            itself is each env's ``DepthCamera.exposure``, 0 unless a sim-to-real wrapper sets it).
        geom_groups: the geom groups it sees (``None``: all of the world's static geoms).
    """

    width: int = 16
    height: int = 12
    fovy: float = 58.0
    near: float = 0.1
    far: float = 2.0
    pos: tuple[float, float, float] = (0.28, 0.0, 0.05)
    yaw: float = 0.0
    pitch: float = 40.0
    roll: float = 0.0
    update_every: int = 1
    blur_samples: int = 4
    geom_groups: tuple[int, ...] | None = None

    def validate(self) -> None:
        require(isinstance(self.width, int) and isinstance(self.height, int) and self.width >= 1 and self.height >= 1,
                f"width and height must be whole numbers of pixels >= 1, got {self.width} x {self.height}")
        require(0.0 < self.fovy < 180.0, f"fovy must be in (0, 180) degrees, got {self.fovy}")
        require(0.0 < self.near < self.far and math.isfinite(self.far), f"need 0 < near < far (m), got near={self.near}, far={self.far}")
        require(len(self.pos) == 3 and all(math.isfinite(float(p)) for p in self.pos), f"pos must be 3 finite metres, got {self.pos}")
        require(isinstance(self.update_every, int) and self.update_every >= 1,
                f"update_every must be a whole number of control steps >= 1, got {self.update_every}")
        require(isinstance(self.blur_samples, int) and self.blur_samples >= 1,
                f"blur_samples must be a whole number >= 1 (1: no motion blur), got {self.blur_samples}")

    @property
    def pixels(self) -> int:
        return self.width * self.height

    @property
    def fovx(self) -> float:
        """The horizontal field of view (degrees)."""
        return math.degrees(2.0 * math.atan(math.tan(math.radians(self.fovy) / 2.0) * self.width / self.height))

    def intrinsics(self) -> dict[str, float]:
        """Pinhole intrinsics in pixels (OpenCV's convention: ``fx, fy, cx, cy``, origin at the top-left corner)."""
        fy = 0.5 * self.height / math.tan(math.radians(self.fovy) / 2.0)
        return {"fx": fy, "fy": fy, "cx": 0.5 * self.width, "cy": 0.5 * self.height}


def pixel_directions(cfg: DepthCameraConfig) -> np.ndarray:
    """``(height * width, 3)`` ray directions in the camera frame, row-major, forward component 1."""
    tan_y = math.tan(math.radians(cfg.fovy) / 2.0)
    tan_x = tan_y * cfg.width / cfg.height
    u = (2.0 * (np.arange(cfg.width) + 0.5) / cfg.width - 1.0) * tan_x
    v = (2.0 * (np.arange(cfg.height) + 0.5) / cfg.height - 1.0) * tan_y
    out = np.empty((cfg.height, cfg.width, 3))
    out[..., 0] = 1.0
    out[..., 1] = -u[None, :]
    out[..., 2] = -v[:, None]
    return out.reshape(-1, 3)


def mount_quaternion(cfg: DepthCameraConfig) -> np.ndarray:
    """The camera frame's orientation in the base frame, ``(w, x, y, z)``: yaw about z, then pitch about the
    new y (positive looks down), then roll about the new x."""
    def axis(angle_deg: float, a: int) -> np.ndarray:
        half = math.radians(angle_deg) / 2.0
        q = np.zeros(4)
        q[0], q[1 + a] = math.cos(half), math.sin(half)
        return q

    return quat_multiply(quat_multiply(axis(cfg.yaw, 2), axis(cfg.pitch, 1)), axis(cfg.roll, 0))


def quat_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The Hamilton product ``a b`` of ``(w, x, y, z)`` quaternions."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return np.array([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw])
