"""Joint name -> motor slot maps, checked against the shipped deploy specs; one line naming a mismatch."""

from __future__ import annotations

import numpy as np
import pytest

from unilab_robot.deploy import load_spec
from unilab_robot.motors import G1_29, GO2_12, NameMapError, motor_map, robot_def, robot_for_joints


def test_shipped_specs_map_onto_their_robots():
    g1 = load_spec("policies/g1_joystick_real/deploy_spec.json")
    np.testing.assert_array_equal(motor_map(robot_def("g1"), g1.action.joint_names), np.arange(29))
    assert robot_for_joints(g1.action.joint_names).name == "g1"
    go = load_spec("policies/go1_joystick_real/deploy_spec.json")  # our Go1 follows the Go2's joint names and order
    np.testing.assert_array_equal(motor_map(robot_def("go2"), go.action.joint_names), np.arange(12))
    assert G1_29[3] == "left_knee_joint" and G1_29[12] == "waist_yaw_joint" and GO2_12[3:6] == (
        "FL_hip_joint", "FL_thigh_joint", "FL_calf_joint")


def test_reordered_joints_map_to_their_slots():
    names = ["FL_hip_joint", "FR_hip_joint"] + list(GO2_12[1:3]) + list(GO2_12[4:])
    np.testing.assert_array_equal(motor_map(robot_def("go2"), names)[:2], [3, 0])


@pytest.mark.parametrize("names, words", [
    (list(GO2_12[:-1]) + ["RL_knee_joint"], ["has no motor for: RL_knee_joint", "does not drive: RL_calf_joint"]),
    (list(GO2_12[:-1]), ["does not drive: RL_calf_joint"]),
    (list(GO2_12) + ["FR_hip_joint"], ["named twice: FR_hip_joint"]),
])
def test_mismatch_is_one_line_naming_it(names, words):
    with pytest.raises(NameMapError) as e:
        motor_map(robot_def("go2"), names)
    message = str(e.value)
    assert "\n" not in message and all(w in message for w in words)


def test_unknown_robot_and_no_robot_for_the_joints():
    with pytest.raises(NameMapError, match="unknown robot 'h1'; known: g1, go2"):
        robot_def("h1")
    with pytest.raises(NameMapError, match=r"has no motor for: elbow_joint.*\(\+\d+ more\)"):
        robot_for_joints(["elbow_joint"])
