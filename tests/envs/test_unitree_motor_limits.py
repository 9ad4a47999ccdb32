"""No silent unlimited motors: a ``<motor>`` without torque limits takes its joint's ``actuatorfrcrange``, or is refused.

Unitree's own 29-DoF G1 MJCF (unitree_mujoco ``g1_29dof.xml``) declares each actuator as a
bare ``<motor name=... joint=...>`` (no ``ctrlrange``, no ``forcerange``) and puts the torque
limits on the joints (``actuatorfrcrange="-88 88"``). The model written here has that shape:
the shipped G1 with every ``<position>`` a bare ``<motor>`` and the shipped actuators'
``forcerange`` moved onto their joints. The task must run it as the shipped servos, torque
limits included, and the safety guard must see those limits (not infinity).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import gymnasium as gym
import mujoco
import numpy as np
import pytest

import unilab_envs  # noqa: F401  (registers the tasks)
from unilab_robot.assets import g1
from unilab_envs.core.model import MOTOR, servo_joint_actuators

G1 = "UniLab/G1Joystick-v0"


def unitree_shaped(src: Path, dst: Path, drop_limit: str | None = None) -> Path:
    """``src`` with bare ``<motor>``s (name and joint only) and each joint's ``actuatorfrcrange`` the shipped
    actuator's ``forcerange``; ``drop_limit`` names a joint left without it."""
    shipped = mujoco.MjModel.from_xml_path(str(src))
    tree = ET.parse(src)
    root = tree.getroot()
    for default in root.iter("default"):
        for position in default.findall("position"):
            default.remove(position)
    joints = {j.get("name"): j for j in root.iter("joint")}
    section = root.find("actuator")
    for element in list(section):
        name, joint = element.get("name"), element.get("joint")
        a = mujoco.mj_name2id(shipped, mujoco.mjtObj.mjOBJ_ACTUATOR, name)
        assert shipped.actuator_forcelimited[a], f"{name}: the shipped actuator has no torque limit"
        low, high = shipped.actuator_forcerange[a]
        if joint != drop_limit:
            joints[joint].set("actuatorfrcrange", f"{low:.17g} {high:.17g}")
        section.insert(list(section).index(element), ET.Element("motor", name=name, joint=joint))
        section.remove(element)
    tree.write(dst)
    return dst


def _actuators(model: mujoco.MjModel) -> np.ndarray:
    joints = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n) for n in g1.JOINT_NAMES]
    return np.array([int(np.flatnonzero(model.actuator_trnid[:, 0] == j)[0]) for j in joints])


def test_the_unitree_shaped_g1_gets_the_joint_limits_as_its_servos_torque_limits(tmp_path):
    path = unitree_shaped(Path(g1.MJCF_PATH), tmp_path / "g1_29dof_motors.xml")
    raw = mujoco.MjModel.from_xml_path(str(path))
    acts = _actuators(raw)
    assert not raw.actuator_forcelimited[acts].any() and not raw.actuator_ctrllimited[acts].any()  # Unitree's shape
    env = gym.make_vec(G1, num_envs=1, num_threads=1, model_path=str(path))
    shipped = gym.make_vec(G1, num_envs=1, num_threads=1)
    try:
        task, m, s = env.unwrapped.task, env.unwrapped.model, shipped.unwrapped.model
        assert task.actuator_kinds == (MOTOR,) * 29
        got, want = _actuators(m), _actuators(s)
        assert m.actuator_forcelimited[got].all()
        np.testing.assert_array_equal(m.actuator_forcerange[got], s.actuator_forcerange[want])
        # the knees: 139 N m, the hips 88, the ankles 50 (the shipped G1's limits, from the joints now)
        knee = list(g1.JOINT_NAMES).index("left_knee_joint")
        assert tuple(m.actuator_forcerange[got[knee]]) == (-139.0, 139.0)
    finally:
        env.close()
        shipped.close()


def test_the_deploy_spec_and_the_safety_guard_carry_the_joint_limits(tmp_path):
    from unilab_envs.deploy_spec import deploy_spec_for
    from unilab_robot.deploy.safety import SafetyGuard

    path = unitree_shaped(Path(g1.MJCF_PATH), tmp_path / "g1_29dof_motors.xml")
    spec, shipped = deploy_spec_for(G1, model_path=str(path)), deploy_spec_for(G1)
    assert spec.action.torque_limit == shipped.action.torque_limit
    assert None not in spec.action.torque_limit
    model = mujoco.MjModel.from_xml_path(str(path))  # the robot side: the same MJCF, servos made from the spec
    servo_joint_actuators(model, _actuators(model), spec.action.kp, spec.action.kd)
    guard = SafetyGuard.from_spec(spec, model, {})
    assert np.isfinite(guard.limits.tau).all()
    np.testing.assert_array_equal(guard.limits.tau, [t for t in shipped.action.torque_limit])


