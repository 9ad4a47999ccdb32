"""The G1 joystick task's per-step computation in vectorized NumPy: the bench's baseline.

:func:`g1_compute_numpy` computes what ``unilab_envs/tasks/g1_joystick.py``'s fused
``_compute`` kernel computes, from the same arrays, at the same precision: float64
arithmetic, the tracking / feet-phase exponentials and the gait phase's sine and cosine
in float32 (the kernel's ``exp_f32`` / ``sin_cos_f32``), float32 outputs. It writes the
same outputs (observation, privileged observation, 17 weighted reward terms, reward,
terminated) and makes the same state updates (gait phase, foot contacts, air times, foot
heights and positions, commands resampled from each env's SplitMix64 stream), so the
bench can check the two agree before timing them.

The arrays are a dict of what the kernel reads, by name (:data:`KERNEL_ARGS`: the batch
arrays, the task's per-env state, the robot's indices and poses, and the kernel's named
``Params`` and ``Commands`` records); rows ``lo:hi`` only are read and written, so row
shards can run in threads.
"""

from __future__ import annotations

import math

import numpy as np

KERNEL_ARGS = (
    "obs", "privileged_obs", "reward_terms", "reward", "terminated", "episode_step", "rng",
    "qpos", "qvel", "site_xpos", "actuator_force",
    "root_q", "root_d", "joint_q", "joint_d", "actuator_ids", "foot_sites", "stand", "joint_low", "joint_high",
    "pose_weights", "last_action", "previous_action", "command", "phase", "contact", "air_time", "foot_height",
    "previous_foot_pos", "weights", "params", "commands", "phase_offsets",
)  # fmt: skip
OUTPUTS = ("obs", "privileged_obs", "reward_terms", "reward", "terminated")
STATE = ("rng", "command", "phase", "contact", "air_time", "foot_height", "previous_foot_pos")  # what a step updates

_GOLDEN, _MUL1, _MUL2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S11, _S27, _S30, _S31 = np.uint64(11), np.uint64(27), np.uint64(30), np.uint64(31)


