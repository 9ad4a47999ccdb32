"""CMU humanoid clips -> the G1 (or any model with the G1's body and joint names).

Per clip: forward kinematics of the source (``mj_kinematics`` on the CMU humanoid) gives the
keypoints of :mod:`~unilab_envs.motion.keypoints`; they are rescaled to the G1's segment lengths
(:func:`~unilab_envs.motion.kinematics.scale_chain`, the root's track and height by the leg-length
ratio); stance is detected per foot by height and speed, and a stance foot is pinned to the floor
(flat, at its mean position of the step); damped least-squares IK with joint limits, warm-started
frame to frame, poses the G1 (the pelvis also turned as the source's root: its heading kept); the
pose is then raised or lowered so a stance foot's lowest point is on the floor and no foot is
under it; velocities are finite differences. Needs the ``motion`` extra only for the source clips.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from unilab_envs.motion import kinematics as km
from unilab_envs.motion.cmu_source import SourceClip, cmu_model, forward_kinematics
from unilab_envs.motion.format import MotionClip, make_clip, model_names
from unilab_envs.motion.ik import IKConfig, PointIK
from unilab_envs.motion.keypoints import FEET, KEYPOINTS, LEG_SEGMENTS


@dataclass(frozen=True)
class RetargetConfig:
    stance_height: float = 0.04   # m above the foot's lowest level (scaled to the G1): stance if under ...
    stance_speed: float = 0.35    # m/s horizontal speed of the foot (scaled): ... and slower than this
    min_stance_frames: int = 3    # shorter runs of stance are swing
    blend_frames: int = 3         # swing frames easing into / out of a pinned foot
    root_body: str = "pelvis"
    feet: tuple[str, str] = ("left_ankle_roll_link", "right_ankle_roll_link")
    flat_stance: float = 3.0      # IK weight of a stance foot's sole being level
    flat_swing: float = 0.05      # ... of a swing foot's (only its roll: pitch and yaw follow the toe)
    keyframe: str = "stand"       # the target's reference pose (its qpos0 if it has no such keyframe)
    ik: IKConfig = field(default_factory=IKConfig)


@dataclass(frozen=True)
class ClipReport:
    """What retargeting one clip measured (lengths in cm)."""

    name: str
    frames: int
    seconds: float
    keypoint_names: tuple[str, ...]
    keypoint_error_cm: np.ndarray   # (K,) mean over frames of |G1 keypoint - target|
    mean_error_cm: float            # over keypoints and frames
    max_error_cm: float             # over keypoints and frames
    skate_cm: float                 # mean horizontal move of a stance foot per stance frame
    stance_frames: int              # frames with at least one foot in stance
    penetration_cm: float           # deepest point of any collision geom under the floor
    limit_frames: int               # frames where the IK left a joint clamped on its limit
    lifted_frames: int              # swing frames raised because a foot would be under the floor
    wall_s: float


class Target:
    """The model retargeted to, with what the retargeter needs of it (computed once)."""

    def __init__(self, model, cfg: RetargetConfig):
        import mujoco

        self.model, self.cfg = model, cfg
        self.joint_names, self.body_names = model_names(model)
        if model.njnt == 0 or model.jnt_type[0] != mujoco.mjtJoint.mjJNT_FREE:
            raise ValueError("the target model's first joint must be a free joint (a floating base)")
        missing = sorted({k.g1_body for k in KEYPOINTS} - set(self.body_names))
        if missing:
            raise ValueError(f"the target model has no body {missing[0]!r} (retargeting needs the G1's body names)")
        kid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, cfg.keyframe)
        self.q_ref = (model.key_qpos[kid] if kid >= 0 else model.qpos0).copy()
        self.joint_qadr = np.array([model.joint(n).qposadr[0] for n in self.joint_names], dtype=int)
        self.ik = PointIK(model, [k.g1_body for k in KEYPOINTS], np.array([k.g1_offset for k in KEYPOINTS]),
                          np.array([k.weight for k in KEYPOINTS]), cfg.root_body, self.q_ref, cfg.feet, cfg.ik)
        self.collision_geoms = np.array([g for g in range(model.ngeom) if model.geom_bodyid[g] != 0
                                         and (model.geom_contype[g] or model.geom_conaffinity[g])])
        signs = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], dtype=np.float64)
        aabb = model.geom_aabb[self.collision_geoms]  # (G, 6): centre, half sizes in the geom's frame
        self._corners = aabb[:, None, :3] + signs[None] * aabb[:, None, 3:]  # (G, 8, 3)
        rest = self.pose(self.q_ref)
        self.rest_keypoints = rest[0] - np.array([0.0, 0.0, rest[1]])  # soles on the floor
        self.segment_lengths = _segment_lengths(self.rest_keypoints[None])

    def pose(self, qpos: np.ndarray) -> tuple[np.ndarray, float]:
        """Keypoints ``(K, 3)`` and the lowest collision point's height at ``qpos``."""
        d = self.ik.data
        d.qpos[:] = qpos
        self.ik.mj.mj_kinematics(self.model, d)
        return self.ik.points(), self.lowest()

    def lowest(self) -> float:
        """Height of the lowest corner of any collision geom's box (after kinematics)."""
        d, g = self.ik.data, self.collision_geoms
        z = d.geom_xpos[g, 2][:, None] + np.einsum("gj,gcj->gc", d.geom_xmat[g].reshape(-1, 3, 3)[:, 2], self._corners)
        return float(z.min())


