"""Who sees what: the teacher's observation assembled by group name, and the student's privacy check.

The env offers two observations: the policy's (``obs``, groups ``env.unwrapped.obs_groups``,
an ``obs_history``'s frames after them) and the critic's privileged extras
(``info["privileged_obs"]``, groups ``privileged_obs_groups``); under a sim-to-real profile
also the clean observation, the env's own before any wrapper touched it
(:class:`~wrappers.privileged.CleanObservationTap`). The teacher was trained on some task's
policy observation; here it gets each of its groups, by name, from the env's privileged
observation when the group is there (the clean value), else from the clean observation when
there is one (so the teacher acts as it was trained, on exact sensors, while the student learns
to act on the noisy, late, dropped ones), else from the policy observation. The controller's own
groups (last action, command, phase) always come from the policy observation: the
controller knows them exactly, as the training stack's ``ControllerState`` writes them. All are
read from one array, ``[obs | privileged_obs | clean obs]``, with one gather.

The student sees the policy observation only, which must hold no privileged group
(:func:`check_student_observation`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import gymnasium as gym
import numpy as np

from unilab_robot.deploy.controller_groups import CONTROLLER_GROUPS

from ..common.envs import env_groups


class GroupError(ValueError):
    """An observation group is missing, of another size, or privileged where it may not be."""


def check_student_observation(env: gym.vector.VectorEnv, task: str, shared: Sequence[str] = ()) -> None:
    """:class:`GroupError` when ``env``'s policy observation holds a group that is also privileged
    (the student would see what only the teacher and the critic may), other than the ``shared`` ones
    (``distill.shared_groups``: readings the robot measures too), or names no groups at all."""
    policy, privileged = env_groups(env)
    if not policy:
        raise GroupError(f"{task} names no observation groups: the student's observation cannot be checked "
                         "for privileged information (distillation needs a UniLab task)")
    leaked = [name for name in policy if name in privileged and name not in shared]
    if leaked:
        raise GroupError(f"the student's observation on {task} holds the privileged group(s) {leaked} "
                         f"(privileged: {list(privileged)}): distill onto a task whose policy observation "
                         "leaves them out (e.g. UniLab/Go1JoystickDepth-v0, which sees depth instead of height_scan), "
                         f"or, for readings the robot measures too, name them in distill.shared_groups={leaked}")


def clean_observation_tap(env: gym.vector.VectorEnv):
    """The :class:`~wrappers.privileged.CleanObservationTap` of ``env``'s sim-to-real stack (``.obs``: the env's
    observation before the wrappers, updated every step), or ``None`` without one."""
    from wrappers._base import find_in_layers

    return find_in_layers(env, "tap", lambda tap: tap is not None and hasattr(tap, "obs"))


def teacher_index(teacher_groups: Sequence[tuple[str, int]], policy: Mapping[str, slice],
                  privileged: Mapping[str, slice], obs_width: int, task: str, clean_at: int | None = None) -> np.ndarray:
    """Columns of ``[obs | privileged_obs | clean obs]`` (``obs`` ``obs_width`` wide, the clean observation from
    column ``clean_at``, ``None``: none) that make the teacher's observation: its ``(name, size)`` groups in order,
    each from the privileged observation when it is there, else from the clean observation (the controller's groups
    from the policy observation), else from the policy observation. :class:`GroupError` names a group the env
    lacks or holds at another size."""
    columns = []
    for name, size in teacher_groups:
        if name in privileged:
            cols, offset = privileged[name], obs_width
        elif name in policy:
            cols, offset = policy[name], 0
            if clean_at is not None and name not in CONTROLLER_GROUPS:
                offset = clean_at
        else:
            raise GroupError(f"the teacher's group {name!r} is in neither observation of {task} "
                             f"(policy: {list(policy)}; privileged: {list(privileged)}): distill on a task "
                             "that offers every group the teacher reads")
        got = cols.stop - cols.start
        if got != size:
            raise GroupError(f"the teacher's group {name!r} has {size} columns, {task}'s has {got}")
        columns.append(np.arange(offset + cols.start, offset + cols.stop))
    return np.concatenate(columns).astype(np.int64)
