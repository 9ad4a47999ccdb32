"""The UR5 tasks' reward terms, one small function each, their declarations :data:`REACH_TERMS`
and :data:`GRASP_TERMS`, and the ``reward_scales`` config class made from a declaration.

Each function returns its weighted value for one env from the quantities its task's step kernel
offers (:data:`~unilab_envs.tasks.arm_reward_kernel.REACH_QUANTITIES`,
:data:`~unilab_envs.tasks.arm_reward_kernel.GRASP_QUANTITIES`); the arithmetic is the one the
tasks' rewards were trained and recorded with. A task may add terms of its own
(:mod:`unilab_envs.core.reward_terms`; layers ``"ur5_reach"`` and ``"ur5_grasp"``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numba as nb

from unilab_envs.core.config import require
from unilab_envs.core.reward_terms import RewardTerm

# --- both tasks --------------------------------------------------------------------


@nb.njit(inline="always", cache=True)
def action_rate(weight, action_rate_sq):
    return weight * action_rate_sq


@nb.njit(inline="always", cache=True)
def success(weight, succeeded):
    return weight if succeeded else 0.0


# --- reach -------------------------------------------------------------------------


@nb.njit(inline="always", cache=True)
def distance(weight, dist):
    return weight * dist


@nb.njit(inline="always", cache=True)
def distance_fine(weight, dist, fine_std):
    return weight * (1.0 - math.tanh(dist / fine_std))


@nb.njit(inline="always", cache=True)
def joint_vel(weight, joint_vel_sq):
    return weight * joint_vel_sq


@nb.njit(inline="always", cache=True)
def joint_limits(weight, limits):
    return weight * limits


# --- grasp -------------------------------------------------------------------------


@nb.njit(inline="always", cache=True)
def reach(weight, dist, reach_std):
    return weight * (1.0 - math.tanh(dist / reach_std))


@nb.njit(inline="always", cache=True)
def grasp(weight, grasped):
    return weight if grasped else 0.0


@nb.njit(inline="always", cache=True)
def lift(weight, grasped, height, lift_target):
    return weight * min(max(height, 0.0) / lift_target, 1.0) if grasped else 0.0


@nb.njit(inline="always", cache=True)
def hold(weight, holding):
    return weight if holding else 0.0


@nb.njit(inline="always", cache=True)
def hold_break(weight, held_before, holding, hold_target):
    return weight * (held_before / hold_target) if held_before > 0 and not holding else 0.0


@nb.njit(inline="always", cache=True)
def overlift(weight, grasped, height, lift_target):
    return weight * (max(height - lift_target, 0.0) / lift_target) if grasped else 0.0


REACH_TERMS = (
    RewardTerm("distance", distance, "end effector to target distance (m)", scale=-2.0),
    RewardTerm("distance_fine", distance_fine, "1 - tanh(distance / fine_std)", scale=1.0),
    RewardTerm("success", success, "1 while the end effector is within success_threshold", scale=1.0),
    RewardTerm("action_rate", action_rate, "sum of (action - previous action)^2", scale=-0.02),
    RewardTerm("joint_vel", joint_vel, "sum of joint velocities^2", scale=-0.01),
    RewardTerm("joint_limits", joint_limits, "radians beyond the soft joint limits", scale=-1.0),
)
"""UR5Reach's terms, in kernel (and ``reward_terms`` column) order."""

GRASP_TERMS = (
    RewardTerm("reach", reach, "1 - tanh(pinch-cube distance / reach_std)", scale=1.0),
    RewardTerm("grasp", grasp, "1 with both pads on the cube and the pinch point within half an edge of its centre", scale=1.0),
    RewardTerm("lift", lift, "grasped: the cube bottom's height / lift_target, capped at 1", scale=4.0),
    RewardTerm("hold", hold, "1 while grasped at >= success_height", scale=4.0),
    RewardTerm("action_rate", action_rate, "sum of (action - previous action)^2", scale=-0.01),
    RewardTerm("success", success, "1 at the step the hold reaches success_hold_s", scale=250.0),
    RewardTerm("hold_break", hold_break, "at the step a hold breaks before it succeeds: the share of success_hold_s it "
               "lasted; off by default, -hold x (success_hold_s / control_dt) (-100 with the defaults) takes back "
               "exactly the hold reward the broken hold earned", scale=0.0),  # fmt: skip
    RewardTerm("overlift", overlift, "grasped: how far the cube's bottom is above lift_target, in lift targets; off by "
               "default, at -lift the lift reward peaks at lift_target and falls to 0 at twice it", scale=0.0),  # fmt: skip
)
"""UR5Grasp's terms, in kernel (and ``reward_terms`` column) order."""


class _ScaleChecks:
    def validate(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            require(math.isfinite(value), f"reward_scales.{f.name} must be finite, got {value}")


def reward_scales_class(name: str, module: str, terms: Sequence[RewardTerm]) -> type:
    """The frozen ``reward_scales`` config class of ``terms``: one float field per term, in order,
    defaulting to the term's ``scale`` (weight = scale * control_dt); ``module`` is where it lives."""
    cls = dataclasses.make_dataclass(name, [(t.name, float, dataclasses.field(default=t.scale)) for t in terms],
                                     bases=(_ScaleChecks,), frozen=True)  # fmt: skip
    cls.__module__ = module
    cls.__doc__ = "Signed scales of the named reward terms (weight = scale * control_dt).\n\n" + \
        "\n".join(f"- ``{t.name}`` ({t.scale:g}): {t.doc}" for t in terms)  # fmt: skip
    return cls
