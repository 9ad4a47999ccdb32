"""Velocity commands: drawing one, deciding when to draw, and whether one asks to move."""

from __future__ import annotations

import numba as nb

from unilab_envs.core.rng import uniform, uniform_range


@nb.njit(inline="always", cache=True)
def sample_command(i, command, rng, commands):
    """Draw env ``i``'s ``(vx, vy, yaw rate)`` from its stream: zero with ``commands.zero_probability``, else uniform per axis,
    then straight (vy and yaw rate zeroed) with ``commands.straight_probability``.

    Draws one uniform, then one per axis unless the command is zero, then one for the straight test
    only where ``straight_probability > 0`` (the order fixes the stream; without straight draws it is
    the stream of every run before the option).
    """
    if uniform(rng, i) < commands.zero_probability:
        command[i, 0] = 0.0
        command[i, 1] = 0.0
        command[i, 2] = 0.0
    else:
        for k in range(3):
            command[i, k] = uniform_range(rng, i, commands.ranges[k, 0], commands.ranges[k, 1])
        if commands.straight_probability > 0.0 and uniform(rng, i) < commands.straight_probability:
            command[i, 1] = 0.0
            command[i, 2] = 0.0


@nb.njit(inline="always", cache=True)
def resample_due(episode_step, commands):
    """Whether a command is drawn at this control step of the episode (every ``resample_steps``)."""
    return episode_step % commands.resample_steps == 0


@nb.njit(inline="always", cache=True)
def is_moving(command, i):
    """Whether env ``i``'s command asks to move: planar speed above 0.1 m/s or yaw rate above 0.1 rad/s."""
    return (command[i, 0] ** 2 + command[i, 1] ** 2) > 0.01 or abs(command[i, 2]) > 0.1
