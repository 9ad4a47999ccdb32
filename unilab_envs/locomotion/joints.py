"""Joint terms: torques, action rate, pose and stand-still deviation, soft-limit violation."""

from __future__ import annotations

import numba as nb



@nb.njit(inline="always", cache=True)
def limit_violation(q, low, high):
    """How far ``q`` lies outside ``[low, high]`` (0 inside)."""
    return max(0.0, q - high) + max(0.0, low - q)


@nb.njit(inline="always", cache=True)
def joint_sums(i, physics, robot, legs):
    """One pass over env ``i``'s joints: ``(torque^2, action rate^2, weighted pose^2, |deviation|, limit violation)`` sums.

    Deviations are from ``robot.home``.
    """
    torque_sq = 0.0
    action_rate = 0.0
    pose = 0.0
    deviation = 0.0
    limits = 0.0
    num_joints = robot.joint_q.shape[0]
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
    return torque_sq, action_rate, pose, deviation, limits
