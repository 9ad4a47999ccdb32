"""Kinematic playback: a clip's root pose and ``joint_pos`` written into a MuJoCo model frame by
frame (``mj_kinematics``, no dynamics), and the bodies' positions compared with the clip's."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from unilab_envs.motion.format import MotionClip, fit_to_model


@dataclass(frozen=True)
class PlaybackResult:
    frames: int
    max_body_error_m: float   # over frames and bodies: |FK body origin - clip's body_pos_w|
    max_quat_error_rad: float  # over frames and bodies: angle between FK and clip orientations
    lowest_m: float           # the lowest body origin over the clip (m)


def play_kinematic(model, clip: MotionClip) -> PlaybackResult:
    """Step ``model`` (a free joint first, then the clip's joints by name) through ``clip``."""
    import mujoco

    clip = fit_to_model(clip, model)
    data = mujoco.MjData(model)
    qadr = np.array([model.joint(n).qposadr[0] for n in clip.joint_names], dtype=int)
    bids = np.array([model.body(n).id for n in clip.body_names], dtype=int)
    root = clip.root_qpos()
    err = qerr = 0.0
    lowest = np.inf
    for t in range(clip.num_frames):
        data.qpos[:7] = root[t]
        data.qpos[qadr] = clip.joint_pos[t]
        mujoco.mj_kinematics(model, data)
        err = max(err, float(np.abs(np.linalg.norm(data.xpos[bids] - clip.body_pos_w[t], axis=-1)).max()))
        dots = np.abs(np.sum(data.xquat[bids] * clip.body_quat_w[t], axis=-1))
        qerr = max(qerr, float(2.0 * np.arccos(np.clip(dots, 0.0, 1.0)).max()))
        lowest = min(lowest, float(data.xpos[bids, 2].min()))
    return PlaybackResult(clip.num_frames, err, qerr, lowest)
