"""The pre-declaration observation writers, kept only as ``benchmarks/reward_terms_ratio.py``'s reference.

Before a legged task's observation groups were declared (:mod:`unilab_envs.locomotion.groups`)
and their writes generated, the groups were written at the offsets of an ``ObsLayout`` record:
the joint slots in the joint-sum loop, the rest by ``write_base_obs`` and ``write_height_scan``.
Below are verbatim copies of ``ObsLayout``, ``obs_layout``, ``joint_slots``, ``_write3`` and
``write_base_obs`` (``unilab_envs/locomotion/observation.py``), ``limit_violation`` and
``joint_sums`` (``locomotion/joints.py``) and ``write_height_scan``
(``locomotion/ground.py``) at commit 1d85dd9. Nothing in the package uses this module: do not
extend it, and delete it with the benchmark.
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb

from unilab_envs.locomotion.ground import heading
from unilab_envs.terrain.lookup import scan_heights

POLICY_GROUPS = ("linvel", "gyro", "gravity", "joint_pos", "joint_vel", "last_action", "command", "phase")
PRIVILEGED_GROUPS = ("linvel", "gyro", "gravity", "height", "foot_contact", "foot_air_time", "foot_height", "actuator_force")
OPTIONAL_GROUPS = ("height_scan",)  # in the policy, the critic, or both


class ObsLayout(NamedTuple):
    """Offsets of the groups in the policy (``obs_*``) and privileged (``priv_*``, -1 when absent) observations."""

    obs_linvel: int
    obs_gyro: int
    obs_gravity: int
    obs_joint_pos: int
    obs_joint_vel: int
    obs_last_action: int
    obs_command: int
    obs_phase: int
    priv_linvel: int
    priv_gyro: int
    priv_gravity: int
    priv_height: int
    priv_foot_contact: int
    priv_foot_air_time: int
    priv_foot_height: int
    priv_actuator_force: int
    obs_height_scan: int = -1
    priv_height_scan: int = -1


def obs_layout(policy: dict[str, slice], privileged: dict[str, slice], num_joints: int, num_feet: int,
               num_scan_points: int = 0) -> ObsLayout:
    """The :class:`ObsLayout` of a task's group dicts; raises ``ValueError`` on a missing, unknown or mis-sized group."""
    sizes = {"linvel": 3, "gyro": 3, "gravity": 3, "joint_pos": num_joints, "joint_vel": num_joints,
             "last_action": num_joints, "command": 3, "phase": 2, "height": 1, "foot_contact": num_feet,
             "foot_air_time": num_feet, "foot_height": num_feet, "actuator_force": num_joints,
             "height_scan": num_scan_points}  # fmt: skip
    missing = [g for g in POLICY_GROUPS if g not in policy]
    if missing:
        raise ValueError(f"the policy observation lacks groups {missing}; a locomotion task has all of {list(POLICY_GROUPS)}")
    for where, groups, known in (("policy", policy, POLICY_GROUPS + OPTIONAL_GROUPS),
                                 ("privileged", privileged, PRIVILEGED_GROUPS + OPTIONAL_GROUPS)):
        for name, s in groups.items():
            if name not in known:
                raise ValueError(f"unknown {where} observation group {name!r}; the locomotion kernels write {list(known)}")
            if s.stop - s.start != sizes[name]:
                raise ValueError(f"{where} observation group {name!r} spans {s.stop - s.start} floats, it holds {sizes[name]}")
    offsets = [policy[g].start for g in POLICY_GROUPS] + [privileged[g].start if g in privileged else -1 for g in PRIVILEGED_GROUPS]
    scan = [groups["height_scan"].start if "height_scan" in groups else -1 for groups in (policy, privileged)]
    return ObsLayout(*offsets, *scan)


@nb.njit(inline="always", cache=True)
def joint_slots(i, obs, privileged_obs, layout, num_joints):
    """Env ``i``'s ``(joint_pos, joint_vel, last_action, actuator_force)`` observation slots, as 1-D views.

    The force view is empty when the critic does not see the forces. Writing through
    views indexed from 0 (not at runtime offsets) lets the compiler keep the joint loop tight.
    """
    force_at = layout.priv_actuator_force
    force_end = force_at + num_joints if force_at >= 0 else 0
    return (obs[i, layout.obs_joint_pos : layout.obs_joint_pos + num_joints],
            obs[i, layout.obs_joint_vel : layout.obs_joint_vel + num_joints],
            obs[i, layout.obs_last_action : layout.obs_last_action + num_joints],
            privileged_obs[i, max(force_at, 0) : force_end])  # fmt: skip


