"""Depth-camera policies outside training: the spec's ``camera`` section and the ``depth`` group in NumPy/MuJoCo.

A policy that sees a ``depth`` group was trained on the frames of a
:class:`~unilab_envs.sensors.DepthCamera`: a pinhole on the robot's base, depth along the optical
axis, clipped to ``[near, far]``, ``far`` where nothing is in range, of the world's static geoms
(the robot's own body is not in the image), a new frame every ``update_every`` control steps.
The ``camera`` section says all of it, so a robot program can feed its camera's frames
(:attr:`PolicyIO.depth_frame`, resampled to ``width x height`` and in metres) and ``unilab play``
can render them from plain MuJoCo (:func:`depth_frame` with ``mujoco.mj_ray``).

Importing this module needs NumPy and MuJoCo only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from unilab_robot.deploy.sections import SpecError, build_section

DEPTH_KINDS = ("z",)  # depth along the optical axis (what depth cameras report), not the ray's length
_STEP_PAST = 1e-6  # m: a ray that hit the robot goes on from just past the hit


@dataclass(frozen=True)
class CameraSpec:
    """The deploy spec's ``camera`` section: the depth camera the ``group`` observation group was trained on.

    The camera frame: ``x`` forward along the optical axis, ``y`` left, ``z`` up, at ``pos`` in the
    ``body`` frame, turned by ``quat`` (``w, x, y, z``). Intrinsics in pixels (OpenCV's ``fx, fy, cx,
    cy``, origin at the top-left corner); the image is row-major from the top-left pixel. Depths in
    metres along the optical axis (``depth == "z"``), clipped to ``[near, far]``, ``far`` for no
    return. A frame every ``update_every`` control steps. ``geom_groups``: the geom groups it sees
    (``None``: every static geom).
    """

    group: str
    width: int
    height: int
    fovy: float
    fx: float
    fy: float
    cx: float
    cy: float
    near: float
    far: float
    body: str
    pos: tuple[float, float, float]
    quat: tuple[float, float, float, float]
    update_every: int = 1
    depth: str = "z"
    geom_groups: tuple[int, ...] | None = None

    @property
    def pixels(self) -> int:
        return int(self.width) * int(self.height)


def camera_section(task: Any) -> CameraSpec | None:
    """The ``camera`` section of a task's deploy spec, or ``None`` for a task without a depth camera."""
    camera = getattr(task, "camera", None)
    if camera is None:
        return None
    cfg = camera.config
    intrinsics = cfg.intrinsics()
    group = next(name for name, g in task.declared_groups.items() if g.shape is not None)
    return CameraSpec(group=group, width=int(cfg.width), height=int(cfg.height), fovy=float(cfg.fovy), **intrinsics,
                      near=float(cfg.near), far=float(cfg.far), body=task.tracking_body,
                      pos=tuple(float(v) for v in cfg.pos), quat=tuple(float(v) for v in camera.mount_quat[0]),
                      update_every=int(cfg.update_every),
                      geom_groups=None if cfg.geom_groups is None else tuple(int(g) for g in cfg.geom_groups))


def camera_from_dict(data: Any, where: str = "spec.camera") -> CameraSpec | None:
    """The spec's ``camera`` section from its JSON object (``None`` stays ``None``)."""
    if data is None:
        return None
    return build_section(CameraSpec, data, where, {})


def _need(condition: bool, message: str) -> None:
    if not condition:
        raise SpecError(message)


def validate_camera(spec: Any) -> None:
    """Raise :class:`SpecError` when the ``camera`` section is malformed or does not fit its observation group."""
    c = spec.camera
    _need(isinstance(c, CameraSpec), f"camera must be a CameraSpec (or null), got {type(c).__name__}")
    groups = {g.name: g for g in spec.observation.groups}
    _need(c.group in groups, f"camera.group {c.group!r} is none of the observation groups {sorted(groups)}")
    _need(isinstance(c.width, int) and isinstance(c.height, int) and c.width >= 1 and c.height >= 1,
          f"camera.width and camera.height must be whole numbers >= 1, got {c.width!r} x {c.height!r}")
    _need(groups[c.group].size == c.pixels,
          f"observation group {c.group!r} has {groups[c.group].size} entries, but the camera's {c.width} x {c.height} "
          f"image has {c.pixels}")
    _need(0.0 < c.near < c.far and math.isfinite(c.far), f"camera needs 0 < near < far (m), got {c.near}, {c.far}")
    _need(c.depth in DEPTH_KINDS, f"camera.depth must be one of {DEPTH_KINDS}, got {c.depth!r}")
    _need(len(c.pos) == 3 and len(c.quat) == 4, "camera.pos must be 3 numbers and camera.quat 4 (w, x, y, z)")
    _need(isinstance(c.update_every, int) and c.update_every >= 1,
          f"camera.update_every must be a whole number of control steps >= 1, got {c.update_every!r}")


