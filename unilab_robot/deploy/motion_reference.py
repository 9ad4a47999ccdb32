"""The batched reference of a motion-tracking task: every clip resampled to the control rate, end to end.

:func:`resample_times` / :func:`lerp_frames` / :func:`slerp_frames` are pure functions (a clip at
``fps`` to ``rate`` Hz: frame ``k`` is time ``k / rate``, positions interpolated linearly between
the two source frames around it, quaternions by spherical interpolation); :func:`load_reference`
loads clips against a model into one :class:`MotionReference`: the frames of all clips
concatenated along axis 0 (``offsets`` / ``lengths`` say which frames are whose), float64, with
the bodies' poses recomputed by forward kinematics of the resampled root pose and joints (so a
robot set to a reference frame is on it exactly, not on an interpolation of body poses).

Pure NumPy (and MuJoCo for the forward kinematics): the motion-tracking task
(:mod:`unilab_envs.tasks.g1_track`, through :mod:`unilab_envs.motion.reference`) and the robot side
(:mod:`unilab_robot.deploy.motion`) resample with this one module, so both hold the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from unilab_robot.deploy.motion_file import MotionClip, load_motion


def resample_times(num_frames: int, fps: float, rate: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(i0, i1, alpha)`` of the ``floor((num_frames - 1) / fps * rate) + 1`` frames at ``rate`` Hz of a clip
    of ``num_frames`` at ``fps``: new frame ``k`` (time ``k / rate``) is ``(1 - alpha) * src[i0] + alpha * src[i1]``."""
    if num_frames < 1 or fps <= 0 or rate <= 0:
        raise ValueError(f"need frames >= 1, fps > 0 and rate > 0, got {num_frames}, {fps}, {rate}")
    duration = (num_frames - 1) / fps
    count = int(np.floor(duration * rate + 1e-9)) + 1
    s = np.arange(count) * (fps / rate)  # source frame (fractional) of each new frame
    i0 = np.minimum(np.floor(s + 1e-9).astype(np.int64), num_frames - 1)
    i1 = np.minimum(i0 + 1, num_frames - 1)
    alpha = np.clip(s - i0, 0.0, 1.0)
    alpha[i0 == i1] = 0.0
    return i0, i1, alpha


def lerp_frames(x: np.ndarray, fps: float, rate: float) -> np.ndarray:
    """``x`` ``(T, ...)`` sampled at ``fps``, linearly interpolated at ``rate`` Hz -> ``(T', ...)`` float64."""
    x = np.asarray(x, dtype=np.float64)
    i0, i1, a = resample_times(len(x), fps, rate)
    a = a.reshape((-1,) + (1,) * (x.ndim - 1))
    return (1.0 - a) * x[i0] + a * x[i1]


