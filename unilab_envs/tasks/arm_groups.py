"""The UR5e tasks' observation groups: writer, units, meaning, robot-side builder and default noise.

An arm task lists its groups in the class attributes ``policy_groups`` / ``critic_groups``
(:class:`ArmObservation`): the order is the observation's, and the tasks' ``obs_groups`` slices,
the deploy spec's groups, the default observation noise and the generated kernels' writes
(:mod:`~unilab_envs.tasks.arm_reward_kernel`) come from them. A writer reads quantities of the
task's layer (:data:`~unilab_envs.tasks.arm_reward_kernel.REACH_OBS_QUANTITIES`,
:data:`~unilab_envs.tasks.arm_reward_kernel.GRASP_OBS_QUANTITIES`); ``joint_q joint_d site home
last_action`` name the same things on both, so the groups both tasks have share one writer.
The noise scales are the ``ur5_real`` / ``ur5_grasp_real`` profiles' (Gaussian std: encoder and
forward-kinematics noise, an object tracker's).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numba as nb

from unilab_envs.core.obs_groups import ObsGroup, group_slices, writer_call
from unilab_robot.deploy.reference import GROUP_BUILDERS
from unilab_envs.tasks.ur5_grasp_kernels import (FP_HALF, FP_LIFT_TARGET, FP_TABLE_Z, IX_CUBE_BODY, IX_CUBE_D, IX_CUBE_GEOM,
                                                 IX_CUBE_Q, IX_LEFT_PAD, IX_RIGHT_PAD, IX_SENSOR_LEFT, IX_SENSOR_RIGHT,
                                                 NUM_JOINTS, quat_conj_mul)

# --- both tasks ---------------------------------------------------------------------


@nb.njit(inline="always", cache=True)
def write_joint_pos(out, i, qpos, joint_q, home):
    for j in range(out.shape[0]):
        out[j] = qpos[i, joint_q[j]] - home[j]


@nb.njit(inline="always", cache=True)
def write_joint_vel(out, i, qvel, joint_d):
    for j in range(out.shape[0]):
        out[j] = qvel[i, joint_d[j]]


@nb.njit(inline="always", cache=True)
def write_ee_pos(out, i, site_xpos, site):
    for d in range(3):
        out[d] = site_xpos[i, site, d]


@nb.njit(inline="always", cache=True)
def write_last_action(out, i, last_action):
    for k in range(out.shape[0]):
        out[k] = last_action[i, k]


# --- UR5Reach -----------------------------------------------------------------------


@nb.njit(inline="always", cache=True)
def write_joint_target(out, i, joint_target, home):
    for j in range(out.shape[0]):
        out[j] = joint_target[i, j] - home[j]


@nb.njit(inline="always", cache=True)
def write_target(out, i, target):
    for d in range(3):
        out[d] = target[i, d]


@nb.njit(inline="always", cache=True)
def write_ee_to_target(out, i, site_xpos, site, target):
    for d in range(3):
        out[d] = target[i, d] - site_xpos[i, site, d]


# --- UR5Grasp -----------------------------------------------------------------------


@nb.njit(inline="always", cache=True)
def write_gripper(out, i, xpos, ix):
    opening = 0.0
    for d in range(3):
        e = xpos[i, ix[IX_LEFT_PAD], d] - xpos[i, ix[IX_RIGHT_PAD], d]
        opening += e * e
    out[0] = math.sqrt(opening)


@nb.njit(inline="always", cache=True)
def write_ee_quat(out, i, site_xquat, site):
    for k in range(4):
        out[k] = site_xquat[i, site, k]


@nb.njit(inline="always", cache=True)
def write_object_pos(out, i, qpos, site_xpos, site, ix):
    for d in range(3):
        out[d] = qpos[i, ix[IX_CUBE_Q] + d] - site_xpos[i, site, d]


@nb.njit(inline="always", cache=True)
def write_object_quat(out, i, qpos, site_xquat, site, ix):
    cq = ix[IX_CUBE_Q]
    out[0], out[1], out[2], out[3] = quat_conj_mul(site_xquat[i, site], qpos[i, cq + 3], qpos[i, cq + 4], qpos[i, cq + 5],
                                                   qpos[i, cq + 6])


@nb.njit(inline="always", cache=True)
def write_object_vel(out, i, qvel, site_xpos, xanchor, xaxis, joint_ids, joint_d, site, ix):
    """The cube's linear velocity minus the pinch point's, ``J_pos qvel`` of the arm: the rows 0-2 of
    :func:`~unilab_envs.tasks.ur5_grasp_kernels.pinch_jacobian` (column j = ``axis_j x (p - anchor_j)``), summed
    over the joints in order without the matrix."""
    vx = vy = vz = 0.0
    for j in range(NUM_JOINTS):
        a, v = joint_ids[j], qvel[i, joint_d[j]]
        ux, uy, uz = xaxis[i, a, 0], xaxis[i, a, 1], xaxis[i, a, 2]
        rx = site_xpos[i, site, 0] - xanchor[i, a, 0]
        ry = site_xpos[i, site, 1] - xanchor[i, a, 1]
        rz = site_xpos[i, site, 2] - xanchor[i, a, 2]
        vx += (uy * rz - uz * ry) * v
        vy += (uz * rx - ux * rz) * v
        vz += (ux * ry - uy * rx) * v
    cd = ix[IX_CUBE_D]
    out[0], out[1], out[2] = qvel[i, cd] - vx, qvel[i, cd + 1] - vy, qvel[i, cd + 2] - vz


@nb.njit(inline="always", cache=True)
def write_object_ang_vel(out, i, qvel, ix):
    for d in range(3):
        out[d] = qvel[i, ix[IX_CUBE_D] + 3 + d]  # the free joint's angular qvel: the cube's own frame


@nb.njit(inline="always", cache=True)
def write_target_height(out, fp):
    out[0] = fp[FP_TABLE_Z] + fp[FP_HALF] + fp[FP_LIFT_TARGET]


@nb.njit(inline="always", cache=True)
def write_target_gap(out, i, qpos, ix, fp):
    out[0] = fp[FP_TABLE_Z] + fp[FP_HALF] + fp[FP_LIFT_TARGET] - qpos[i, ix[IX_CUBE_Q] + 2]


@nb.njit(inline="always", cache=True)
def write_ee_target(out, i, ee_target, site_xpos, site):
    for d in range(3):
        out[d] = ee_target[i, d] - site_xpos[i, site, d]


@nb.njit(inline="always", cache=True)
def write_pad_contact(out, i, sensordata, ix):
    out[0] = 1.0 if sensordata[i, ix[IX_SENSOR_LEFT]] > 0 else 0.0
    out[1] = 1.0 if sensordata[i, ix[IX_SENSOR_RIGHT]] > 0 else 0.0


@nb.njit(inline="always", cache=True)
def write_pad_force(out, i, sensordata, ix):
    left, right = ix[IX_SENSOR_LEFT], ix[IX_SENSOR_RIGHT]
    out[0] = math.sqrt(sensordata[i, left + 1] ** 2 + sensordata[i, left + 2] ** 2 + sensordata[i, left + 3] ** 2)
    out[1] = math.sqrt(sensordata[i, right + 1] ** 2 + sensordata[i, right + 2] ** 2 + sensordata[i, right + 3] ** 2)


@nb.njit(inline="always", cache=True)
def write_object_mass(out, i, body_mass, ix):
    out[0] = body_mass[i, ix[IX_CUBE_BODY]]


@nb.njit(inline="always", cache=True)
def write_object_friction(out, i, geom_friction, ix):
    out[0] = geom_friction[i, ix[IX_CUBE_GEOM], 0]


# --- the declarations -----------------------------------------------------------------


def _group(name: str, size: int, units: str, doc: str, writer: Any, noise: float | None = None) -> ObsGroup:
    return ObsGroup(name, size, units, doc, writer, builder=GROUP_BUILDERS.get(name), noise=noise)


JOINT_POS = _group("joint_pos", 6, "rad", "joint angles minus action.home, in action.joint_names order", write_joint_pos,
                   noise=0.001)
JOINT_VEL = _group("joint_vel", 6, "rad/s", "joint velocities, in action.joint_names order", write_joint_vel, noise=0.02)
EE_POS = _group("ee_pos", 3, "m", "end-effector site position, world frame", write_ee_pos, noise=0.002)

REACH_GROUPS = (
    JOINT_POS,
    JOINT_VEL,
    _group("joint_target", 6, "rad", "the running joint position targets minus action.home", write_joint_target),
    EE_POS,
    _group("target", 3, "m", "target position, world frame", write_target),
    _group("ee_to_target", 3, "m", "target minus end-effector position, world frame", write_ee_to_target, noise=0.002),
    _group("last_action", 6, "1", "the previous action, clipped to action.clip", write_last_action),
)

GRASP_GROUPS = (
    JOINT_POS,
    JOINT_VEL,
    _group("gripper", 1, "m", "distance between the finger pad bodies (grasp.gripper.pad_bodies)", write_gripper,
           noise=0.0005),
    EE_POS,
    _group("ee_quat", 4, "1", "end-effector site orientation (w, x, y, z), world frame, as MuJoCo's site_xquat",
           write_ee_quat),
    _group("object_pos", 3, "m", "object position minus end-effector position, world frame", write_object_pos,
           noise=0.005),
    _group("object_quat", 4, "1", "object orientation in the end-effector frame, conj(ee_quat) * object quat, sign with w >= 0",
           write_object_quat, noise=0.02),
    _group("object_vel", 3, "m/s", "object linear velocity minus the end-effector site's (J_pos qvel of the arm), world frame",
           write_object_vel, noise=0.03),
    _group("object_ang_vel", 3, "rad/s", "object angular velocity, object frame (its free joint's angular qvel)",
           write_object_ang_vel, noise=0.1),
    _group("target_height", 1, "m", "the lift command: height of the object centre to lift it to, world z",
           write_target_height),
    _group("target_gap", 1, "m", "the lift command minus the object centre's height", write_target_gap, noise=0.005),
    _group("ee_target", 3, "m", "the end-effector target the actions built minus the end-effector position, world frame",
           write_ee_target),
    _group("last_action", 4, "1", "the previous action, clipped to action.clip", write_last_action),
)

GRASP_CRITIC_GROUPS = (
    _group("pad_contact", 2, "1", "1 where the left / right pad touches the object, else 0", write_pad_contact),
    _group("pad_force", 2, "N", "contact force magnitude on the left / right pad (net over its contacts)", write_pad_force),
    _group("object_mass", 1, "kg", "the object's mass", write_object_mass),
    _group("object_friction", 1, "1", "the object's sliding friction coefficient", write_object_friction),
)


def slices(groups: Sequence[ObsGroup]) -> dict[str, slice]:
    """The groups' columns, laid end to end in order."""
    return group_slices(groups, {})


