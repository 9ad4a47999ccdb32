"""Pure NumPy math of the retargeter: quaternions, finite differences, keypoint scaling,
stance detection, foot locking and the skate measure.

Conventions: quaternions are ``(w, x, y, z)`` (MuJoCo's), world frame, unit norm; ``T`` frames,
``K`` keypoints, ``B`` bodies. Nothing here touches MuJoCo.
"""

from __future__ import annotations

import numpy as np


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a * b`` of quaternions ``(..., 4)`` -> ``(..., 4)``."""
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz,
                     aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def quat_conj(q: np.ndarray) -> np.ndarray:
    """Conjugate (the inverse of a unit quaternion), ``(..., 4)`` -> ``(..., 4)``."""
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def quat_to_rotvec(q: np.ndarray) -> np.ndarray:
    """Rotation vector (axis * angle, angle in [0, pi]) of unit quaternions ``(..., 4)`` -> ``(..., 3)``."""
    q = np.where(q[..., :1] < 0, -q, q)  # the short way round
    v = q[..., 1:]
    s = np.linalg.norm(v, axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(s, q[..., :1])
    scale = np.where(s > 1e-12, angle / np.maximum(s, 1e-12), 2.0)  # small angles: 2 v
    return v * scale


def continuous_quats(q: np.ndarray) -> np.ndarray:
    """Flip signs along axis 0 so consecutive quaternions ``(T, ..., 4)`` lie in one hemisphere."""
    q = np.array(q, dtype=np.float64, copy=True)
    for t in range(1, len(q)):
        flip = np.sum(q[t] * q[t - 1], axis=-1) < 0
        q[t][flip] *= -1.0
    return q


def finite_difference(x: np.ndarray, dt: float) -> np.ndarray:
    """Time derivative of samples ``x`` ``(T, ...)`` taken every ``dt`` s -> ``(T, ...)``:
    central differences inside, one-sided (first order) at the two ends (``np.gradient``).
    A single frame has zero velocity."""
    x = np.asarray(x, dtype=np.float64)
    if len(x) < 2:
        return np.zeros_like(x)
    return np.gradient(x, dt, axis=0)


def angular_velocity(q: np.ndarray, dt: float) -> np.ndarray:
    """World-frame angular velocity ``(T, ..., 3)`` (rad/s) of orientations ``q`` ``(T, ..., 4)``.

    Inside: ``rotvec(q[t+1] * q[t-1]^-1) / (2 dt)``; at the ends the one-sided difference.
    A constant rotation rate ``w`` about a fixed axis gives ``w`` exactly (not just to first order).
    """
    q = continuous_quats(q)
    if len(q) < 2:
        return np.zeros(q.shape[:-1] + (3,))
    w = np.empty(q.shape[:-1] + (3,))
    w[1:-1] = quat_to_rotvec(quat_mul(q[2:], quat_conj(q[:-2]))) / (2.0 * dt)
    w[0] = quat_to_rotvec(quat_mul(q[1], quat_conj(q[0]))) / dt
    w[-1] = quat_to_rotvec(quat_mul(q[-1], quat_conj(q[-2]))) / dt
    return w


def scale_chain(points: np.ndarray, parents: tuple[int, ...], ratios: np.ndarray, root_scale: float) -> np.ndarray:
    """Rescale a keypoint tree to another body's proportions.

    ``points`` ``(T, K, 3)`` source keypoints; ``parents[k]`` the index of ``k``'s parent (``-1`` for the
    root, and a parent comes before its children); ``ratios`` ``(K,)`` target / source length of the
    segment parent -> ``k``. The root's position is multiplied by ``root_scale`` (height and ground
    track); every other keypoint is its parent's new position plus the source segment times its ratio.
    Returns ``(T, K, 3)``: segment directions of the source, lengths of the target.
    """
    points = np.asarray(points, dtype=np.float64)
    out = np.empty_like(points)
    for k, p in enumerate(parents):
        if p < 0:
            out[:, k] = points[:, k] * root_scale
        else:
            if p >= k:
                raise ValueError(f"keypoint {k}'s parent {p} comes after it")
            out[:, k] = out[:, p] + ratios[k] * (points[:, k] - points[:, p])
    return out


def detect_stance(height: np.ndarray, speed: np.ndarray, max_height: float, max_speed: float,
                  min_frames: int = 2) -> np.ndarray:
    """Stance flags ``(T,)`` bool of one foot: its height above the floor ``(T,)`` (m) under
    ``max_height`` and its horizontal speed ``(T,)`` (m/s) under ``max_speed``; runs of stance
    shorter than ``min_frames`` are dropped (a foot brushing past is not a step)."""
    stance = (np.asarray(height) < max_height) & (np.asarray(speed) < max_speed)
    for start, stop in runs(stance):
        if stop - start < min_frames:
            stance[start:stop] = False
    return stance


def runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """The ``[start, stop)`` frame ranges where ``flags`` ``(T,)`` is true, in order."""
    f = np.concatenate([[False], np.asarray(flags, dtype=bool), [False]])
    edges = np.flatnonzero(f[1:] != f[:-1])
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]


def lock_stance_xy(xy: np.ndarray, stance: np.ndarray, blend_frames: int = 3) -> np.ndarray:
    """Pin a foot point's horizontal track ``xy`` ``(T, 2)`` during stance ``(T,)``: every stance run
    is held at the run's mean position, and the ``blend_frames`` swing frames on each side move
    linearly from the unlocked track into the pin (no jump at touch-down or lift-off). ``(T, 2)``."""
    xy = np.asarray(xy, dtype=np.float64)
    offset = np.zeros_like(xy)
    weight = np.zeros(len(xy))
    for start, stop in runs(stance):
        pin = xy[start:stop].mean(axis=0)
        offset[start:stop] = pin - xy[start:stop]
        weight[start:stop] = 1.0
        for i in range(1, blend_frames + 1):
            a = 1.0 - i / (blend_frames + 1)
            for t in (start - i, stop - 1 + i):
                if 0 <= t < len(xy) and not stance[t] and a > weight[t]:
                    offset[t] = pin - xy[start if t < start else stop - 1]
                    weight[t] = a
    return xy + weight[:, None] * offset


def skate_cm_per_stance_frame(xy: np.ndarray, stance: np.ndarray) -> float:
    """Foot skate: the mean horizontal distance (cm) a foot point ``xy`` ``(T, 2)`` (m) moves between
    consecutive frames that are both stance ``(T,)``; 0 when there is no such pair."""
    both = np.asarray(stance[1:], dtype=bool) & np.asarray(stance[:-1], dtype=bool)
    if not both.any():
        return 0.0
    step = np.linalg.norm(np.diff(np.asarray(xy, dtype=np.float64), axis=0), axis=-1)
    return float(100.0 * step[both].mean())


def yaw_of(forward: np.ndarray) -> np.ndarray:
    """Heading (rad, about +z) of forward vectors ``(..., 3)`` -> ``(...)``."""
    return np.arctan2(forward[..., 1], forward[..., 0])
