"""Which motor slot of the low-level messages drives which joint, checked against a deploy spec.

The motor orders are Unitree's (the ``G1JointIndex`` enum of ``unitree_sdk2``'s G1 examples,
29-DoF variant; the Go2's ``FR_0 .. RL_2`` leg indices of ``unitree_sdk2`` / ``unitree_ros2``),
named as MuJoCo Menagerie's ``unitree_g1`` and ``unitree_go2`` joints, which our models follow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from unilab_robot.messages import FAMILIES, Family

#: G1 29-DoF: slot i drives G1_29[i] (slots 29-34 of the 35 are unused on this variant).
#: Ankles and waist roll/pitch are the "PR" (pitch/roll) joints in the default ``mode_pr`` 0.
G1_29 = (
    "left_hip_pitch_joint", "left_hip_roll_joint", "left_hip_yaw_joint", "left_knee_joint",
    "left_ankle_pitch_joint", "left_ankle_roll_joint",
    "right_hip_pitch_joint", "right_hip_roll_joint", "right_hip_yaw_joint", "right_knee_joint",
    "right_ankle_pitch_joint", "right_ankle_roll_joint",
    "waist_yaw_joint", "waist_roll_joint", "waist_pitch_joint",
    "left_shoulder_pitch_joint", "left_shoulder_roll_joint", "left_shoulder_yaw_joint", "left_elbow_joint",
    "left_wrist_roll_joint", "left_wrist_pitch_joint", "left_wrist_yaw_joint",
    "right_shoulder_pitch_joint", "right_shoulder_roll_joint", "right_shoulder_yaw_joint", "right_elbow_joint",
    "right_wrist_roll_joint", "right_wrist_pitch_joint", "right_wrist_yaw_joint",
)

#: Go2: legs FR, FL, RR, RL, each hip (abduction), thigh, calf (slots 12-19 of 20 unused; 12-15 are the Go2-W wheels)
GO2_12 = tuple(f"{leg}_{part}_joint" for leg in ("FR", "FL", "RR", "RL") for part in ("hip", "thigh", "calf"))


@dataclass(frozen=True)
class RobotDef:
    """A robot on the wire: its message family and its motor slots' joint names."""

    name: str
    family: Family
    motors: tuple[str, ...]
    root_body: str  # the body's root, as MuJoCo Menagerie names it: what tells one body from another of the same joints
    task: str  # UniLab's task on this body


ROBOTS = {
    "g1": RobotDef("g1", FAMILIES["hg"], G1_29, "pelvis", "UniLab/G1Joystick-v0"),
    "go2": RobotDef("go2", FAMILIES["go"], GO2_12, "base", "UniLab/Go2Joystick-v0"),
}


def body_mismatch(robot: RobotDef, root_body: str, task_id: str) -> str | None:
    """One line when a policy trained on another body (``root_body`` of its spec: our Go1's ``trunk``) would
    drive ``robot`` (whose joints it shares: the Go1 and the Go2 have the same names), else ``None``."""
    if root_body == robot.root_body:
        return None
    return (f"this policy was trained on {task_id}, a body whose root is {root_body!r}, not the {robot.name}'s "
            f"({robot.root_body!r}): another body's policy falls on this one; train on {robot.task}")


class NameMapError(ValueError):
    """The deploy spec's joints do not match the robot's motors; the message names the mismatch."""


def robot_def(name: str) -> RobotDef:
    """The robot called ``name``; :class:`NameMapError` listing the known ones otherwise."""
    try:
        return ROBOTS[name]
    except KeyError:
        raise NameMapError(f"unknown robot {name!r}; known: {', '.join(ROBOTS)}") from None


def robot_for_joints(joint_names: Sequence[str]) -> RobotDef:
    """The robot whose motors carry exactly these joint names (in any order); :class:`NameMapError` when none does."""
    wanted = set(joint_names)
    for robot in ROBOTS.values():
        if wanted == set(robot.motors):
            return robot
    best = min(ROBOTS.values(), key=lambda r: len(wanted ^ set(r.motors)))
    motor_map(best, joint_names)  # raises, naming the mismatch against the nearest robot
    raise AssertionError("unreachable")


def motor_map(robot: RobotDef, joint_names: Sequence[str]) -> np.ndarray:
    """Motor slot of each of ``joint_names`` (int64, in their order), every motor of ``robot`` covered once.

    :class:`NameMapError` in one line naming the joints the robot lacks, the motors the spec
    leaves undriven and the duplicates, so a policy never runs with a motor nobody commands.
    """
    names = list(joint_names)
    index = {n: i for i, n in enumerate(robot.motors)}
    unknown = [n for n in names if n not in index]
    missing = [n for n in robot.motors if n not in names]
    dupes = sorted({n for n in names if names.count(n) > 1})
    def few(items):  # at most four names, then how many more
        return ", ".join(items[:4]) + (f" (+{len(items) - 4} more)" if len(items) > 4 else "")

    if unknown or missing or dupes:
        parts = []
        if unknown:
            parts.append(f"joints the {robot.name} has no motor for: {few(unknown)}")
        if missing:
            parts.append(f"{robot.name} motors the spec does not drive: {few(missing)}")
        if dupes:
            parts.append(f"joints named twice: {few(dupes)}")
        raise NameMapError(f"the deploy spec's action joints do not match the {robot.name}'s motors ({'; '.join(parts)}); "
                           f"export the policy for this robot or pass --robot with the robot it was trained for")
    return np.array([index[n] for n in names], dtype=np.int64)
