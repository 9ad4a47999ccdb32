"""Joint terms: torques, action rate, pose and stand-still deviation, soft-limit violation."""

from __future__ import annotations

import numba as nb

from unilab_envs.locomotion.observation import joint_slots


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
