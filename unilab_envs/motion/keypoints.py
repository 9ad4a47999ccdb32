"""The keypoints the retargeter matches: a point on a G1 body against a CMU humanoid body origin.

Names are MuJoCo Menagerie ``unitree_g1``'s (our G1's), so another model with those body names
retargets too. ``parent`` makes the tree :func:`~unilab_envs.motion.kinematics.scale_chain`
rescales: each segment parent -> child keeps the source's direction and takes the G1's length.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Keypoint:
    name: str
    g1_body: str
    g1_offset: tuple[float, float, float]  # in the G1 body's frame (m)
    source_body: str                        # CMU humanoid body whose origin it matches
    parent: int                             # index of the parent keypoint, -1 for the root
    weight: float                           # IK weight of its position


def _side(side: str, s: str, first: int) -> list[Keypoint]:
    """One leg's keypoints (``first``: index of its hip); ``side`` is ``left``/``right``, ``s`` ``l``/``r``."""
    return [
        Keypoint(f"{side}_hip", f"{side}_hip_roll_link", (0.0, 0.0, 0.0), f"{s}femur", 0, 2.0),
        Keypoint(f"{side}_knee", f"{side}_knee_link", (0.0, 0.0, 0.0), f"{s}tibia", first, 2.0),
        Keypoint(f"{side}_ankle", f"{side}_ankle_roll_link", (0.0, 0.0, 0.0), f"{s}foot", first + 1, 10.0),
        Keypoint(f"{side}_toe", f"{side}_ankle_roll_link", (0.10, 0.0, -0.035), f"{s}toes", first + 2, 10.0),
    ]


def _arm(side: str, s: str, first: int) -> list[Keypoint]:
    return [
        Keypoint(f"{side}_shoulder", f"{side}_shoulder_roll_link", (0.0, 0.0, 0.0), f"{s}humerus", CHEST, 1.0),
        Keypoint(f"{side}_elbow", f"{side}_elbow_link", (0.0, 0.0, 0.0), f"{s}radius", first, 1.0),
        Keypoint(f"{side}_wrist", f"{side}_wrist_roll_link", (0.0, 0.0, 0.0), f"{s}wrist", first + 1, 1.0),
        Keypoint(f"{side}_hand", f"{side}_wrist_yaw_link", (0.05, 0.0, 0.0), f"{s}hand", first + 2, 0.3),
    ]


CHEST = 9
#: pelvis, legs (hip, knee, ankle, toe), chest, neck, arms (shoulder, elbow, wrist, hand)
KEYPOINTS: tuple[Keypoint, ...] = tuple(
    [Keypoint("pelvis", "pelvis", (0.0, 0.0, 0.0), "root", -1, 5.0)]
    + _side("left", "l", 1) + _side("right", "r", 5)
    + [Keypoint("chest", "torso_link", (0.0, 0.0, 0.10), "thorax", 0, 2.0),
       Keypoint("neck", "torso_link", (0.0, 0.0, 0.33), "head", CHEST, 1.0)]
    + _arm("left", "l", 11) + _arm("right", "r", 15)
)
assert KEYPOINTS[CHEST].name == "chest"
#: indices of the (ankle, toe) keypoints of the (left, right) foot
FEET = ((3, 4), (7, 8))
#: the leg chains whose length sets the root's scale: hip -> knee -> ankle of each side
LEG_SEGMENTS = (2, 3, 6, 7)