def test_a_motor_without_any_limit_is_refused_in_one_line_naming_it_and_the_keywords(tmp_path):
    path = unitree_shaped(Path(g1.MJCF_PATH), tmp_path / "g1_no_knee_limit.xml", drop_limit="left_knee_joint")
    with pytest.raises(ValueError) as error:
        gym.make_vec(G1, num_envs=1, num_threads=1, model_path=str(path))
    message = str(error.value)
    assert "\n" not in message
    assert "'left_knee_joint'" in message and "<motor> with no torque limit" in message
    assert 'forcerange="-T T"' in message and 'actuatorfrcrange="-T T" on joint' in message


def test_the_motor_its_range_and_the_joint_limit_intersect():
    """Motor gear -3, ctrlrange [-2, 4] -> [-12, 6] N m; forcerange [-5, 10] -> [-30, 15]; joint [-8, 20]: [-8, 6]."""
    xml = """<mujoco><worldbody><body><joint name="j" axis="0 1 0" range="-1 1" actuatorfrcrange="-8 20"/>
    <geom type="capsule" size=".05" fromto="0 0 0 .4 0 0" mass="1"/></body></worldbody>
    <actuator><motor name="m" joint="j" gear="-3" ctrlrange="-2 4" forcerange="-5 10"/></actuator></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    assert servo_joint_actuators(model, [0], [40.0], [2.0]) == (MOTOR,)
    np.testing.assert_array_equal(model.actuator_forcerange[0], [-8.0, 6.0])
    bare = xml.replace(' ctrlrange="-2 4" forcerange="-5 10"', "")
    model = mujoco.MjModel.from_xml_string(bare)
    servo_joint_actuators(model, [0], [40.0], [2.0])
    np.testing.assert_array_equal(model.actuator_forcerange[0], [-8.0, 20.0])  # the joint's alone
    unlimited = mujoco.MjModel.from_xml_string(bare.replace(' actuatorfrcrange="-8 20"', ""))
    with pytest.raises(ValueError, match="actuator 'm' is a <motor> with no torque limit"):
        servo_joint_actuators(unlimited, [0], [40.0], [2.0])
    assert unlimited.actuator_biastype[0] == mujoco.mjtBias.mjBIAS_NONE  # refused before anything changed


def test_position_servos_without_forcerange_take_the_joints_limit_in_the_spec_and_the_guard(tmp_path):
    """The shipped G1 with its actuators' forcerange moved onto the joints (actuatorfrcrange): MuJoCo clamps the
    same torques, and the deploy spec and the guard read them from the joints."""
    from unilab_envs.deploy_spec import deploy_spec_for
    from unilab_robot.deploy.safety import SafetyGuard

    src = Path(g1.MJCF_PATH)
    shipped = mujoco.MjModel.from_xml_path(str(src))
    tree = ET.parse(src)
    root = tree.getroot()
    joints = {j.get("name"): j for j in root.iter("joint")}
    for element in root.iter():
        if element.tag == "position" and element.get("forcerange"):
            del element.attrib["forcerange"]  # the class defaults and any actuator that sets one
    for name in g1.JOINT_NAMES:
        a = _actuators(shipped)[list(g1.JOINT_NAMES).index(name)]
        low, high = shipped.actuator_forcerange[a]
        joints[name].set("actuatorfrcrange", f"{low:.17g} {high:.17g}")
    path = tmp_path / "g1_joint_limits.xml"
    tree.write(path)
    model = mujoco.MjModel.from_xml_path(str(path))
    assert not model.actuator_forcelimited[_actuators(model)].any()
    spec, want = deploy_spec_for(G1, model_path=str(path)), deploy_spec_for(G1)
    assert spec.action.torque_limit == want.action.torque_limit  # 88 / 139 / 50 / 25 N m ..., not None
    np.testing.assert_array_equal(SafetyGuard.from_spec(spec, model, {}).limits.tau, want.action.torque_limit)