def _segment_lengths(points: np.ndarray) -> np.ndarray:
    """``(K,)`` median length of each segment parent -> keypoint over ``points`` ``(T, K, 3)`` (0 at the root)."""
    out = np.zeros(len(KEYPOINTS))
    for k, kp in enumerate(KEYPOINTS):
        if kp.parent >= 0:
            out[k] = np.median(np.linalg.norm(points[:, k] - points[:, kp.parent], axis=-1))
    return out


def rest_frame_offset(src_model) -> np.ndarray:
    """The quaternion ``(4,)`` taking the CMU root's frame to a G1-style pelvis frame (x forward,
    y left, z up), from the CMU humanoid's rest pose: up = root -> thorax, left = right hip -> left hip."""
    import mujoco

    q = np.zeros(src_model.nq)
    q[3] = 1.0
    p = forward_kinematics(src_model, q[None], ["root", "thorax", "lfemur", "rfemur"])[0]
    up = p[1] - p[0]
    up /= np.linalg.norm(up)
    left = p[2] - p[3]
    left -= left.dot(up) * up
    left /= np.linalg.norm(left)
    R = np.stack([np.cross(left, up), left, up], axis=1)  # columns: the G1 axes in the root's frame
    out = np.zeros(4)
    mujoco.mju_mat2Quat(out, R.reshape(-1))
    return out


def targets_from_source(src: SourceClip, target: Target, cfg: RetargetConfig):
    """The G1 keypoint targets ``(T, K, 3)``, the root orientation targets ``(T, 4)`` and the stance
    flags ``(T, 2)`` (left, right) of a source clip."""
    src_model = cmu_model(src.model_path)
    qpos = src.qpos()
    points = forward_kinematics(src_model, qpos, [k.source_body for k in KEYPOINTS])
    src_len = _segment_lengths(points)
    ratios = np.divide(target.segment_lengths, src_len, out=np.ones_like(src_len), where=src_len > 1e-9)
    root_scale = target.segment_lengths[list(LEG_SEGMENTS)].sum() / src_len[list(LEG_SEGMENTS)].sum()
    kp = km.scale_chain(points, tuple(k.parent for k in KEYPOINTS), ratios, root_scale)
    dt = src.clip.dt
    stance = np.zeros((len(kp), 2), dtype=bool)
    for f, (a, t) in enumerate(FEET):
        height = np.minimum(kp[:, a, 2] - np.percentile(kp[:, a, 2], 5), kp[:, t, 2] - np.percentile(kp[:, t, 2], 5))
        mid = 0.5 * (kp[:, a, :2] + kp[:, t, :2])
        speed = np.linalg.norm(km.finite_difference(mid, dt), axis=-1)
        stance[:, f] = km.detect_stance(height, speed, cfg.stance_height, cfg.stance_speed, cfg.min_stance_frames)
    # the floor: the stance ankles at the G1's standing ankle height
    ankles = [kp[stance[:, f], a, 2] for f, (a, _) in enumerate(FEET)]
    level = np.concatenate(ankles)
    level = np.median(level) if level.size else np.percentile(kp[:, [a for a, _ in FEET], 2], 5)
    kp[..., 2] += target.rest_keypoints[FEET[0][0], 2] - level
    for f, (a, t) in enumerate(FEET):
        s = stance[:, f]
        for i in (a, t):
            kp[:, i, :2] = km.lock_stance_xy(kp[:, i, :2], s, cfg.blend_frames)
            kp[s, i, 2] = target.rest_keypoints[i, 2]
    root_quat = km.quat_mul(qpos[:, 3:7], rest_frame_offset(src_model)[None])
    return kp, km.continuous_quats(root_quat), stance


