"""``UniLab/G1Track-v0``'s Numba kernels: tracking errors, terminations, observations, reset from the reference,
adaptive sampling of clip segments, and the generated fused step kernel (:func:`track_kernel`).

Records (``NamedTuple``\\ s, passed to the kernels as typed tuples): :class:`Track` (where things are in the model and
the reference, built once), :class:`Ref` (the concatenated reference, :mod:`unilab_envs.motion.reference`),
:class:`Live` (the batch's arrays), :class:`Episode` (per-env state). Quaternions are MuJoCo's ``(w, x, y, z)``.

Errors (:func:`step_quantities`), env ``i`` at its frame ``g`` of the reference after the step:

- ``anchor_pos_sq``: |robot anchor (pelvis) - reference anchor|^2, world frame (m^2);
- ``anchor_ori_sq``: angle between the robot's and the reference's anchor orientations, squared (rad^2);
- ``body_pos_sq`` / ``body_ori_sq`` / ``body_lin_vel_sq`` / ``body_ang_vel_sq``: over the tracked bodies, the mean of
  the squared error of each body's position relative to its anchor, orientation relative to its anchor, and linear /
  angular velocity, each seen in its own anchor's heading (yaw-only) frame: the robot's against the reference's;
- ``action_rate_sq``: sum of squared action changes; ``limits``: radians beyond the soft joint limits;
- ``fell``: the terminations: anchor height error > ``anchor_z``, |gravity_z(robot anchor) - gravity_z(reference
  anchor)| > ``anchor_ori`` (BeyondMimic's projected-gravity test), an end effector's height error > ``ee_z``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

import numba as nb
import numpy as np

from unilab_envs.core.generated import generated_module
from unilab_envs.core.quat import projected_gravity, rotate_inverse
from unilab_envs.core.reward_terms import RewardTerm, term_assignments
from unilab_envs.core.rng import uniform, uniform_range

ROWS_PER_BLOCK = 32
CLIP_END_STEP = 2**62  # episode_step of a row that reached its clip's end: past any time limit, so it is truncated


class Track(NamedTuple):
    root_q: int
    root_d: int
    joint_q: np.ndarray  # (J,) qpos addresses, action order
    joint_d: np.ndarray  # (J,)
    actuator_ids: np.ndarray  # (J,)
    home: np.ndarray  # (J,)
    soft_low: np.ndarray  # (J,)
    soft_high: np.ndarray  # (J,)
    ref_joint: np.ndarray  # (J,) column of Ref.joint_pos of each action joint
    bodies: np.ndarray  # (Bt,) model ids of the tracked bodies
    ref_bodies: np.ndarray  # (Bt,) their index on Ref's body axis
    ee: np.ndarray  # (E,) end effectors: indices into ``bodies``
    anchor: int  # model id of the anchor body (the pelvis, the free joint's body)
    ref_anchor: int  # its index on Ref's body axis
    com_root: int  # model id of the tree root whose subtree_com cvel is taken at
    future: int  # reference frames ahead in the observation
    anchor_z: float  # termination thresholds
    anchor_ori: float
    ee_z: float


class Ref(NamedTuple):
    joint_pos: np.ndarray  # (F, J)
    joint_vel: np.ndarray
    root_pos: np.ndarray  # (F, 3)
    root_quat: np.ndarray  # (F, 4)
    body_pos: np.ndarray  # (F, B, 3)
    body_quat: np.ndarray  # (F, B, 4)
    body_lin_vel: np.ndarray  # (F, B, 3)
    body_ang_vel: np.ndarray
    offsets: np.ndarray  # (C,)
    lengths: np.ndarray  # (C,)


class Live(NamedTuple):
    qpos: np.ndarray
    qvel: np.ndarray
    xpos: np.ndarray  # (N, nbody, 3)
    xquat: np.ndarray  # (N, nbody, 4)
    cvel: np.ndarray  # (N, nbody, 6)
    subtree_com: np.ndarray  # (N, nbody, 3)


class Episode(NamedTuple):
    clip: np.ndarray  # (N,) int64 the clip each env follows
    frame: np.ndarray  # (N,) int64 its frame in the clip
    last_action: np.ndarray  # (N, J)
    previous_action: np.ndarray  # (N, J)
    is_success: np.ndarray  # (N,) bool: reached the clip's end this step, not terminated
    step_clip: np.ndarray  # (N,) int64: the clip this step's errors are of (kept through a reset)
    tracking_error_cm: np.ndarray  # (N,) mean body position error (anchor-relative), cm
    joint_error: np.ndarray  # (N,) mean |joint angle error| (rad)
    failed_segment: np.ndarray  # (N,) int64: the segment an env failed in this step, -1 if it did not


class Sampling(NamedTuple):
    seg_first: np.ndarray  # (C,) first segment of each clip
    seg_clip: np.ndarray  # (S,) clip of each segment
    seg_start: np.ndarray  # (S,) first start frame of each segment
    seg_count: np.ndarray  # (S,) start frames in it
    seg_frames: int  # frames per segment
    uniform_share: float  # of the sampling weight spread over all start frames alike
    score: np.ndarray  # (S,) decaying count of failures (task state)
    decay: float  # per step


# --- math ------------------------------------------------------------------------------------


@nb.njit(inline="always", cache=True)
def qmul(a0, a1, a2, a3, b0, b1, b2, b3):
    return (a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3, a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2,
            a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1, a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0)


@nb.njit(inline="always", cache=True)
def quat_angle_sq(a0, a1, a2, a3, b0, b1, b2, b3):
    """Squared angle (rad^2) of the rotation between unit quaternions a and b."""
    d = abs(a0 * b0 + a1 * b1 + a2 * b2 + a3 * b3)
    angle = 2.0 * math.acos(min(d, 1.0))
    return angle * angle


@nb.njit(inline="always", cache=True)
def heading(q0, q1, q2, q3):
    """``(cos, sin)`` of the yaw of quaternion q (its x axis projected on the ground)."""
    yaw = math.atan2(2.0 * (q0 * q3 + q1 * q2), 1.0 - 2.0 * (q2 * q2 + q3 * q3))
    return math.cos(yaw), math.sin(yaw), yaw


@nb.njit(inline="always", cache=True)
def unyaw(c, s, x, y, z):
    """World vector seen in the heading frame of yaw (cos c, sin s)."""
    return c * x + s * y, -s * x + c * y, z


@nb.njit(inline="always", cache=True)
def body_velocity(live, i, b, root):
    """World linear velocity of body b's origin and its angular velocity (from ``cvel`` at ``subtree_com[root]``)."""
    wx, wy, wz = live.cvel[i, b, 0], live.cvel[i, b, 1], live.cvel[i, b, 2]
    rx = live.xpos[i, b, 0] - live.subtree_com[i, root, 0]
    ry = live.xpos[i, b, 1] - live.subtree_com[i, root, 1]
    rz = live.xpos[i, b, 2] - live.subtree_com[i, root, 2]
    vx = live.cvel[i, b, 3] + wy * rz - wz * ry
    vy = live.cvel[i, b, 4] + wz * rx - wx * rz
    vz = live.cvel[i, b, 5] + wx * ry - wy * rx
    return vx, vy, vz, wx, wy, wz


