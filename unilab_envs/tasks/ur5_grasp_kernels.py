"""Numba kernels of ``UniLab/UR5Grasp-v0``: the end-effector controller, the per-env quantities
of the fused reward / termination / observation pass (generated from the task's reward terms and
observation groups: :mod:`~unilab_envs.tasks.arm_reward_kernel`; the groups' writers are in
:mod:`~unilab_envs.tasks.arm_groups`) and the reset randomization.

Every kernel reads the live ``(N, ...)`` batch arrays row by row; model indices come
packed in one ``int64`` array ``ix`` (the ``IX_*`` slots below) so the signatures stay
readable. Math conventions: MuJoCo quaternions ``(w, x, y, z)``, world frame, SI units.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from unilab_envs.core.rng import uniform_range

NUM_JOINTS = 6
ACTION_SIZE = 4  # dx, dy, dz of the pinch point, gripper command
#: slots of the packed index array ``ix``
IX_PINCH, IX_LEFT_PAD, IX_RIGHT_PAD, IX_GRIPPER, IX_CUBE_Q, IX_CUBE_D, IX_SENSOR_LEFT, IX_SENSOR_RIGHT, IX_CUBE_BODY, IX_CUBE_GEOM = range(10)
#: slots of the packed float parameters ``fp``
(FP_ACTION_SCALE, FP_MAX_LEAD, FP_GRIP_LOW, FP_GRIP_HIGH, FP_DAMPING, FP_MAX_JOINT_STEP, FP_HALF, FP_TABLE_Z,
 FP_LIFT_TARGET, FP_SUCCESS_HEIGHT, FP_REACH_STD, FP_HOLD_STEPS, FP_TABLE_X0, FP_TABLE_X1, FP_TABLE_Y0, FP_TABLE_Y1) = range(16)  # fmt: skip


# --- small math ------------------------------------------------------------------


@nb.njit(inline="always", cache=True)
def pinch_jacobian(i, jac, xanchor, xaxis, site_xpos, joint_ids, site):
    """Fill ``jac`` (6, 6): rows 0-2 translational, 3-5 rotational Jacobian of the pinch
    point over the six arm hinges (column j = ``axis_j x (p - anchor_j)``, ``axis_j``)."""
    for j in range(NUM_JOINTS):
        a = joint_ids[j]
        ux, uy, uz = xaxis[i, a, 0], xaxis[i, a, 1], xaxis[i, a, 2]
        rx = site_xpos[i, site, 0] - xanchor[i, a, 0]
        ry = site_xpos[i, site, 1] - xanchor[i, a, 1]
        rz = site_xpos[i, site, 2] - xanchor[i, a, 2]
        jac[0, j] = uy * rz - uz * ry
        jac[1, j] = uz * rx - ux * rz
        jac[2, j] = ux * ry - uy * rx
        jac[3, j] = ux
        jac[4, j] = uy
        jac[5, j] = uz


@nb.njit(inline="always", cache=True)
def damped_least_squares(jac, error, damping, out):
    """``out = J^T (J J^T + damping^2 I)^-1 error`` for a (6, 6) ``J`` (Cholesky, in place)."""
    a = np.empty((6, 6))
    for r in range(6):
        for c in range(6):
            s = 0.0
            for k in range(6):
                s += jac[r, k] * jac[c, k]
            a[r, c] = s + (damping * damping if r == c else 0.0)
    for c in range(6):  # Cholesky: a = L L^T, L in the lower triangle
        s = a[c, c]
        for k in range(c):
            s -= a[c, k] * a[c, k]
        a[c, c] = math.sqrt(s)
        for r in range(c + 1, 6):
            s = a[r, c]
            for k in range(c):
                s -= a[r, k] * a[c, k]
            a[r, c] = s / a[c, c]
    y = np.empty(6)
    for r in range(6):  # L y = error
        s = error[r]
        for k in range(r):
            s -= a[r, k] * y[k]
        y[r] = s / a[r, r]
    for r in range(5, -1, -1):  # L^T y = y
        s = y[r]
        for k in range(r + 1, 6):
            s -= a[k, r] * y[k]
        y[r] = s / a[r, r]
    for j in range(6):
        s = 0.0
        for r in range(6):
            s += jac[r, j] * y[r]
        out[j] = s


@nb.njit(inline="always", cache=True)
def orientation_error(i, site_xmat, site, goal):
    """Rotation (world axis-angle, small-angle) from the pinch frame to ``goal`` (3, 3):
    ``0.5 * sum_k R[:, k] x G[:, k]``."""
    ex = ey = ez = 0.0
    for k in range(3):
        rx, ry, rz = site_xmat[i, site, 0 * 3 + k], site_xmat[i, site, 1 * 3 + k], site_xmat[i, site, 2 * 3 + k]
        gx, gy, gz = goal[0, k], goal[1, k], goal[2, k]
        ex += ry * gz - rz * gy
        ey += rz * gx - rx * gz
        ez += rx * gy - ry * gx
    return 0.5 * ex, 0.5 * ey, 0.5 * ez


@nb.njit(inline="always", cache=True)
def quat_conj_mul(a, b0, b1, b2, b3):
    """``conj(a) * b`` with the sign chosen so that w >= 0."""
    w, x, y, z = a[0], -a[1], -a[2], -a[3]
    rw = w * b0 - x * b1 - y * b2 - z * b3
    rx = w * b1 + x * b0 + y * b3 - z * b2
    ry = w * b2 - x * b3 + y * b0 + z * b1
    rz = w * b3 + x * b2 - y * b1 + z * b0
    if rw < 0.0:
        return -rw, -rx, -ry, -rz
    return rw, rx, ry, rz


# --- actions -> controls -----------------------------------------------------------


@nb.njit(parallel=True, cache=True)
def apply_actions(
    actions, ctrl, qpos, site_xpos, site_xmat, xanchor, xaxis, ee_target, last_action, previous_action,
    arm_q, arm_act, joint_ids, low, high, work_low, work_high, goal_rot, ix, fp,
):  # fmt: skip
    """Move each env's pinch target by ``action_scale * a[:3]`` (clipped to the workspace and
    to ``max_lead`` from the pinch point), turn the pose error (target position, ``goal_rot``
    orientation) into arm joint targets by one damped-least-squares step from the measured
    joint angles, and map ``a[3]`` in [-1, 1] to the gripper's ctrl range (open .. closed)."""
    site = ix[IX_PINCH]
    for i in nb.prange(actions.shape[0]):
        for k in range(ACTION_SIZE):
            previous_action[i, k] = last_action[i, k]
            last_action[i, k] = min(max(actions[i, k], -1.0), 1.0)
        error = np.empty(6)
        for d in range(3):
            t = min(max(ee_target[i, d] + fp[FP_ACTION_SCALE] * last_action[i, d], work_low[d]), work_high[d])
            p = site_xpos[i, site, d]
            t = min(max(t, p - fp[FP_MAX_LEAD]), p + fp[FP_MAX_LEAD])
            ee_target[i, d] = t
            error[d] = t - p
        error[3], error[4], error[5] = orientation_error(i, site_xmat, site, goal_rot)
        jac = np.empty((6, 6))
        pinch_jacobian(i, jac, xanchor, xaxis, site_xpos, joint_ids, site)
        step = np.empty(6)
        damped_least_squares(jac, error, fp[FP_DAMPING], step)
        for j in range(NUM_JOINTS):
            dq = min(max(step[j], -fp[FP_MAX_JOINT_STEP]), fp[FP_MAX_JOINT_STEP])
            ctrl[i, arm_act[j]] = min(max(qpos[i, arm_q[j]] + dq, low[j]), high[j])
        closing = 0.5 * (last_action[i, 3] + 1.0)
        ctrl[i, ix[IX_GRIPPER]] = fp[FP_GRIP_LOW] + closing * (fp[FP_GRIP_HIGH] - fp[FP_GRIP_LOW])