def retarget_clip(src: SourceClip, target: Target, cfg: RetargetConfig | None = None) -> tuple[MotionClip, ClipReport]:
    """One CMU clip on ``target``: the clip in the motion file's layout, and what it measured."""
    cfg = cfg or target.cfg
    t0 = time.perf_counter()
    kp, root_quat, stance = targets_from_source(src, target, cfg)
    T, m = len(kp), target.model
    qpos = np.empty((T, m.nq))
    q = target.q_ref.copy()
    q[:3], q[3:7] = kp[0, 0], root_quat[0]
    limit = np.zeros(T, dtype=bool)
    lifted = np.zeros(T, dtype=bool)
    for t in range(T):
        its = cfg.ik.first_iterations if t == 0 else cfg.ik.iterations
        q = target.ik.solve(q, kp[t], root_quat[t], its, np.where(stance[t], cfg.flat_stance, cfg.flat_swing))
        limit[t] = target.ik.at_limit(q)
        low = target.pose(q)[1]
        dz = -low if stance[t].any() else max(0.0, -low)
        lifted[t] = not stance[t].any() and dz > 0
        q[2] += dz
        qpos[t] = q
    clip, reach, low = _clip_from_qpos(target, qpos, src.clip.dt)
    err = np.linalg.norm(reach - kp, axis=-1) * 100.0  # (T, K) cm
    skates = []
    for f, (a, tt) in enumerate(FEET):
        mid = 0.5 * (reach[:, a, :2] + reach[:, tt, :2])
        skates.append((km.skate_cm_per_stance_frame(mid, stance[:, f]),
                       int((stance[1:, f] & stance[:-1, f]).sum())))
    pairs = sum(n for _, n in skates)
    skate = sum(s * n for s, n in skates) / pairs if pairs else 0.0
    report = ClipReport(src.name, T, T * src.clip.dt, tuple(k.name for k in KEYPOINTS), err.mean(axis=0),
                        float(err.mean()), float(err.max()), float(skate), int(stance.any(axis=1).sum()),
                        float(max(0.0, -low.min()) * 100.0), int(limit.sum()), int(lifted.sum()),
                        time.perf_counter() - t0)
    return clip, report


def _clip_from_qpos(target: Target, qpos: np.ndarray, dt: float):
    """The motion clip of a ``qpos`` track ``(T, nq)``, its keypoints ``(T, K, 3)`` and lowest points ``(T,)``."""
    m, d = target.model, target.ik.data
    T, B = len(qpos), m.nbody - 1
    pos, quat = np.empty((T, B, 3)), np.empty((T, B, 4))
    reach, low = np.empty((T, len(KEYPOINTS), 3)), np.empty(T)
    for t in range(T):
        reach[t], low[t] = target.pose(qpos[t])
        pos[t], quat[t] = d.xpos[1:], d.xquat[1:]
    quat = km.continuous_quats(quat)
    joints = qpos[:, target.joint_qadr]
    clip = make_clip(1.0 / dt, target.joint_names, target.body_names, joint_pos=joints,
                     joint_vel=km.finite_difference(joints, dt), body_pos_w=pos, body_quat_w=quat,
                     body_lin_vel_w=km.finite_difference(pos, dt), body_ang_vel_w=km.angular_velocity(quat, dt))
    return clip, reach, low


def load_target(model_path: str | Path | None, cfg: RetargetConfig) -> Target:
    """The G1 (``model_path`` None) or the MJCF at ``model_path`` as a :class:`Target`."""
    import mujoco

    from unilab_robot.assets.g1 import MJCF_PATH

    return Target(mujoco.MjModel.from_xml_path(str(model_path or MJCF_PATH)), cfg)