@nb.njit(inline="always", cache=True)
def rot6d(out, at, q0, q1, q2, q3):
    """The first two columns of R(q), row by row (``R[:, :2].reshape(6)``, BeyondMimic's 6D) into ``out[at:at+6]``."""
    out[at + 0] = 1.0 - 2.0 * (q2 * q2 + q3 * q3)
    out[at + 1] = 2.0 * (q1 * q2 - q0 * q3)
    out[at + 2] = 2.0 * (q1 * q2 + q0 * q3)
    out[at + 3] = 1.0 - 2.0 * (q1 * q1 + q3 * q3)
    out[at + 4] = 2.0 * (q1 * q3 - q0 * q2)
    out[at + 5] = 2.0 * (q2 * q3 + q0 * q1)


@nb.njit(inline="always", cache=True)
def global_frame(ref, episode, i, ahead):
    """Global reference frame ``ahead`` frames after env i's, held at its clip's last frame."""
    c = episode.clip[i]
    return ref.offsets[c] + min(episode.frame[i] + ahead, ref.lengths[c] - 1)


# --- the step ----------------------------------------------------------------------------------


@nb.njit(inline="always", cache=True)
def step_quantities(i, live, ref, track, episode):
    """Advance env i's frame, then its errors against it (module docstring)."""
    c = episode.clip[i]
    episode.frame[i] = min(episode.frame[i] + 1, ref.lengths[c] - 1)
    g = ref.offsets[c] + episode.frame[i]
    a, ra = track.anchor, track.ref_anchor
    xq, rq = live.xquat, ref.body_quat
    anchor_pos_sq = 0.0
    for d in range(3):
        e = live.xpos[i, a, d] - ref.body_pos[g, ra, d]
        anchor_pos_sq += e * e
    anchor_ori_sq = quat_angle_sq(xq[i, a, 0], xq[i, a, 1], xq[i, a, 2], xq[i, a, 3],
                                  rq[g, ra, 0], rq[g, ra, 1], rq[g, ra, 2], rq[g, ra, 3])
    c_r, s_r, yaw_r = heading(xq[i, a, 0], xq[i, a, 1], xq[i, a, 2], xq[i, a, 3])
    c_m, s_m, yaw_m = heading(rq[g, ra, 0], rq[g, ra, 1], rq[g, ra, 2], rq[g, ra, 3])
    hr0, hr3 = math.cos(0.5 * yaw_r), -math.sin(0.5 * yaw_r)  # inverse heading quaternions
    hm0, hm3 = math.cos(0.5 * yaw_m), -math.sin(0.5 * yaw_m)
    pos_sq = ori_sq = lin_sq = ang_sq = 0.0
    pos_abs = 0.0
    fell = abs(live.xpos[i, a, 2] - ref.body_pos[g, ra, 2]) > track.anchor_z
    nb_ = track.bodies.shape[0]
    for k in range(nb_):
        b, rb = track.bodies[k], track.ref_bodies[k]
        px, py, pz = unyaw(c_r, s_r, live.xpos[i, b, 0] - live.xpos[i, a, 0], live.xpos[i, b, 1] - live.xpos[i, a, 1],
                           live.xpos[i, b, 2] - live.xpos[i, a, 2])
        mx, my, mz = unyaw(c_m, s_m, ref.body_pos[g, rb, 0] - ref.body_pos[g, ra, 0],
                           ref.body_pos[g, rb, 1] - ref.body_pos[g, ra, 1], ref.body_pos[g, rb, 2] - ref.body_pos[g, ra, 2])
        e = (px - mx) ** 2 + (py - my) ** 2 + (pz - mz) ** 2
        pos_sq += e
        pos_abs += math.sqrt(e)
        r0, r1, r2, r3 = qmul(hr0, 0.0, 0.0, hr3, xq[i, b, 0], xq[i, b, 1], xq[i, b, 2], xq[i, b, 3])
        m0, m1, m2, m3 = qmul(hm0, 0.0, 0.0, hm3, rq[g, rb, 0], rq[g, rb, 1], rq[g, rb, 2], rq[g, rb, 3])
        ori_sq += quat_angle_sq(r0, r1, r2, r3, m0, m1, m2, m3)
        vx, vy, vz, wx, wy, wz = body_velocity(live, i, b, track.com_root)
        vx, vy, vz = unyaw(c_r, s_r, vx, vy, vz)
        wx, wy, wz = unyaw(c_r, s_r, wx, wy, wz)
        lv, av = ref.body_lin_vel, ref.body_ang_vel
        ux, uy, uz = unyaw(c_m, s_m, lv[g, rb, 0], lv[g, rb, 1], lv[g, rb, 2])
        ox, oy, oz = unyaw(c_m, s_m, av[g, rb, 0], av[g, rb, 1], av[g, rb, 2])
        lin_sq += (vx - ux) ** 2 + (vy - uy) ** 2 + (vz - uz) ** 2
        ang_sq += (wx - ox) ** 2 + (wy - oy) ** 2 + (wz - oz) ** 2
    for k in range(track.ee.shape[0]):
        b, rb = track.bodies[track.ee[k]], track.ref_bodies[track.ee[k]]
        if abs(live.xpos[i, b, 2] - ref.body_pos[g, rb, 2]) > track.ee_z:
            fell = True
    rgx, rgy, rgz = projected_gravity((xq[i, a, 0], xq[i, a, 1], xq[i, a, 2], xq[i, a, 3]))
    mgx, mgy, mgz = projected_gravity((rq[g, ra, 0], rq[g, ra, 1], rq[g, ra, 2], rq[g, ra, 3]))
    if abs(rgz - mgz) > track.anchor_ori:
        fell = True
    action_rate_sq = limits = joint_abs = 0.0
    for j in range(track.joint_q.shape[0]):
        da = episode.last_action[i, j] - episode.previous_action[i, j]
        action_rate_sq += da * da
        q = live.qpos[i, track.joint_q[j]]
        limits += max(0.0, q - track.soft_high[j]) + max(0.0, track.soft_low[j] - q)
        joint_abs += abs(q - ref.joint_pos[g, track.ref_joint[j]])
    inv = 1.0 / nb_
    episode.tracking_error_cm[i] = 100.0 * pos_abs * inv
    episode.joint_error[i] = joint_abs / track.joint_q.shape[0]
    return (anchor_pos_sq, anchor_ori_sq, pos_sq * inv, ori_sq * inv, lin_sq * inv, ang_sq * inv, action_rate_sq,
            limits, fell)