# --- the step's quantities ----------------------------------------------------------


@nb.njit(inline="always", cache=True)
def grasp_quantities(i, qpos, site_xpos, sensordata, hold_steps, last_action, previous_action, ix, fp):
    """Env ``i``'s ``(dist, touching, grasped, height, holding, held_before, held, succeeded, action_rate_sq,
    off_table)`` after the step (the step kernel's quantities, :mod:`~unilab_envs.tasks.arm_reward_kernel`):
    ``held_before`` is ``hold_steps[i]``, ``held`` the hold counted with this step (the step kernel stores it
    in ``hold_steps[i]``; ``observe`` does not), ``succeeded`` whether ``held`` reaches the hold time."""
    site, cq = ix[IX_PINCH], ix[IX_CUBE_Q]
    dist_sq = 0.0
    for d in range(3):
        e = qpos[i, cq + d] - site_xpos[i, site, d]
        dist_sq += e * e
    # both pads touch the cube and the pinch point lies within half an edge of its centre: fingertips
    # pressed on the cube's top face touch it with both pads too, and must not pay as a grasp
    touching = sensordata[i, ix[IX_SENSOR_LEFT]] > 0 and sensordata[i, ix[IX_SENSOR_RIGHT]] > 0
    grasped = touching and dist_sq <= fp[FP_HALF] * fp[FP_HALF]
    height = qpos[i, cq + 2] - fp[FP_TABLE_Z] - fp[FP_HALF]  # the cube's bottom face above the table
    holding = grasped and height >= fp[FP_SUCCESS_HEIGHT]
    held_before = hold_steps[i]
    held = held_before + 1 if holding else 0
    done = held >= fp[FP_HOLD_STEPS]
    action_rate = 0.0
    for k in range(ACTION_SIZE):
        da = last_action[i, k] - previous_action[i, k]
        action_rate += da * da
    x, y = qpos[i, cq], qpos[i, cq + 1]
    off_table = (height < -0.05 or x < fp[FP_TABLE_X0] or x > fp[FP_TABLE_X1] or y < fp[FP_TABLE_Y0] or y > fp[FP_TABLE_Y1])
    return math.sqrt(dist_sq), touching, grasped, height, holding, held_before, held, done, action_rate, off_table


