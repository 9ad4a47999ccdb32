"""A legged robot's names in its MJCF, resolved against a loaded model into a :class:`Robot` record."""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from unilab_envs.core.model import actuators_for_joints, free_joint_of, object_ids
from unilab_envs.locomotion.records import Robot


@dataclass(frozen=True)
class LeggedRobot:
    """What a locomotion task needs to know of its robot, by name (the facts beside its MJCF).

    Feet are ``foot_kind="geom"`` spheres (a foot's height is its centre's z minus its
    radius) or ``"site"``s on the soles (the site's z).
    """

    root_body: str  # body of the floating base
    keyframe: str  # home pose: the reset keyframe and the zero of the actions
    joint_names: tuple[str, ...]  # actuated joints, in action order
    foot_names: tuple[str, ...]
    foot_kind: str  # "geom" or "site"
    pose_weights: tuple[float, ...]  # per joint, of the pose term
    phase_offsets: tuple[float, ...]  # per foot: gait phase (rad)

    def __post_init__(self) -> None:
        if self.foot_kind not in ("geom", "site"):
            raise ValueError(f"foot_kind must be 'geom' or 'site', got {self.foot_kind!r}")
        if len(self.pose_weights) != len(self.joint_names) or len(self.phase_offsets) != len(self.foot_names):
            raise ValueError("a LeggedRobot needs one pose weight per joint and one phase offset per foot")

    @property
    def foot_positions(self) -> str:
        """The batch field (``batch.bind`` name) that holds the feet's world positions."""
        return f"{self.foot_kind}_xpos"


def resolve_robot(model: mujoco.MjModel, legged: LeggedRobot, soft_joint_limit: float) -> tuple[Robot, int]:
    """``(Robot record, keyframe id)`` of ``legged`` in ``model``; raises naming what the model lacks.

    The soft limits are the model's joint ranges shrunk about their middle to ``soft_joint_limit`` of their width.
    """
    joint_ids = object_ids(model, mujoco.mjtObj.mjOBJ_JOINT, legged.joint_names, "joint")
    if legged.foot_kind == "geom":
        foot_ids = object_ids(model, mujoco.mjtObj.mjOBJ_GEOM, legged.foot_names, "foot geom")
        foot_offset = float(model.geom_size[foot_ids[0], 0])
    else:
        foot_ids = object_ids(model, mujoco.mjtObj.mjOBJ_SITE, legged.foot_names, "foot site")
        foot_offset = 0.0
    root_q, root_d = free_joint_of(model, legged.root_body)
    keyframe = int(object_ids(model, mujoco.mjtObj.mjOBJ_KEY, (legged.keyframe,), "keyframe")[0])
    joint_q = model.jnt_qposadr[joint_ids].astype(np.int64)
    low, high = model.jnt_range[joint_ids, 0].copy(), model.jnt_range[joint_ids, 1].copy()
    mid, half = 0.5 * (low + high), 0.5 * (high - low) * soft_joint_limit
    offsets = np.array(legged.phase_offsets)
    robot = Robot(
        root_q=int(root_q), root_d=int(root_d), joint_q=joint_q, joint_d=model.jnt_dofadr[joint_ids].astype(np.int64),
        actuator_ids=np.asarray(actuators_for_joints(model, joint_ids), dtype=np.int64),
        foot_ids=np.asarray(foot_ids, dtype=np.int64), foot_offset=foot_offset,
        home=model.key_qpos[keyframe, joint_q].copy(), pose_weights=np.array(legged.pose_weights, dtype=np.float64),
        soft_low=mid - half, soft_high=mid + half, hard_low=low, hard_high=high,
        phase_offsets=offsets, phase_offsets_cos_sin=np.stack([np.cos(offsets), np.sin(offsets)], axis=1),
    )  # fmt: skip
    return robot, keyframe
