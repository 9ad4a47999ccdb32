"""The motion file: one clip as a NumPy ``.npz``, in the layout of the BeyondMimic / mjlab family.

========================  ==========  ===========  ===================================================
key                       shape       dtype        meaning
========================  ==========  ===========  ===================================================
``fps``                   ``(1,)``    float        frames per second (one value, as mjlab writes it)
``joint_pos``             ``(T, J)``  float32      joint angles (rad), the model's hinge/slide joints
``joint_vel``             ``(T, J)``  float32      joint velocities (rad/s)
``body_pos_w``            ``(T,B,3)`` float32      body origins in the world (m)
``body_quat_w``           ``(T,B,4)`` float32      body orientations in the world, ``(w, x, y, z)``
``body_lin_vel_w``        ``(T,B,3)`` float32      body-origin linear velocities, world frame (m/s)
``body_ang_vel_w``        ``(T,B,3)`` float32      body angular velocities, world frame (rad/s)
``joint_names``           ``(J,)``    str          names of ``joint_pos``'s columns (ours; optional)
``body_names``            ``(B,)``    str          names of the body axis (ours; optional)
========================  ==========  ===========  ===================================================

The floating base is body 0's pose (``body_pos_w[:, 0]``, ``body_quat_w[:, 0]``). mjlab's files
carry no names: their columns are the robot's joints and bodies in model order, which is what
:func:`load_motion` assumes for a file without ``joint_names`` / ``body_names`` (the counts must
then equal the model's). Our files carry the names, so a mismatch is refused by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

ARRAY_KEYS = ("joint_pos", "joint_vel", "body_pos_w", "body_quat_w", "body_lin_vel_w", "body_ang_vel_w")
NAME_KEYS = ("joint_names", "body_names")


class MotionFormatError(ValueError):
    """A motion file that is not in the format, or does not fit the model: the message is one line."""


@dataclass(frozen=True)
class MotionClip:
    """One clip in the file's layout (see the module docstring); arrays are float32."""

    fps: float
    joint_names: tuple[str, ...]
    body_names: tuple[str, ...]
    joint_pos: np.ndarray       # (T, J)
    joint_vel: np.ndarray       # (T, J)
    body_pos_w: np.ndarray      # (T, B, 3)
    body_quat_w: np.ndarray     # (T, B, 4) w x y z
    body_lin_vel_w: np.ndarray  # (T, B, 3)
    body_ang_vel_w: np.ndarray  # (T, B, 3)

    @property
    def num_frames(self) -> int:
        return int(self.joint_pos.shape[0])

    @property
    def duration_s(self) -> float:
        return self.num_frames / self.fps

    def root_qpos(self) -> np.ndarray:
        """``(T, 7)``: body 0's position and quaternion, a free joint's ``qpos``."""
        return np.concatenate([self.body_pos_w[:, 0], self.body_quat_w[:, 0]], axis=1)

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: getattr(self, k) for k in ARRAY_KEYS}


def make_clip(fps: float, joint_names, body_names, **arrays: np.ndarray) -> MotionClip:
    """A :class:`MotionClip` with float32 arrays, shapes checked (:class:`MotionFormatError` otherwise)."""
    missing = [k for k in ARRAY_KEYS if k not in arrays]
    if missing:
        raise MotionFormatError(f"missing array(s) {', '.join(missing)}")
    a = {k: np.ascontiguousarray(arrays[k], dtype=np.float32) for k in ARRAY_KEYS}
    joint_names, body_names = tuple(str(n) for n in joint_names), tuple(str(n) for n in body_names)
    T, J, B = a["joint_pos"].shape[0], len(joint_names), len(body_names)
    want = {"joint_pos": (T, J), "joint_vel": (T, J), "body_pos_w": (T, B, 3), "body_quat_w": (T, B, 4),
            "body_lin_vel_w": (T, B, 3), "body_ang_vel_w": (T, B, 3)}
    for k, shape in want.items():
        if a[k].shape != shape:
            raise MotionFormatError(f"{k} has shape {a[k].shape}, expected {shape} "
                                    f"({T} frames, {J} joint names, {B} body names)")
    if T < 1:
        raise MotionFormatError("the clip has no frames")
    if not np.isfinite(fps) or fps <= 0:
        raise MotionFormatError(f"fps must be a positive number, not {fps}")
    for k, v in a.items():
        if not np.isfinite(v).all():
            raise MotionFormatError(f"{k} holds NaN or infinite values")
    return MotionClip(float(fps), joint_names, body_names, **a)