# --- reset -------------------------------------------------------------------------


@nb.njit(cache=True)
def reset_envs(
    ids, rng, qpos, ctrl, arm_q, arm_act, home, low, high, joint_range, last_action, previous_action, hold_steps,
    draws, cube_x, cube_y, cube_yaw, cube_mass, cube_friction, ix, fp,
):  # fmt: skip
    """Home pose plus uniform joint noise (targets at that pose, gripper open, zero last
    action); the cube on the table at a random ``(x, y, yaw)``; ``draws[i]`` gets the
    env's cube mass and sliding friction (the caller writes them into the model)."""
    cq = ix[IX_CUBE_Q]
    for i in ids:
        for j in range(NUM_JOINTS):
            value = min(max(home[j] + uniform_range(rng, i, -joint_range, joint_range), low[j]), high[j])
            qpos[i, arm_q[j]] = value
            ctrl[i, arm_act[j]] = value
        ctrl[i, ix[IX_GRIPPER]] = fp[FP_GRIP_LOW]
        for k in range(ACTION_SIZE):
            last_action[i, k] = 0.0
            previous_action[i, k] = 0.0
        last_action[i, 3] = -1.0  # the gripper starts open: the command that holds it open
        previous_action[i, 3] = -1.0
        hold_steps[i] = 0
        qpos[i, cq] = uniform_range(rng, i, cube_x[0], cube_x[1])
        qpos[i, cq + 1] = uniform_range(rng, i, cube_y[0], cube_y[1])
        qpos[i, cq + 2] = fp[FP_TABLE_Z] + fp[FP_HALF]
        yaw = uniform_range(rng, i, cube_yaw[0], cube_yaw[1])
        qpos[i, cq + 3] = math.cos(0.5 * yaw)
        qpos[i, cq + 4] = 0.0
        qpos[i, cq + 5] = 0.0
        qpos[i, cq + 6] = math.sin(0.5 * yaw)
        draws[i, 0] = uniform_range(rng, i, cube_mass[0], cube_mass[1])
        draws[i, 1] = uniform_range(rng, i, cube_friction[0], cube_friction[1])