@nb.njit(inline="always", cache=True)
def _write3(out, i, at, x, y, z):
    out[i, at], out[i, at + 1], out[i, at + 2] = x, y, z


@nb.njit(inline="always", cache=True)
def write_base_obs(i, obs, privileged_obs, layout, base, command, sin_phase, cos_phase, legs):
    """Everything but the joint slots; ``base`` is :func:`~unilab_envs.locomotion.base.base_state`'s tuple."""
    vx, vy, vz, wx, wy, wz, gx, gy, gz, height = base
    _write3(obs, i, layout.obs_linvel, vx, vy, vz)
    _write3(obs, i, layout.obs_gyro, wx, wy, wz)
    _write3(obs, i, layout.obs_gravity, gx, gy, gz)
    _write3(obs, i, layout.obs_command, command[i, 0], command[i, 1], command[i, 2])
    obs[i, layout.obs_phase], obs[i, layout.obs_phase + 1] = sin_phase, cos_phase
    if layout.priv_linvel >= 0:
        _write3(privileged_obs, i, layout.priv_linvel, vx, vy, vz)
    if layout.priv_gyro >= 0:
        _write3(privileged_obs, i, layout.priv_gyro, wx, wy, wz)
    if layout.priv_gravity >= 0:
        _write3(privileged_obs, i, layout.priv_gravity, gx, gy, gz)
    if layout.priv_height >= 0:
        privileged_obs[i, layout.priv_height] = height
    for f in range(legs.contact.shape[1]):
        if layout.priv_foot_contact >= 0:
            privileged_obs[i, layout.priv_foot_contact + f] = 1.0 if legs.contact[i, f] else 0.0
        if layout.priv_foot_air_time >= 0:
            privileged_obs[i, layout.priv_foot_air_time + f] = legs.air_time[i, f]
        if layout.priv_foot_height >= 0:
            privileged_obs[i, layout.priv_foot_height + f] = legs.foot_height[i, f]


@nb.njit(inline="always", cache=True)
def limit_violation(q, low, high):
    """How far ``q`` lies outside ``[low, high]`` (0 inside)."""
    return max(0.0, q - high) + max(0.0, low - q)


@nb.njit(inline="always", cache=True)
def joint_sums(i, obs, privileged_obs, layout, physics, robot, legs):
    """One pass over env ``i``'s joints: ``(torque^2, action rate^2, weighted pose^2, |deviation|, limit violation)`` sums.

    Deviations are from ``robot.home``; the same pass fills the joint slots of the observations.
    """
    torque_sq = 0.0
    action_rate = 0.0
    pose = 0.0
    deviation = 0.0
    limits = 0.0
    num_joints = robot.joint_q.shape[0]
    joint_pos, joint_vel, last_action, force = joint_slots(i, obs, privileged_obs, layout, num_joints)
    has_force = force.shape[0] > 0
    for j in range(num_joints):
        qj = physics.qpos[i, robot.joint_q[j]]
        dq = qj - robot.home[j]
        tau = physics.actuator_force[i, robot.actuator_ids[j]]
        a = legs.last_action[i, j]
        da = a - legs.previous_action[i, j]
        torque_sq += tau * tau
        action_rate += da * da
        pose += robot.pose_weights[j] * dq * dq
        deviation += abs(dq)
        limits += limit_violation(qj, robot.soft_low[j], robot.soft_high[j])
        joint_pos[j] = dq
        joint_vel[j] = physics.qvel[i, robot.joint_d[j]]
        last_action[j] = a
        if has_force:
            force[j] = tau
    return torque_sq, action_rate, pose, deviation, limits


@nb.njit(inline="always", cache=True)
def write_height_scan(i, obs, privileged_obs, layout, physics, robot, ground):
    """Env ``i``'s height scan (base z minus the ground at each scan point) into its observation groups.

    Written into the critic's ``height_scan`` group and copied into the policy's when the
    policy has one; nothing happens when neither has it.
    """
    at_obs, at_priv = layout.obs_height_scan, layout.priv_height_scan
    if at_obs < 0 and at_priv < 0:
        return
    rq = robot.root_q
    qpos = physics.qpos
    c, s = heading(qpos[i, rq + 3], qpos[i, rq + 4], qpos[i, rq + 5], qpos[i, rq + 6])
    n = ground.scan_points.shape[0]
    if at_priv >= 0:
        out = privileged_obs[i, at_priv : at_priv + n]
    else:
        out = obs[i, at_obs : at_obs + n]
    scan_heights(out, ground, qpos[i, rq], qpos[i, rq + 1], qpos[i, rq + 2], c, s, ground.scan_points)
    if at_priv >= 0 and at_obs >= 0:
        for k in range(n):
            obs[i, at_obs + k] = out[k]