@nb.njit(inline="always", cache=True)
def finish_env(i, terminated, episode_step, ref, episode, sampling, fell):
    """Termination, the clip's end (truncation and success), the failure's segment."""
    c = episode.clip[i]
    at_end = episode.frame[i] >= ref.lengths[c] - 1
    terminated[i] = fell
    episode.is_success[i] = at_end and not fell
    episode.step_clip[i] = c
    if at_end and not fell:
        episode_step[i] = CLIP_END_STEP
    if fell:
        start = min(episode.frame[i] - 1, ref.lengths[c] - 2)
        episode.failed_segment[i] = sampling.seg_first[c] + max(start, 0) // sampling.seg_frames
    else:
        episode.failed_segment[i] = -1


# --- observations ------------------------------------------------------------------------------


@nb.njit(inline="always", cache=True)
def write_observations(i, obs, privileged_obs, live, ref, track, episode):
    """Policy: ref_joint_pos, ref_joint_vel (future frames x J), ref_phase, ref_anchor_ori, gyro, gravity, joint_pos,
    joint_vel, last_action. Critic: linvel, height, anchor_pos_error, body_pos, body_ori (docs/tasks.md)."""
    o = obs[i]
    J = track.joint_q.shape[0]
    at = 0
    for f in range(track.future):
        g = global_frame(ref, episode, i, f + 1)
        for j in range(J):
            o[at + f * J + j] = ref.joint_pos[g, track.ref_joint[j]] - track.home[j]
            o[at + (track.future + f) * J + j] = ref.joint_vel[g, track.ref_joint[j]]
    at += 2 * track.future * J
    c = episode.clip[i]
    o[at] = episode.frame[i] / max(ref.lengths[c] - 1, 1)
    at += 1
    g = global_frame(ref, episode, i, 1)
    a, ra = track.anchor, track.ref_anchor
    xq, rq = live.xquat, ref.body_quat
    q0, q1, q2, q3 = qmul(xq[i, a, 0], -xq[i, a, 1], -xq[i, a, 2], -xq[i, a, 3], rq[g, ra, 0], rq[g, ra, 1], rq[g, ra, 2],
                          rq[g, ra, 3])
    rot6d(o, at, q0, q1, q2, q3)
    at += 6
    rq_, rd = track.root_q, track.root_d
    q = (live.qpos[i, rq_ + 3], live.qpos[i, rq_ + 4], live.qpos[i, rq_ + 5], live.qpos[i, rq_ + 6])
    o[at], o[at + 1], o[at + 2] = live.qvel[i, rd + 3], live.qvel[i, rd + 4], live.qvel[i, rd + 5]
    o[at + 3], o[at + 4], o[at + 5] = projected_gravity(q)
    at += 6
    for j in range(J):
        o[at + j] = live.qpos[i, track.joint_q[j]] - track.home[j]
        o[at + J + j] = live.qvel[i, track.joint_d[j]]
        o[at + 2 * J + j] = episode.last_action[i, j]
    p = privileged_obs[i]
    p[0], p[1], p[2] = rotate_inverse(q, live.qvel[i, rd], live.qvel[i, rd + 1], live.qvel[i, rd + 2])
    p[3] = live.qpos[i, rq_ + 2]
    g = global_frame(ref, episode, i, 0)
    aq = (xq[i, a, 0], xq[i, a, 1], xq[i, a, 2], xq[i, a, 3])
    p[4], p[5], p[6] = rotate_inverse(aq, ref.body_pos[g, ra, 0] - live.xpos[i, a, 0],
                                      ref.body_pos[g, ra, 1] - live.xpos[i, a, 1], ref.body_pos[g, ra, 2] - live.xpos[i, a, 2])
    nb_ = track.bodies.shape[0]
    for k in range(nb_):
        b = track.bodies[k]
        p[7 + 3 * k], p[8 + 3 * k], p[9 + 3 * k] = rotate_inverse(
            aq, live.xpos[i, b, 0] - live.xpos[i, a, 0], live.xpos[i, b, 1] - live.xpos[i, a, 1],
            live.xpos[i, b, 2] - live.xpos[i, a, 2])
        r0, r1, r2, r3 = qmul(aq[0], -aq[1], -aq[2], -aq[3], xq[i, b, 0], xq[i, b, 1], xq[i, b, 2], xq[i, b, 3])
        rot6d(p, 7 + 3 * nb_ + 6 * k, r0, r1, r2, r3)