def uniform_rows(state: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Advance the SplitMix64 streams of ``rows``; one float64 in [0, 1) each (``unilab_envs.core.rng.uniform``)."""
    x = state[rows] + _GOLDEN  # uint64 arrays wrap, as the kernel's do
    state[rows] = x
    z = (x ^ (x >> _S30)) * _MUL1
    z = (z ^ (z >> _S27)) * _MUL2
    return ((z ^ (z >> _S31)) >> _S11) * (1.0 / 9007199254740992.0)


def sample_commands(a: dict, rows: np.ndarray) -> None:
    """New (vx, vy, yaw rate) commands for ``rows``: zero with ``commands.zero_probability``, else uniform, then
    straight (vy = yaw rate = 0) with ``commands.straight_probability``, in the kernel's per-row draw order."""
    commands = a["commands"]
    zero = uniform_rows(a["rng"], rows) < commands.zero_probability
    a["command"][rows[zero]] = 0.0
    live = rows[~zero]
    for k in range(3):
        low, high = commands.ranges[k]
        a["command"][live, k] = low + (high - low) * uniform_rows(a["rng"], live)
    if commands.straight_probability > 0.0:
        a["command"][live[uniform_rows(a["rng"], live) < commands.straight_probability], 1:] = 0.0


def _exp_f32(x: np.ndarray) -> np.ndarray:
    return np.exp(x.astype(np.float32)).astype(np.float64)


def g1_compute_numpy(a: dict, lo: int = 0, hi: int | None = None) -> None:
    """One step of the G1 task's observation / reward / termination computation on rows ``lo:hi``."""
    s = slice(lo, hi)
    p = a["params"]
    dt, sigma, height_target, air_target = p.dt, p.tracking_sigma, p.base_height_target, p.air_time_target
    gait_step, swing_height, contact_height, cos_max_tilt, min_height = p.gait_step, p.swing_height, p.contact_height, p.cos_max_tilt, p.min_base_height
    resample_steps = np.int64(a["commands"].resample_steps)
    phase_width = p.feet_phase_width
    qpos, qvel, command = a["qpos"][s], a["qvel"][s], a["command"][s]
    rq, rd = a["root_q"], a["root_d"]
    w, x, y, z = qpos[:, rq + 3], qpos[:, rq + 4], qpos[:, rq + 5], qpos[:, rq + 6]
    # rows of R(q); body-frame velocity R^T v and gravity R^T (0, 0, -1)
    r00, r01, r02 = 1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y)
    r10, r11, r12 = 2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x)
    r20, r21, r22 = 2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)
    v0, v1, v2 = qvel[:, rd], qvel[:, rd + 1], qvel[:, rd + 2]
    vx, vy, vz = r00 * v0 + r10 * v1 + r20 * v2, r01 * v0 + r11 * v1 + r21 * v2, r02 * v0 + r12 * v1 + r22 * v2
    gx, gy, gz = -r20, -r21, -r22
    wx, wy, wz = qvel[:, rd + 3], qvel[:, rd + 4], qvel[:, rd + 5]
    height = qpos[:, rq + 2]
    moving = (command[:, 0] ** 2 + command[:, 1] ** 2 > 0.01) | (np.abs(command[:, 2]) > 0.1)

    jq = qpos[:, a["joint_q"]]
    dq = jq - a["stand"]
    tau = a["actuator_force"][s][:, a["actuator_ids"]]
    action = a["last_action"][s]
    da = action - a["previous_action"][s]
    torque_sq = (tau * tau).sum(1)
    action_rate = (da * da).sum(1)
    pose = (a["pose_weights"] * dq * dq).sum(1)
    stand_dev = np.abs(dq).sum(1)
    limits = (np.maximum(0.0, jq - a["joint_high"]) + np.maximum(0.0, a["joint_low"] - jq)).sum(1)
    obs, priv = a["obs"][s], a["privileged_obs"][s]
    obs[:, 9:38], obs[:, 38:67], obs[:, 67:96] = dq, qvel[:, a["joint_d"]], action
    priv[:, 16:45] = tau

    phase = a["phase"][s] + gait_step
    phase = np.where(phase < 2.0 * math.pi, phase, phase % (2.0 * math.pi))
    a["phase"][s] = phase
    phase32 = phase.astype(np.float32)
    sin_phase, cos_phase = np.sin(phase32).astype(np.float64), np.cos(phase32).astype(np.float64)

    feet = a["site_xpos"][s][:, a["foot_sites"]]  # (n, feet, 3)
    pz = feet[:, :, 2]
    in_contact = pz < contact_height
    first_contact = in_contact & ~a["contact"][s] & (a["air_time"][s] > 0.0)
    air = a["air_time"][s] + dt
    air_reward = np.where(first_contact, np.maximum(0.0, np.minimum(air - air_target, air_target)), 0.0).sum(1)
    previous = a["previous_foot_pos"][s]
    fvx, fvy = (feet[:, :, 0] - previous[:, :, 0]) * (1.0 / dt), (feet[:, :, 1] - previous[:, :, 1]) * (1.0 / dt)
    slip = np.where(in_contact, fvx * fvx + fvy * fvy, 0.0).sum(1)
    a["air_time"][s] = np.where(in_contact, 0.0, air)
    a["contact"][s] = in_contact
    a["foot_height"][s] = pz
    previous[...] = feet
    offsets = a["phase_offsets"]
    sn = sin_phase[:, None] * offsets[:, 0] + cos_phase[:, None] * offsets[:, 1]  # sin(phase + offset)
    target = np.where(moving[:, None] & (sn > 0.0), swing_height * sn * sn, 0.0)
    phase_error = ((pz - target) ** 2).sum(1)

    fell = (gz > -cos_max_tilt) | (height < min_height)
    lin_error = (command[:, 0] - vx) ** 2 + (command[:, 1] - vy) ** 2
    yaw_error = (command[:, 2] - wz) ** 2
    wt = a["weights"]
    terms = (
        wt[0] * _exp_f32(-lin_error * (1.0 / sigma)), wt[1] * _exp_f32(-yaw_error * (1.0 / p.yaw_tracking_sigma)),
        wt[2] * vz * vz, wt[3] * (wx * wx + wy * wy), wt[4] * (gx * gx + gy * gy),
        wt[5] * (height - height_target) ** 2, wt[6] * torque_sq, wt[7] * action_rate, wt[8] * pose,
        np.where(moving, wt[9] * air_reward, 0.0), wt[10] * _exp_f32(-phase_error * (1.0 / phase_width)),
        wt[11] * slip, wt[12] * limits, np.where(moving, 0.0, wt[13] * stand_dev), np.where(fell, wt[14], 0.0),
        np.where(fell, 0.0, wt[15]),
    )  # fmt: skip
    shaped = terms[0]
    for t in terms[1:14] + terms[15:]:
        shaped = shaped + t  # in the kernel's order, the termination term left out of the clip
    clip = (wt[16] / dt) * np.maximum(0.0, -shaped)
    a["reward_terms"][s] = np.stack((*terms, clip), 1)
    a["reward"][s] = shaped + clip + terms[14]
    a["terminated"][s] = fell

    due = np.flatnonzero(a["episode_step"][s] % resample_steps == 0)
    if due.size:
        sample_commands(a, due + lo)
    obs[:, 0], obs[:, 1], obs[:, 2], obs[:, 3], obs[:, 4], obs[:, 5] = vx, vy, vz, wx, wy, wz
    obs[:, 6], obs[:, 7], obs[:, 8] = gx, gy, gz
    obs[:, 96:99] = command
    obs[:, 99], obs[:, 100] = sin_phase, cos_phase
    priv[:, 0], priv[:, 1], priv[:, 2], priv[:, 3], priv[:, 4], priv[:, 5] = vx, vy, vz, wx, wy, wz
    priv[:, 6], priv[:, 7], priv[:, 8], priv[:, 9] = gx, gy, gz, height
    priv[:, 10:12], priv[:, 12:14], priv[:, 14:16] = in_contact, pz, a["air_time"][s]
