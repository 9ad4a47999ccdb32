"""The gait clock: a phase that advances at the gait frequency, and the swing-height target it sets."""

from __future__ import annotations

import math

import numba as nb

from unilab_envs.core.quat import advance_phase

__all__ = ["advance_phase", "gait_step", "swing_target"]


def gait_step(frequency: float, control_dt: float) -> float:
    """Phase advance (rad) per control step of a gait at ``frequency`` Hz."""
    return 2.0 * math.pi * frequency * control_dt


@nb.njit(inline="always", cache=True)
def swing_target(foot_sin, moving, swing_height):
    """Foot-height target: ``swing_height * sin^2`` in the foot's swing half (``sin > 0``) while moving, else 0 (stance)."""
    return swing_height * foot_sin * foot_sin if (moving and foot_sin > 0.0) else 0.0