@nb.njit(cache=True, _nrt=False)
def observe_block(lo, hi, ids, obs, privileged_obs, live, ref, track, episode):
    for k in range(lo, hi):
        write_observations(ids[k], obs, privileged_obs, live, ref, track, episode)


@nb.njit(parallel=True, cache=True, _nrt=False)
def observe(ids, obs, privileged_obs, live, ref, track, episode):
    """Observations of rows ``ids`` (after a reset)."""
    n = ids.shape[0]
    for b in nb.prange((n + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK):
        observe_block(b * ROWS_PER_BLOCK, min(n, (b + 1) * ROWS_PER_BLOCK), ids, obs, privileged_obs, live, ref, track,
                      episode)


# --- actions, failures, reset ------------------------------------------------------------------


@nb.njit(parallel=True, cache=True, _nrt=False)
def apply_actions(actions, ctrl, episode, track, action_scale):
    """``ctrl = home + action_scale * clip(action, -1, 1)``; shifts the action history.

    The history arrays are taken out of ``episode`` before the ``prange``: Numba 0.68 drops stores made through a
    named tuple's array field inside a parallel loop (``episode.last_action[i, j] = a`` left it all zeros), while
    stores through a local name of the same array land (tests/envs/test_parallel_kernel_stores.py)."""
    last, previous = episode.last_action, episode.previous_action
    for i in nb.prange(actions.shape[0]):
        for j in range(actions.shape[1]):
            a = min(max(actions[i, j], -1.0), 1.0)
            previous[i, j] = last[i, j]
            last[i, j] = a
            ctrl[i, track.actuator_ids[j]] = track.home[j] + action_scale * a


@nb.njit(cache=True)
def record_failures(episode, sampling):
    """Decay every segment's failure score one step, add this step's failures (serial: no races)."""
    for s in range(sampling.score.shape[0]):
        sampling.score[s] *= sampling.decay
    for i in range(episode.failed_segment.shape[0]):
        s = episode.failed_segment[i]
        if s >= 0:
            sampling.score[s] += 1.0


@nb.njit(cache=True)
def segment_probabilities(sampling):
    """``(S,)`` probability of each segment: ``uniform_share`` by its start frames, the rest by its failure score."""
    S = sampling.score.shape[0]
    total_frames = 0.0
    total_score = 0.0
    for s in range(S):
        total_frames += sampling.seg_count[s]
        total_score += sampling.score[s]
    u = sampling.uniform_share if total_score > 0.0 else 1.0
    p = np.empty(S)
    for s in range(S):
        p[s] = u * sampling.seg_count[s] / total_frames + ((1.0 - u) * sampling.score[s] / total_score if total_score > 0.0 else 0.0)
    return p


@nb.njit(cache=True)
def reset_envs(ids, rng, qpos, qvel, ref, track, episode, sampling, forced_clip, forced_frame, joint_noise):
    """Draw each row's segment (:func:`segment_probabilities`) and a start frame in it (or take ``forced_*`` >= 0),
    then put the robot on that reference frame: root pose and velocity, joints (plus uniform ``joint_noise``)."""
    cdf = np.cumsum(segment_probabilities(sampling))
    for i in ids:
        if forced_clip >= 0:
            c, f = forced_clip, forced_frame
        else:
            u = uniform(rng, i) * cdf[-1]
            s = min(np.searchsorted(cdf, u, side="right"), cdf.shape[0] - 1)
            c = sampling.seg_clip[s]
            f = sampling.seg_start[s] + min(int(uniform(rng, i) * sampling.seg_count[s]), sampling.seg_count[s] - 1)
        episode.clip[i], episode.frame[i] = c, f
        g = ref.offsets[c] + f
        rq, rd = track.root_q, track.root_d
        for d in range(3):
            qpos[i, rq + d] = ref.root_pos[g, d]
        for d in range(4):
            qpos[i, rq + 3 + d] = ref.root_quat[g, d]
        q = (ref.root_quat[g, 0], ref.root_quat[g, 1], ref.root_quat[g, 2], ref.root_quat[g, 3])
        ra = track.ref_anchor
        for d in range(3):
            qvel[i, rd + d] = ref.body_lin_vel[g, ra, d]  # a free joint's linear velocity: world frame
        qvel[i, rd + 3], qvel[i, rd + 4], qvel[i, rd + 5] = rotate_inverse(  # its angular velocity: body frame
            q, ref.body_ang_vel[g, ra, 0], ref.body_ang_vel[g, ra, 1], ref.body_ang_vel[g, ra, 2])
        for j in range(track.joint_q.shape[0]):
            value = ref.joint_pos[g, track.ref_joint[j]]
            if joint_noise > 0.0:
                value += uniform_range(rng, i, -joint_noise, joint_noise)
            qpos[i, track.joint_q[j]] = value
            qvel[i, track.joint_d[j]] = ref.joint_vel[g, track.ref_joint[j]]
            episode.last_action[i, j] = 0.0
            episode.previous_action[i, j] = 0.0


# --- the generated step kernel -------------------------------------------------------------------

QUANTITIES = ("i", "live", "ref", "track", "episode", "anchor_pos_sq", "anchor_ori_sq", "body_pos_sq", "body_ori_sq",
              "body_lin_vel_sq", "body_ang_vel_sq", "action_rate_sq", "limits", "fell")
"""What a G1Track reward term may read, by argument name (besides ``weight`` and its params): ``i`` the env's row,
the records ``live ref track episode``, and the errors of :func:`step_quantities` (module docstring)."""

_TEMPLATE = '''"""Generated by unilab_envs.tasks.g1_track_kernels for G1Track's reward terms: {names}. Do not edit."""

import numba as nb

from unilab_envs.tasks.g1_track_kernels import ROWS_PER_BLOCK, finish_env, step_quantities, write_observations


@nb.njit(cache=True, _nrt=False)
def step_block(lo, hi, obs, privileged_obs, reward_terms, reward, terminated, episode_step, live, ref, track, episode,
               sampling, weights, term_params):
    for i in range(lo, hi):
        (anchor_pos_sq, anchor_ori_sq, body_pos_sq, body_ori_sq, body_lin_vel_sq, body_ang_vel_sq, action_rate_sq, limits,
         fell) = step_quantities(i, live, ref, track, episode)
{terms}
        total = 0.0
{sums}
        reward[i] = total
        finish_env(i, terminated, episode_step, ref, episode, sampling, fell)
        write_observations(i, obs, privileged_obs, live, ref, track, episode)


@nb.njit(parallel=True, cache=True, _nrt=False)
def compute(obs, privileged_obs, reward_terms, reward, terminated, episode_step, live, ref, track, episode, sampling,
            weights, term_params):
    n = obs.shape[0]
    for b in nb.prange((n + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK):
        step_block(b * ROWS_PER_BLOCK, min(n, (b + 1) * ROWS_PER_BLOCK), obs, privileged_obs, reward_terms, reward,
                   terminated, episode_step, live, ref, track, episode, sampling, weights, term_params)
'''


@lru_cache(maxsize=None)
def track_kernel(terms: tuple[RewardTerm, ...], active: tuple[bool, ...]) -> ModuleType:
    """The generated module whose ``compute`` is the fused step: per env the errors, each active term inlined into
    ``reward_terms[i, k]`` (a term of weight 0 is never evaluated), their sum, the terminations, the observations."""
    lines = [f"        {line}" for line in term_assignments(terms, active, QUANTITIES)]
    sums = [f"        total += t{k}" for k, on in enumerate(active) if on]
    cols = [f"        reward_terms[i, {k}] = t{k}" for k in range(len(terms))]
    source = _TEMPLATE.format(names=", ".join(t.name for t in terms), terms="\n".join(lines + cols),
                              sums="\n".join(sums) or "        pass")
    bindings = {f"term_{k}": t.func for k, (t, on) in enumerate(zip(terms, active)) if on}
    depends = (Path(__file__), Path(__file__).parents[1] / "core" / "quat.py", Path(__file__).parents[1] / "core" / "rng.py")
    return generated_module("g1_track_step", source, bindings, depends=depends)
