"""Actions to controls: clipped actions become PD position targets around the home pose."""

from __future__ import annotations

import numba as nb

ROWS_PER_BLOCK = 64  # envs per call of the block function


@nb.njit(cache=True, _nrt=False)  # allocates nothing; no reference counting (see kernels)
def apply_block_actions(lo, hi, actions, ctrl, legs, robot, action_scale):
    """Envs ``lo:hi`` of :func:`apply_actions` (a call, not inlined: see :mod:`unilab_envs.locomotion.kernels`)."""
    for i in range(lo, hi):
        for j in range(actions.shape[1]):
            a = min(max(actions[i, j], -1.0), 1.0)
            legs.previous_action[i, j] = legs.last_action[i, j]
            legs.last_action[i, j] = a
            ctrl[i, robot.actuator_ids[j]] = robot.home[j] + action_scale * a


@nb.njit(parallel=True, cache=True, _nrt=False)
def apply_actions(actions, ctrl, legs, robot, action_scale):
    """``ctrl[:, actuator j] = home[j] + action_scale * clip(actions[:, j], -1, 1)``; shifts the action history.

    ``actions`` is ``(N, J)``; ``legs.previous_action`` takes ``legs.last_action``, which takes the clipped action.
    """
    n = actions.shape[0]
    for b in nb.prange((n + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK):
        apply_block_actions(b * ROWS_PER_BLOCK, min(n, (b + 1) * ROWS_PER_BLOCK), actions, ctrl, legs, robot, action_scale)
