"""The UR5e tasks' observation groups: units, meaning, robot-side builder and default noise.

The arm tasks write their observations in their own fused kernels, at fixed columns
(:mod:`~unilab_envs.tasks.ur5_reach`, :mod:`~unilab_envs.tasks.ur5_grasp_kernels`), so
these declarations carry no writer; their order here is the observation's, and the tasks'
``obs_groups`` slices, the deploy spec's groups and the default observation noise come from
them. The noise scales are the ``ur5_real`` / ``ur5_grasp_real`` profiles' (Gaussian std:
encoder and forward-kinematics noise, an object tracker's).
"""

from __future__ import annotations

from unilab_envs.core.obs_groups import ObsGroup, group_slices
from unilab_envs.deploy.reference import GROUP_BUILDERS


def _group(name: str, size: int, units: str, doc: str, noise: float | None = None) -> ObsGroup:
    return ObsGroup(name, size, units, doc, builder=GROUP_BUILDERS.get(name), noise=noise)


JOINT_POS = _group("joint_pos", 6, "rad", "joint angles minus action.home, in action.joint_names order", noise=0.001)
JOINT_VEL = _group("joint_vel", 6, "rad/s", "joint velocities, in action.joint_names order", noise=0.02)
EE_POS = _group("ee_pos", 3, "m", "end-effector site position, world frame", noise=0.002)

REACH_GROUPS = (
    JOINT_POS,
    JOINT_VEL,
    _group("joint_target", 6, "rad", "the running joint position targets minus action.home"),
    EE_POS,
    _group("target", 3, "m", "target position, world frame"),
    _group("ee_to_target", 3, "m", "target minus end-effector position, world frame", noise=0.002),
    _group("last_action", 6, "1", "the previous action, clipped to action.clip"),
)

GRASP_GROUPS = (
    JOINT_POS,
    JOINT_VEL,
    _group("gripper", 1, "m", "distance between the finger pad bodies (grasp.gripper.pad_bodies)", noise=0.0005),
    EE_POS,
    _group("ee_quat", 4, "1", "end-effector site orientation (w, x, y, z), world frame, as MuJoCo's site_xquat"),
    _group("object_pos", 3, "m", "object position minus end-effector position, world frame", noise=0.005),
    _group("object_quat", 4, "1", "object orientation in the end-effector frame, conj(ee_quat) * object quat, sign with w >= 0",
           noise=0.02),
    _group("object_vel", 3, "m/s", "object linear velocity minus the end-effector site's (J_pos qvel of the arm), world frame",
           noise=0.03),
    _group("object_ang_vel", 3, "rad/s", "object angular velocity, object frame (its free joint's angular qvel)", noise=0.1),
    _group("target_height", 1, "m", "the lift command: height of the object centre to lift it to, world z"),
    _group("target_gap", 1, "m", "the lift command minus the object centre's height", noise=0.005),
    _group("ee_target", 3, "m", "the end-effector target the actions built minus the end-effector position, world frame"),
    _group("last_action", 4, "1", "the previous action, clipped to action.clip"),
)

GRASP_CRITIC_GROUPS = (
    _group("pad_contact", 2, "1", "1 where the left / right pad touches the object, else 0"),
    _group("pad_force", 2, "N", "contact force magnitude on the left / right pad (net over its contacts)"),
    _group("object_mass", 1, "kg", "the object's mass"),
    _group("object_friction", 1, "1", "the object's sliding friction coefficient"),
)


def slices(groups: tuple[ObsGroup, ...]) -> dict[str, slice]:
    """The groups' columns, laid end to end in order."""
    return group_slices(groups, {})
