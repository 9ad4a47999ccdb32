"""Left/right symmetry of a legged robot: the mirror image of an observation and of an action.

A robot that is its own mirror image across its sagittal (x-z) plane should act as the
mirror image of itself: what it does when pushed left, mirrored, is what it does when pushed
right. A :class:`MirrorMap` says how a reflection ``y -> -y`` acts on the task's vectors, as
a permutation and a sign per entry (``x' = x[perm] * sign``):

* each observation group as its declaration says (``ObsGroup.mirror``, declared with the group's writer,
  builder and noise in :mod:`unilab_envs.locomotion.groups`): base linear velocity and gravity (vectors)
  ``(x, -y, z)``; angular velocity (a pseudovector) ``(-x, y, -z)``; the command ``(vx, vy, yaw rate)``
  ``(vx, -vy, -yaw)``;
* joints: each joint swaps with its partner (``left_*`` <-> ``right_*``, ``FL_*`` <-> ``FR_*``,
  ``RL_*`` <-> ``RR_*``; a joint on the midline is its own partner), its angle scaled by the
  sign that the reflection gives its axis (read from the model at the home pose: roll and
  yaw joints flip, pitch joints keep); actions, which are joint targets about the home pose,
  the same;
* the gait clock: mirroring swaps the feet, so the clock moves by the difference of the
  swapped feet's phase offsets (half a period for a trot or a walk: ``(sin, cos) -> -``).

:func:`locomotion_mirror` builds the map of a locomotion task and checks that the model is
symmetric (partners' axes, home pose and phase offsets); the PPO's symmetry loss
(``algo.symmetry_coef``) uses it. The same function maps a task's privileged
(critic) groups (``task.privileged_mirror``: per-foot groups swap feet, ``actuator_force``
swaps joints with their signs, ``height`` stays); the off-policy learner's
``algo.symmetry: augment`` uses both.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

import mujoco
import numpy as np

from unilab_envs.core.model import object_ids
from unilab_envs.core.obs_groups import ObsGroup

#: name tokens that swap under the mirror, both ways
SIDE_TOKENS = (("left", "right"), ("FL", "FR"), ("RL", "RR"))
_REFLECT = np.array([1.0, -1.0, 1.0])


@dataclass(frozen=True)
class MirrorMap:
    """``x' = x[..., perm] * sign`` for observations and for actions (each map is its own inverse)."""

    obs_perm: np.ndarray
    obs_sign: np.ndarray
    act_perm: np.ndarray
    act_sign: np.ndarray

    def observation(self, obs: np.ndarray) -> np.ndarray:
        """The mirror image of observations ``(..., O)``."""
        return obs[..., self.obs_perm] * self.obs_sign

    def action(self, actions: np.ndarray) -> np.ndarray:
        """The mirror image of actions ``(..., A)``."""
        return actions[..., self.act_perm] * self.act_sign


def partner_name(name: str) -> str:
    """The name of the mirror partner of a joint or foot (itself on the midline)."""
    swap = {a: b for pair in SIDE_TOKENS for a, b in (pair, pair[::-1])}
    pattern = re.compile("|".join(rf"(?<![A-Za-z]){re.escape(t)}(?![a-z])" for t in swap))
    return pattern.sub(lambda m: swap[m.group(0)], name)


def joint_mirror(model: mujoco.MjModel, joint_names: tuple[str, ...], keyframe: int) -> tuple[np.ndarray, np.ndarray]:
    """``(perm, sign)`` of the joints; ``ValueError`` where the model is not its own mirror image."""
    ids = object_ids(model, mujoco.mjtObj.mjOBJ_JOINT, joint_names, "joint")
    index = {n: k for k, n in enumerate(joint_names)}
    perm = np.zeros(len(joint_names), np.int64)
    for k, name in enumerate(joint_names):
        partner = partner_name(name)
        if partner not in index:
            raise ValueError(f"joint {name!r} has no mirror partner {partner!r} among the actuated joints")
        perm[k] = index[partner]
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, keyframe)
    mujoco.mj_kinematics(model, data)
    axes = data.xaxis[ids]
    # a reflection maps a rotation axis (a pseudovector) a to -R a
    sign = np.einsum("kj,kj->k", axes[perm], -(_REFLECT * axes))
    if not np.allclose(np.abs(sign), 1.0, atol=1e-6):
        bad = [joint_names[k] for k in np.flatnonzero(~np.isclose(np.abs(sign), 1.0, atol=1e-6))]
        raise ValueError(f"joints {bad} are not mirror images of their partners' (axes at the home pose)")
    sign = np.round(sign)
    home = model.key_qpos[keyframe, model.jnt_qposadr[ids]]
    if not np.allclose(home[perm] * sign, home, atol=1e-6):
        raise ValueError("the home pose is not its own mirror image")
    return perm, sign


