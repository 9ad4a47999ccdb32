"""The locomotion reward: 17 named terms, their weights, and the positive clip.

Term ``k`` contributes ``weights[k] * value_k`` (``weights = scale * control_dt``) to
``reward_terms[i, k]``; the reward is their sum. ``positive_clip`` is a term of its own
(last): ``positive_clip / control_dt`` times ``max(0, -(the sum of the shaped terms))``, so
a scale of 1 clips the per-step reward at zero (legged_gym's ``only_positive_rewards``)
and ``reward == sum of terms`` still holds. ``Params.clip_termination`` says whether the
termination penalty is among the clipped terms (Go1) or added after the clip (G1: a fall
costs its full penalty).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numba as nb
import numpy as np

from unilab_envs.locomotion.precision import exp_kernel, weighted_square


@dataclass(frozen=True)
class RewardScales:
    """Signed scales of the named terms (weight = scale * control_dt); each robot sets its own defaults."""

    tracking_lin_vel: float = 0.0  # exp(-|planar velocity error|^2 / tracking_sigma)
    tracking_ang_vel: float = 0.0  # exp(-yaw-rate error^2 / yaw_tracking_sigma), tracking_sigma by default
    lin_vel_z: float = 0.0  # vertical base velocity^2
    ang_vel_xy: float = 0.0  # roll and pitch rates^2
    orientation: float = 0.0  # planar part of the gravity direction^2 (tilt)
    base_height: float = 0.0  # (height - base_height_target)^2
    torques: float = 0.0  # sum of actuator forces^2
    action_rate: float = 0.0  # sum of (action - previous action)^2
    pose: float = 0.0  # weighted sum of squared deviations from the home pose
    feet_air_time: float = 0.0  # at each touchdown, air time - air_time_target (while moving)
    feet_phase: float = 0.0  # exp(-sum of squared foot-height errors vs the gait's swing target / feet_phase_width)
    feet_slip: float = 0.0  # squared planar speed of feet in contact
    joint_limits: float = 0.0  # sum of soft joint-limit violations
    stand_still: float = 0.0  # sum of |deviation from home| under a zero command
    termination: float = 0.0  # 1 on a fall
    alive: float = 0.0  # 1 while not fallen
    positive_clip: float = 0.0  # see the module docstring; must stay last

    def validate(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if not math.isfinite(value):
                raise ValueError(f"reward_scales.{f.name} must be finite, got {value}")

    def weights(self, control_dt: float) -> np.ndarray:
        """``(17,)`` float64 weights ``scale * control_dt`` in :data:`REWARD_NAMES` order."""
        return np.array([getattr(self, name) for name in REWARD_NAMES]) * control_dt


REWARD_NAMES = tuple(f.name for f in dataclasses.fields(RewardScales))
TERMINATION = REWARD_NAMES.index("termination")


@nb.njit(inline="always", cache=True)
def write_rewards(i, reward_terms, reward, weights, clip_scale, params, base, lin_error, yaw_error, sums, feet, moving, fell, f32):
    """Weigh env ``i``'s term values into ``reward_terms[i]`` and ``reward[i]`` (see the module docstring).

    ``sums`` is :func:`~unilab_envs.locomotion.joints.joint_sums`'s tuple, ``feet`` the
    summed ``(air_reward, slip, phase_error)`` of the feet; ``clip_scale`` is
    ``weights[-1] / dt``; ``f32`` is ``params.float32_math``, passed as a compile-time constant.
    """
    _, _, vz, wx, wy, _, gx, gy, _, height = base
    torque_sq, action_rate, pose, deviation, limits = sums
    air_reward, slip, phase_error = feet
    t0 = weights[0] * exp_kernel(lin_error, params.tracking_sigma, params.inv_tracking_sigma, f32)
    t1 = weights[1] * exp_kernel(yaw_error, params.yaw_tracking_sigma, params.inv_yaw_tracking_sigma, f32)
    t2 = weighted_square(weights[2], vz, f32)
    t3 = weights[3] * (wx * wx + wy * wy)
    t4 = weights[4] * (gx * gx + gy * gy)
    t5 = weights[5] * (height - params.base_height_target) ** 2
    t6 = weights[6] * torque_sq
    t7 = weights[7] * action_rate
    t8 = weights[8] * pose
    t9 = weights[9] * air_reward if moving else 0.0
    t10 = weights[10] * exp_kernel(phase_error, params.feet_phase_width, params.inv_feet_phase_width, f32)
    t11 = weights[11] * slip
    t12 = weights[12] * limits
    t13 = 0.0 if moving else weights[13] * deviation
    t14 = weights[14] if fell else 0.0
    t15 = 0.0 if fell else weights[15]
    shaped = t0 + t1 + t2 + t3 + t4 + t5 + t6 + t7 + t8 + t9 + t10 + t11 + t12 + t13
    if params.clip_termination:
        shaped += t14
    shaped += t15
    t16 = clip_scale * max(0.0, -shaped)
    total = shaped + t16
    if not params.clip_termination:
        total += t14
    reward_terms[i, 0], reward_terms[i, 1], reward_terms[i, 2], reward_terms[i, 3], reward_terms[i, 4] = t0, t1, t2, t3, t4
    reward_terms[i, 5], reward_terms[i, 6], reward_terms[i, 7], reward_terms[i, 8], reward_terms[i, 9] = t5, t6, t7, t8, t9
    reward_terms[i, 10], reward_terms[i, 11], reward_terms[i, 12], reward_terms[i, 13], reward_terms[i, 14] = t10, t11, t12, t13, t14
    reward_terms[i, 15], reward_terms[i, 16] = t15, t16
    reward[i] = total
