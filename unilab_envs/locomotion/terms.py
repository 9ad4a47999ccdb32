"""The locomotion layer's reward terms, one small function each, and their declaration :data:`LEGGED_TERMS`.

Each returns its weighted value for one env from the quantities the step kernel offers
(:data:`~unilab_envs.locomotion.reward_kernel.QUANTITIES`); the arithmetic is the one each
robot's numbers were recorded with (:mod:`~unilab_envs.locomotion.precision`). A robot's
defaults set the scales (``reward_scales``), a task may add terms of its own
(:mod:`unilab_envs.core.reward_terms`).
"""

from __future__ import annotations

import numba as nb

from unilab_envs.core.reward_terms import RewardTerm
from unilab_envs.locomotion.precision import exp_kernel, weighted_square


@nb.njit(inline="always", cache=True)
def tracking_lin_vel(weight, lin_error, params, f32):
    return weight * exp_kernel(lin_error, params.tracking_sigma, params.inv_tracking_sigma, f32)


@nb.njit(inline="always", cache=True)
def tracking_ang_vel(weight, yaw_error, params, f32):
    return weight * exp_kernel(yaw_error, params.yaw_tracking_sigma, params.inv_yaw_tracking_sigma, f32)


@nb.njit(inline="always", cache=True)
def lin_vel_z(weight, vz, f32):
    return weighted_square(weight, vz, f32)


@nb.njit(inline="always", cache=True)
def ang_vel_xy(weight, wx, wy):
    return weight * (wx * wx + wy * wy)


@nb.njit(inline="always", cache=True)
def orientation(weight, gx, gy):
    return weight * (gx * gx + gy * gy)


@nb.njit(inline="always", cache=True)
def base_height(weight, height, params):
    return weight * (height - params.base_height_target) ** 2


@nb.njit(inline="always", cache=True)
def torques(weight, torque_sq):
    return weight * torque_sq


@nb.njit(inline="always", cache=True)
def action_rate(weight, action_rate_sq):
    return weight * action_rate_sq


@nb.njit(inline="always", cache=True)
def pose(weight, pose_sq):
    return weight * pose_sq


@nb.njit(inline="always", cache=True)
def feet_air_time(weight, air_reward, moving):
    return weight * air_reward if moving else 0.0


@nb.njit(inline="always", cache=True)
def feet_phase(weight, phase_error, params, f32):
    return weight * exp_kernel(phase_error, params.feet_phase_width, params.inv_feet_phase_width, f32)


@nb.njit(inline="always", cache=True)
def feet_slip(weight, slip):
    return weight * slip


@nb.njit(inline="always", cache=True)
def joint_limits(weight, limits):
    return weight * limits


@nb.njit(inline="always", cache=True)
def stand_still(weight, deviation, moving):
    return 0.0 if moving else weight * deviation


@nb.njit(inline="always", cache=True)
def termination(weight, fell):
    return weight if fell else 0.0


@nb.njit(inline="always", cache=True)
def alive(weight, fell):
    return 0.0 if fell else weight


LEGGED_TERMS = (
    RewardTerm("tracking_lin_vel", tracking_lin_vel, "exp(-|planar velocity error|^2 / tracking_sigma)"),
    RewardTerm("tracking_ang_vel", tracking_ang_vel, "exp(-yaw-rate error^2 / yaw_tracking_sigma; tracking_sigma unless set)"),
    RewardTerm("lin_vel_z", lin_vel_z, "vertical base velocity^2"),
    RewardTerm("ang_vel_xy", ang_vel_xy, "roll and pitch rates^2"),
    RewardTerm("orientation", orientation, "planar part of the gravity direction^2 (tilt)"),
    RewardTerm("base_height", base_height, "(height - base_height_target)^2"),
    RewardTerm("torques", torques, "sum of actuator forces^2"),
    RewardTerm("action_rate", action_rate, "sum of (action - previous action)^2"),
    RewardTerm("pose", pose, "weighted sum of squared deviations from the home pose"),
    RewardTerm("feet_air_time", feet_air_time, "at each touchdown, air time - air_time_target (while moving)"),
    RewardTerm("feet_phase", feet_phase, "exp(-sum of squared foot-height errors vs the gait's swing target / feet_phase_width)"),
    RewardTerm("feet_slip", feet_slip, "squared planar speed of feet in contact"),
    RewardTerm("joint_limits", joint_limits, "sum of soft joint-limit violations"),
    RewardTerm("stand_still", stand_still, "sum of |deviation from home| under a zero command"),
    RewardTerm("termination", termination, "1 on a fall"),
    RewardTerm("alive", alive, "1 while not fallen"),
)
"""The built-in terms, in kernel (and ``reward_terms`` column) order; ``positive_clip`` follows every term."""