def slerp(q0: np.ndarray, q1: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Spherical interpolation of unit quaternions ``(..., 4)`` by ``a`` ``(...)`` along the short arc; unit result."""
    q0, q1 = np.asarray(q0, dtype=np.float64), np.asarray(q1, dtype=np.float64)
    a = np.asarray(a, dtype=np.float64)[..., None]
    dot = np.sum(q0 * q1, axis=-1, keepdims=True)
    q1 = np.where(dot < 0.0, -q1, q1)
    dot = np.abs(dot)
    theta = np.arccos(np.clip(dot, -1.0, 1.0))
    sin = np.sin(theta)
    near = sin < 1e-9  # (almost) the same rotation: linear is exact enough
    w0 = np.where(near, 1.0 - a, np.sin((1.0 - a) * theta) / np.where(near, 1.0, sin))
    w1 = np.where(near, a, np.sin(a * theta) / np.where(near, 1.0, sin))
    q = w0 * q0 + w1 * q1
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def slerp_frames(q: np.ndarray, fps: float, rate: float) -> np.ndarray:
    """Quaternions ``q`` ``(T, ..., 4)`` ``(w, x, y, z)`` sampled at ``fps``, slerped at ``rate`` Hz -> ``(T', ..., 4)``."""
    q = np.asarray(q, dtype=np.float64)
    i0, i1, a = resample_times(len(q), fps, rate)
    a = np.broadcast_to(a.reshape((-1,) + (1,) * (q.ndim - 2)), (len(a),) + q.shape[1:-1])
    return slerp(q[i0], q[i1], a)


@dataclass(frozen=True)
class MotionReference:
    """All clips at ``rate`` Hz, end to end: clip ``c`` is frames ``offsets[c] : offsets[c] + lengths[c]``.

    Body arrays follow the model's bodies ``body_ids`` (the clip's body axis, model ids); float64.
    """

    rate: float
    names: tuple[str, ...]
    offsets: np.ndarray  # (C,) int64
    lengths: np.ndarray  # (C,) int64
    body_names: tuple[str, ...]
    body_ids: np.ndarray  # (B,) int64 model body ids of the body axis
    joint_pos: np.ndarray  # (F, J) model joint order (hinge/slide joints)
    joint_vel: np.ndarray  # (F, J)
    root_pos: np.ndarray  # (F, 3) the free joint's position (body 0)
    root_quat: np.ndarray  # (F, 4)
    body_pos: np.ndarray  # (F, B, 3) forward kinematics of root pose + joint_pos
    body_quat: np.ndarray  # (F, B, 4)
    body_lin_vel: np.ndarray  # (F, B, 3) world frame, interpolated from the clip
    body_ang_vel: np.ndarray  # (F, B, 3)

    @property
    def num_clips(self) -> int:
        return len(self.names)

    @property
    def num_frames(self) -> int:
        return int(self.joint_pos.shape[0])

    def frame(self, clip: int, index: int) -> int:
        """The global frame of frame ``index`` of clip ``clip``."""
        if not 0 <= index < self.lengths[clip]:
            raise IndexError(f"clip {self.names[clip]} has {self.lengths[clip]} frames, not frame {index}")
        return int(self.offsets[clip] + index)


def resample_clip(clip: MotionClip, rate: float) -> dict[str, np.ndarray]:
    """The arrays of ``clip`` at ``rate`` Hz (positions and velocities linear, quaternions slerped), float64."""
    out = {k: lerp_frames(getattr(clip, k), clip.fps, rate) for k in ("joint_pos", "joint_vel", "body_pos_w",
                                                                      "body_lin_vel_w", "body_ang_vel_w")}
    out["body_quat_w"] = slerp_frames(clip.body_quat_w, clip.fps, rate)
    return out


def load_reference(paths, model, rate: float) -> MotionReference:
    """The clips at ``paths`` checked against ``model`` (:func:`~unilab_robot.deploy.motion_file.load_motion`), resampled to
    ``rate`` Hz and concatenated; body poses by forward kinematics. Every clip must have the same bodies."""
    import mujoco

    paths = tuple(str(Path(p)) for p in paths)
    if not paths:
        raise ValueError("a motion reference needs at least one clip")
    clips = [load_motion(p, model) for p in paths]
    bodies = clips[0].body_names
    for p, c in zip(paths, clips):
        if c.body_names != bodies:
            raise ValueError(f"{p}: its bodies differ from {paths[0]}'s; every clip of a reference needs the same bodies")
    joints = clips[0].joint_names
    body_ids = np.array([model.body(n).id for n in bodies], dtype=np.int64)
    qadr = np.array([model.joint(n).qposadr[0] for n in joints], dtype=np.int64)
    parts = [resample_clip(c, rate) for c in clips]
    lengths = np.array([len(p["joint_pos"]) for p in parts], dtype=np.int64)
    cat = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    root_pos, root_quat = cat["body_pos_w"][:, 0].copy(), cat["body_quat_w"][:, 0].copy()
    data = mujoco.MjData(model)
    frames = len(root_pos)
    body_pos, body_quat = np.empty((frames, len(bodies), 3)), np.empty((frames, len(bodies), 4))
    for t in range(frames):
        data.qpos[:3], data.qpos[3:7] = root_pos[t], root_quat[t]
        data.qpos[qadr] = cat["joint_pos"][t]
        mujoco.mj_kinematics(model, data)
        body_pos[t], body_quat[t] = data.xpos[body_ids], data.xquat[body_ids]
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    return MotionReference(rate, tuple(Path(p).stem for p in paths), offsets, lengths, bodies, body_ids,
                           np.ascontiguousarray(cat["joint_pos"]), np.ascontiguousarray(cat["joint_vel"]),
                           root_pos, root_quat, body_pos, body_quat,
                           np.ascontiguousarray(cat["body_lin_vel_w"]), np.ascontiguousarray(cat["body_ang_vel_w"]))