def save_motion(path: str | Path, clip: MotionClip) -> Path:
    """Write ``clip`` to ``path`` (a compressed ``.npz``; the suffix is added if missing)."""
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, fps=np.array([clip.fps], dtype=np.float64),
                        joint_names=np.array(clip.joint_names), body_names=np.array(clip.body_names),
                        **clip.arrays())
    return path


def model_names(model) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A MuJoCo model's joint names (hinge and slide joints: ``joint_pos``'s columns, in model
    order) and body names (every body but the world, in model order)."""
    import mujoco

    joints = tuple(model.joint(i).name for i in range(model.njnt)
                   if int(model.jnt_type[i]) in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)))
    bodies = tuple(model.body(i).name for i in range(1, model.nbody))
    return joints, bodies


def load_motion(path: str | Path, model=None) -> MotionClip:
    """Read a motion file; with ``model`` (an ``mujoco.MjModel``), check it against the model.

    Against a model: the file's joints must be exactly the model's joints (any order: the columns
    are put in model order) and its bodies a set of the model's bodies starting with the root body
    (the model's first body); a file without names must have the model's joint and body counts
    and is read in model order (mjlab's files). Anything else raises :class:`MotionFormatError`
    with a one-line message naming the first mismatch.
    """
    path = Path(path)
    if not path.is_file():
        raise MotionFormatError(f"{path}: no such motion file")
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except (OSError, ValueError) as e:
        raise MotionFormatError(f"{path}: not a readable .npz ({' '.join(str(e).split())})") from None
    missing = [k for k in ("fps",) + ARRAY_KEYS if k not in data]
    if missing:
        raise MotionFormatError(f"{path}: missing key(s) {', '.join(missing)} (the layout is in docs/motion.md)")
    fps = np.asarray(data["fps"]).reshape(-1)
    if fps.size != 1:
        raise MotionFormatError(f"{path}: fps must hold one value, it holds {fps.size}")
    J, B = data["joint_pos"].shape[-1], data["body_pos_w"].shape[1] if data["body_pos_w"].ndim == 3 else -1
    names = {}
    for key, count, what in (("joint_names", J, "joint"), ("body_names", B, "body")):
        if key in data:
            names[key] = tuple(str(n) for n in np.asarray(data[key]).reshape(-1))
        elif model is not None:
            names[key] = model_names(model)[0 if what == "joint" else 1]
        else:
            names[key] = tuple(f"{what}_{i}" for i in range(max(count, 0)))
    try:
        clip = make_clip(float(fps[0]), names["joint_names"], names["body_names"],
                         **{k: data[k] for k in ARRAY_KEYS})
    except MotionFormatError as e:
        raise MotionFormatError(f"{path}: {e}") from None
    return clip if model is None else fit_to_model(clip, model, str(path))


def fit_to_model(clip: MotionClip, model, where: str = "clip") -> MotionClip:
    """``clip`` with its joint columns in ``model``'s order, after checking every name (see
    :func:`load_motion`); :class:`MotionFormatError` names the first mismatch."""
    joints, bodies = model_names(model)
    extra = [n for n in clip.joint_names if n not in joints]
    if extra:
        raise MotionFormatError(f"{where}: joint {extra[0]!r} is not in the model ({len(extra)} of the clip's "
                                f"{len(clip.joint_names)} joints are not)")
    lacking = [n for n in joints if n not in clip.joint_names]
    if lacking:
        raise MotionFormatError(f"{where}: the model's joint {lacking[0]!r} is not in the clip ({len(lacking)} "
                                f"of the model's {len(joints)} joints are missing)")
    if len(set(clip.joint_names)) != len(clip.joint_names):
        raise MotionFormatError(f"{where}: a joint name appears twice")
    extra = [n for n in clip.body_names if n not in bodies]
    if extra:
        raise MotionFormatError(f"{where}: body {extra[0]!r} is not in the model ({len(extra)} of the clip's "
                                f"{len(clip.body_names)} bodies are not)")
    if not clip.body_names or clip.body_names[0] != bodies[0]:
        raise MotionFormatError(f"{where}: the first body must be the model's root body {bodies[0]!r}, "
                                f"not {(clip.body_names or ('nothing',))[0]!r}")
    order = [clip.joint_names.index(n) for n in joints]
    return MotionClip(clip.fps, joints, clip.body_names, clip.joint_pos[:, order], clip.joint_vel[:, order],
                      clip.body_pos_w, clip.body_quat_w, clip.body_lin_vel_w, clip.body_ang_vel_w)