def phase_mirror(foot_names: tuple[str, ...], phase_offsets: tuple[float, ...]) -> float:
    """The sign the mirror puts on the gait clock's (sin, cos): -1 for a half-period shift, +1 for none."""
    index = {n: k for k, n in enumerate(foot_names)}
    shifts = []
    for k, name in enumerate(foot_names):
        partner = partner_name(name)
        if partner not in index:
            raise ValueError(f"foot {name!r} has no mirror partner {partner!r}")
        shifts.append((phase_offsets[index[partner]] - phase_offsets[k]) % (2 * math.pi))
    def near(a: float, b: float) -> bool:
        return abs((a - b + math.pi) % (2 * math.pi) - math.pi) < 1e-9

    if all(near(s, 0.0) for s in shifts):
        return 1.0
    if all(near(s, math.pi) for s in shifts):
        return -1.0
    raise ValueError(f"the gait's phase offsets {phase_offsets} do not mirror into a shift of 0 or half a period")


def foot_mirror(foot_names: tuple[str, ...]) -> np.ndarray:
    """The permutation that swaps each foot with its mirror partner; ``ValueError`` for a foot without one."""
    index = {n: k for k, n in enumerate(foot_names)}
    missing = [n for n in foot_names if partner_name(n) not in index]
    if missing:
        raise ValueError(f"feet {missing} have no mirror partner among {list(foot_names)}")
    return np.array([index[partner_name(n)] for n in foot_names], np.int64)


def group_mirror(groups: dict[str, slice], declared: Mapping[str, ObsGroup], joint_perm: np.ndarray,
                 joint_sign: np.ndarray, foot_perm: np.ndarray, phase_sign: float) -> tuple[np.ndarray, np.ndarray]:
    """``(perm, sign)`` of a vector laid out as ``groups`` (name -> columns), each group mirrored as its declaration
    says (``declared[name].mirror``, :class:`~unilab_envs.core.obs_groups.ObsGroup`); ``ValueError`` naming a group
    that declares no mirror image (a height scan, a depth image)."""
    size = max((s.stop for s in groups.values()), default=0)
    perm, sign = np.arange(size), np.ones(size)
    for name, cols in groups.items():
        at, kind = cols.start, getattr(declared.get(name), "mirror", None)
        if isinstance(kind, tuple):
            sign[cols] = kind
        elif kind == "joints":
            perm[cols], sign[cols] = at + joint_perm, joint_sign
        elif kind == "feet":
            perm[cols] = at + foot_perm
        elif kind == "phase":
            sign[cols] = phase_sign
        elif kind != "invariant":
            raise ValueError(f"no mirror image is defined for observation group {name!r} (declare its mirror= in its "
                             f"ObsGroup, or train without symmetry)")
    return perm, sign


def locomotion_mirror(model: mujoco.MjModel, obs_groups: dict[str, slice], declared: Mapping[str, ObsGroup],
                      joint_names: tuple[str, ...], foot_names: tuple[str, ...], phase_offsets: tuple[float, ...],
                      keyframe: int) -> MirrorMap:
    """The :class:`MirrorMap` of a locomotion task's observation laid out as ``obs_groups`` (the policy's,
    or the privileged groups of its critic; ``declared``: their declarations, by name) and of its actions."""
    perm, sign = joint_mirror(model, joint_names, keyframe)
    phase_sign = phase_mirror(foot_names, phase_offsets)
    obs_perm, obs_sign = group_mirror(obs_groups, declared, perm, sign, foot_mirror(foot_names), phase_sign)
    return MirrorMap(obs_perm=obs_perm, obs_sign=obs_sign, act_perm=perm, act_sign=sign)
