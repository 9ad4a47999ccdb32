"""A scripted pick for ``UniLab/UR5Grasp-v0``: from the policy's own observation to an action, no state kept.

It is the task's :meth:`~unilab_envs.core.task.Task.scripted_action`, the demonstrator an off-policy run's
``algo.demonstrations`` puts in its replay buffer (a learner that never holds a lift command for the few
steps a lift takes otherwise never sees one: docs/results/off_policy.md). One rule per phase, chosen from
the observation alone, so it picks up where any other controller left the arm:

1. **Approach**: while the pinch point is more than ``align`` (m) from the cube's centre in the horizontal
   plane, move there with the gripper open, holding ``hover`` (m) above the centre.
2. **Descend**: aligned and more than ``descend_tolerance`` above the centre: go down, still open.
3. **Close**: aligned at the centre's height: close the gripper.
4. **Lift**: closed (pads less than ``closed_width`` apart) at the centre: move up by the lift command's gap
   (``target_gap``), so the cube is held at the commanded height until the task calls it a success.

Each move is the distance to go in action units (``action_scale`` metres per unit), clipped to [-1, 1].
On the bare task it picks 96% of episodes (124 of 128 at seed 1, the rest time-outs; none dropped):
tests/envs/test_ur5_grasp_script.py holds it to >= 90%.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

HOVER = 0.04  # m above the cube's centre while approaching
ALIGN = 0.012  # m: horizontal distance under which the pinch point is over the cube
DESCEND_TOLERANCE = 0.008  # m: the pinch point above the centre by less than this is at the cube
#: the pads are this much further apart than the cube's edge when they hold it (measured: 0.058-0.062 m on 5 cm)
CLOSED_MARGIN = 0.016


def scripted_grasp(obs: np.ndarray, columns: Mapping[str, slice], action_scale: float, cube_size: float) -> np.ndarray:
    """The scripted pick's ``(N, 4)`` actions in [-1, 1] for ``(N, D)`` observations whose groups ``object_pos``,
    ``gripper`` and ``target_gap`` sit at ``columns`` (the task's ``obs_groups``) (pure)."""
    obs = np.asarray(obs, dtype=np.float64)
    to_cube = obs[:, columns["object_pos"]]  # cube centre minus pinch point, world frame
    pad_gap = obs[:, columns["gripper"]][:, 0]
    lift_gap = obs[:, columns["target_gap"]][:, 0]
    action = np.zeros((len(obs), 4))
    action[:, :2] = np.clip(to_cube[:, :2] / action_scale, -1.0, 1.0)
    action[:, 3] = -1.0  # open
    approaching = np.linalg.norm(to_cube[:, :2], axis=1) > ALIGN
    above = to_cube[:, 2] < -DESCEND_TOLERANCE
    action[approaching, 2] = np.clip((to_cube[approaching, 2] + HOVER) / action_scale, -1.0, 1.0)
    descending = ~approaching & above
    action[descending, 2] = np.clip(to_cube[descending, 2] / action_scale, -1.0, 1.0)
    at_cube = ~approaching & ~above
    action[at_cube, 3] = 1.0  # close
    lifting = at_cube & (pad_gap < cube_size + CLOSED_MARGIN)
    action[lifting, 2] = np.clip(lift_gap[lifting] / action_scale, -1.0, 1.0)
    return action.astype(np.float32)