def check_groups(policy: Sequence[ObsGroup], critic: Sequence[ObsGroup], quantities: Sequence[str]) -> None:
    """``ValueError`` for a group without a writer or a name listed twice in one observation or declared twice;
    ``TypeError`` naming ``quantities`` for a writer reading a name none of them."""
    seen: dict[str, ObsGroup] = {}
    for where, groups in (("policy", policy), ("critic", critic)):
        for group in groups:
            if not isinstance(group, ObsGroup) or group.writer is None:
                raise ValueError(f"observation group {group!r} is not an ObsGroup with a writer: an arm task's groups are "
                                 f"written by their ObsGroup.writer (a Numba function of out and {', '.join(quantities)})")
            if seen.setdefault(group.name, group) != group:
                raise ValueError(f"two observation groups are named {group.name!r}")
            writer_call(group, "out", quantities, "writer")  # the TypeError now, not at the kernel's compile
        names = [g.name for g in groups]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"{where} observation groups listed twice: {twice}")


class ArmObservation:
    """An arm task's observation, declared in class attributes (mixed in before ``Task``).

    ``policy_groups`` / ``critic_groups``: the groups (:class:`~unilab_envs.core.obs_groups.ObsGroup`) of the
    policy's and the critic's observation, in order, each with a writer reading the task's
    ``obs_quantities``. When a class is made (a subclass too) its ``obs_groups`` /
    ``privileged_obs_groups`` slices, laid end to end, and ``declared_groups`` follow, and
    ``obs_size`` / ``privileged_obs_size`` from them; a bad group is refused then
    (:func:`check_groups`). The task's generated kernels write each group through its writer at
    those columns, a group in both observations once (copied into the critic's)::

        @nb.njit(inline="always")
        def write_ee_dist(out, dist):
            out[0] = dist

        class DistReach(UR5Reach):
            policy_groups = (*UR5Reach.policy_groups, ObsGroup("ee_dist", 1, "m", "end effector to target", write_ee_dist))
    """

    policy_groups: ClassVar[tuple[ObsGroup, ...]] = ()
    critic_groups: ClassVar[tuple[ObsGroup, ...]] = ()
    obs_quantities: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        cls.policy_groups, cls.critic_groups = tuple(cls.policy_groups), tuple(cls.critic_groups)
        try:
            check_groups(cls.policy_groups, cls.critic_groups, cls.obs_quantities)
        except (TypeError, ValueError) as e:
            raise type(e)(f"{cls.__name__}: {e}") from None
        cls.obs_groups, cls.privileged_obs_groups = slices(cls.policy_groups), slices(cls.critic_groups)
        cls.declared_groups = {g.name: g for g in (*cls.policy_groups, *cls.critic_groups)}
        super().__init_subclass__(**kwargs)

    obs_size = property(lambda self: max((s.stop for s in self.obs_groups.values()), default=0))
    privileged_obs_size = property(lambda self: max((s.stop for s in self.privileged_obs_groups.values()), default=0))