def pixel_rays(c: CameraSpec) -> np.ndarray:
    """``(height * width, 3)`` directions in the camera frame from the intrinsics, forward component 1."""
    u = (np.arange(c.width) + 0.5 - c.cx) / c.fx
    v = (np.arange(c.height) + 0.5 - c.cy) / c.fy
    out = np.empty((c.height, c.width, 3))
    out[..., 0] = 1.0
    out[..., 1] = -u[None, :]
    out[..., 2] = -v[:, None]
    return out.reshape(-1, 3)


def _rotation(q: np.ndarray) -> np.ndarray:
    out = np.empty(9)
    mujoco.mju_quat2Mat(out, np.asarray(q, dtype=np.float64))
    return out.reshape(3, 3)


def _static(model: mujoco.MjModel, geom: int, groups: tuple[int, ...] | None) -> bool:
    return model.body_weldid[model.geom_bodyid[geom]] == 0 and (groups is None or int(model.geom_group[geom]) in groups)


def depth_frame(c: CameraSpec, model: mujoco.MjModel, data: mujoco.MjData, rays: np.ndarray | None = None) -> np.ndarray:
    """The camera's frame on ``data`` (kinematics current), ``(height * width,)`` float32, with ``mujoco.mj_ray``:
    a ray that meets a geom the camera does not see (the robot's own) goes on past it."""
    rays = pixel_rays(c) if rays is None else rays
    body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, c.body)
    if body < 0:
        raise SpecError(f"the model has no body {c.body!r} to carry the camera (spec camera.body)")
    base = data.xmat[body].reshape(3, 3)
    origin = data.xpos[body] + base @ np.asarray(c.pos, dtype=np.float64)
    directions = rays @ (base @ _rotation(c.quat)).T
    out = np.empty(len(directions), np.float32)
    geom = np.zeros(1, np.int32)
    for k, d in enumerate(directions):
        start, travelled = origin, 0.0
        while True:
            t = mujoco.mj_ray(model, data, start, d, None, 1, -1, geom)
            if t < 0.0 or travelled + t > c.far:
                depth = c.far
                break
            if _static(model, int(geom[0]), c.geom_groups):
                depth = min(max(travelled + t, c.near), c.far)
                break
            step = t + _STEP_PAST / float(np.linalg.norm(d))
            start, travelled = start + step * d, travelled + step
        out[k] = depth
    return out


class RenderedDepth:
    """The frames ``unilab play`` renders for a policy without a real camera, at the camera's rate:
    a fresh frame when an episode starts (:meth:`reset`), then every ``update_every`` control
    steps, the last one held in between, as the training env's camera gives them."""

    def __init__(self, camera: CameraSpec) -> None:
        self.camera, self.rays = camera, pixel_rays(camera)
        self.frame: np.ndarray | None = None
        self.age = 0  # control steps since self.frame was rendered

    def reset(self) -> None:
        """A new episode: the next observation renders a frame."""
        self.frame = None

    def __call__(self, model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
        """The frame of this control step (one call a step)."""
        if self.frame is None or self.age >= self.camera.update_every:
            self.frame, self.age = depth_frame(self.camera, model, data, self.rays), 0
        self.age += 1
        return self.frame


def depth_group(io: Any, data: mujoco.MjData) -> np.ndarray:
    """The ``depth`` observation group of ``PolicyIO`` ``io``: the robot program's latest frame
    (``io.depth_frame``: metres, row-major, resampled to the spec's size; pixels without data as the
    policy's sim-to-real profile gave them), else a frame rendered from ``data`` at the camera's
    rate (``unilab play``; :class:`RenderedDepth`)."""
    c = io.spec.camera
    if c is None:
        raise SpecError("observation group 'depth' needs the spec's camera section; export the policy again "
                        "(`unilab export RUN`)")
    frame = getattr(io, "depth_frame", None)
    if frame is not None:
        frame = np.asarray(frame, dtype=np.float32).reshape(-1)
        if frame.size != c.pixels:
            raise SpecError(f"PolicyIO.depth_frame has {frame.size} values; the policy's camera is {c.width} x {c.height} "
                            f"({c.pixels}): resample the camera's frame to that size (metres, row-major)")
        return frame
    if getattr(io, "rendered_depth", None) is None:
        io.rendered_depth = RenderedDepth(c)
    return io.rendered_depth(io.model, data)
