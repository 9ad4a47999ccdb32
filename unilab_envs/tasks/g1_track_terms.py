"""``UniLab/G1Track-v0``'s reward terms, one small function each, and their declaration :data:`TRACK_TERMS`.

Each returns its weighted value for one env from the errors of
:func:`~unilab_envs.tasks.g1_track_kernels.step_quantities` (:data:`~unilab_envs.tasks.g1_track_kernels.QUANTITIES`).
The tracking terms are ``exp(-error / std^2)`` with BeyondMimic's standard deviations and weights; a config sets
another ``std`` or weight with ``reward_terms={"body_pos": {"weight": 2.0, "std": 0.2}}``, and a term registered
under the layer ``"g1_track"`` is added by name.
"""

from __future__ import annotations

import math

import numba as nb

from unilab_envs.core.reward_terms import RewardTerm
from unilab_envs.locomotion.terms import action_rate, joint_limits, termination  # the same maths, one copy

LAYER = "g1_track"


@nb.njit(inline="always", cache=True)
def anchor_pos(weight, anchor_pos_sq, std):
    return weight * math.exp(-anchor_pos_sq / (std * std))


@nb.njit(inline="always", cache=True)
def anchor_ori(weight, anchor_ori_sq, std):
    return weight * math.exp(-anchor_ori_sq / (std * std))


@nb.njit(inline="always", cache=True)
def body_pos(weight, body_pos_sq, std):
    return weight * math.exp(-body_pos_sq / (std * std))


@nb.njit(inline="always", cache=True)
def body_ori(weight, body_ori_sq, std):
    return weight * math.exp(-body_ori_sq / (std * std))


@nb.njit(inline="always", cache=True)
def body_lin_vel(weight, body_lin_vel_sq, std):
    return weight * math.exp(-body_lin_vel_sq / (std * std))


@nb.njit(inline="always", cache=True)
def body_ang_vel(weight, body_ang_vel_sq, std):
    return weight * math.exp(-body_ang_vel_sq / (std * std))


TRACK_TERMS = (
    RewardTerm("anchor_pos", anchor_pos, "exp(-|anchor position error|^2 / std^2), world frame (m)", scale=0.5,
               params={"std": 0.3}),
    RewardTerm("anchor_ori", anchor_ori, "exp(-anchor orientation error angle^2 / std^2) (rad)", scale=0.5,
               params={"std": 0.4}),
    RewardTerm("body_pos", body_pos, "exp(-mean over tracked bodies of |anchor-relative position error|^2 / std^2)",
               scale=1.0, params={"std": 0.3}),
    RewardTerm("body_ori", body_ori, "exp(-mean anchor-relative orientation error angle^2 / std^2)", scale=1.0,
               params={"std": 0.4}),
    RewardTerm("body_lin_vel", body_lin_vel, "exp(-mean |body linear velocity error|^2 / std^2), heading frames",
               scale=1.0, params={"std": 1.0}),
    RewardTerm("body_ang_vel", body_ang_vel, "exp(-mean |body angular velocity error|^2 / std^2), heading frames",
               scale=1.0, params={"std": 3.14}),
    RewardTerm("action_rate", action_rate, "sum of (action - previous action)^2", scale=-0.1),
    RewardTerm("joint_limits", joint_limits, "radians beyond the soft joint limits", scale=-10.0),
    RewardTerm("termination", termination, "1 on a termination (off by default: the lost tracking reward is the "
               "penalty)", scale=0.0),
)
"""G1Track's terms, in kernel (and ``reward_terms`` column) order."""
