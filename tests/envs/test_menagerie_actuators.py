"""``model_path=`` models with torque (``<motor>``) actuators run as PD servos; other actuator types are refused.

MuJoCo Menagerie ships some robots with position actuators and others (or other revisions)
with ``<motor>`` torque actuators. The tasks write joint-angle targets into ``ctrl``, so at
load a torque actuator is rewritten into a position servo with the task's ``pd_kp`` /
``pd_kd`` and the motor's torque limits (``unilab_envs.core.model.servo_joint_actuators``).
Here the torque-actuated models are written by the test from the shipped MJCFs (every
``<position>`` replaced by a ``<motor>`` with a gear and the robot's torque limits), so the
converted model must be the shipped one again, and so must its trajectories.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import gymnasium as gym
import mujoco
import numpy as np
import pytest

import unilab_envs  # noqa: F401  (registers the tasks)
from unilab_robot.assets import g1, go1, ur5e, ur5e_2f85
from unilab_envs.core.model import MOTOR, POSITION, SUPPORTED_ACTUATORS, servo_joint_actuators
from unilab_envs.tasks.g1_joystick import G1Joystick
from unilab_envs.tasks.go1_joystick import Go1Joystick
from unilab_envs.tasks.ur5_grasp import UR5Grasp
from unilab_envs.tasks.ur5_reach import UR5Reach

GO1, G1, UR5, GRASP = "UniLab/Go1Joystick-v0", "UniLab/G1Joystick-v0", "UniLab/UR5Reach-v0", "UniLab/UR5Grasp-v0"
#: env id -> (task class, robot facts, motor gear written into the torque variant)
ROBOTS = {GO1: (Go1Joystick, go1, 1.0), G1: (G1Joystick, g1, 2.0), UR5: (UR5Reach, ur5e, 50.0),
          GRASP: (UR5Grasp, ur5e_2f85, 50.0)}
#: actuators that stay position servos in the variants: the gripper is not a joint the task sets targets for
KEEP = {"fingers_actuator": '<position kp="2000" ctrlrange="0 0.0425" forcerange="-40 40"/>'}
POLICY_ONNX = Path(__file__).resolve().parents[2] / "policies" / "go1_joystick" / "policy.onnx"


# --- the torque-actuated variants ---------------------------------------------------------


def _joint_actuators(model: mujoco.MjModel, joint_names) -> np.ndarray:
    joints = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n) for n in joint_names]
    return np.array([int(np.flatnonzero(model.actuator_trnid[:, 0] == j)[0]) for j in joints])


def torque_variant(src: Path, dst: Path, gear: float, replace: dict[str, str] | None = None) -> Path:
    """``src`` with every ``<position>`` actuator a ``<motor>`` of gear ``gear`` and ctrlrange = torque limit / gear.

    The position defaults go; each actuator keeps its name and joint. ``replace`` maps an
    actuator name to an MJCF element written instead of its motor (an unsupported type, or a
    position actuator to keep).
    """
    shipped = mujoco.MjModel.from_xml_path(str(src))
    tree = ET.parse(src)
    for default in tree.getroot().iter("default"):
        for position in default.findall("position"):
            default.remove(position)
    section = tree.getroot().find("actuator")
    for element in list(section):
        name = element.get("name")
        a = mujoco.mj_name2id(shipped, mujoco.mjtObj.mjOBJ_ACTUATOR, name)
        assert shipped.actuator_forcelimited[a], f"{name}: the shipped actuator has no torque limit"
        low, high = shipped.actuator_forcerange[a] / gear
        motor = ET.fromstring((replace or {}).get(name, "<motor/>"))
        motor.attrib.update(name=name, joint=element.get("joint"))
        if motor.tag == "motor":
            motor.attrib.update(gear=f"{gear:.17g}", ctrlrange=f"{low:.17g} {high:.17g}")
        section.insert(list(section).index(element), motor)
        section.remove(element)
    tree.write(dst)
    return dst


@pytest.fixture(scope="module")
def variants(tmp_path_factory) -> dict[str, Path]:
    """env id -> the torque-actuated variant of its robot's MJCF."""
    folder = tmp_path_factory.mktemp("torque_models")
    return {env_id: torque_variant(robot.MJCF_PATH, folder / f"{robot.__name__.rsplit('.', 1)[-1]}_motor.xml", gear, KEEP)
            for env_id, (_, robot, gear) in ROBOTS.items()}


# --- the conversion, by hand ----------------------------------------------------------------


@pytest.mark.parametrize("env_id", list(ROBOTS))
def test_torque_actuators_become_the_shipped_servos(variants, env_id):
    task_class, robot, _ = ROBOTS[env_id]
    task, shipped = task_class(model_path=str(variants[env_id])), task_class()
    assert shipped.actuator_kinds == (POSITION,) * len(robot.JOINT_NAMES)
    assert task.actuator_kinds == (MOTOR,) * len(robot.JOINT_NAMES)
    m, s = task.model, shipped.model
    acts, ref = _joint_actuators(m, robot.JOINT_NAMES), _joint_actuators(s, robot.JOINT_NAMES)
    kp, kd = np.array(task.config.pd_kp), np.array(task.config.pd_kd)
    np.testing.assert_array_equal(kp, s.actuator_gainprm[ref, 0])  # the config's defaults are the MJCF's gains
    np.testing.assert_array_equal(kd, -s.actuator_biasprm[ref, 2])
    np.testing.assert_array_equal(m.actuator_gear[acts], np.tile([1.0, 0, 0, 0, 0, 0], (len(acts), 1)))
    np.testing.assert_array_equal(m.actuator_biastype[acts], int(mujoco.mjtBias.mjBIAS_AFFINE))
    np.testing.assert_array_equal(m.actuator_gainprm[acts, 0], kp)
    np.testing.assert_array_equal(m.actuator_biasprm[acts, :3], np.stack([0 * kp, -kp, -kd], axis=1))
    assert m.actuator_forcelimited[acts].all()
    np.testing.assert_allclose(m.actuator_forcerange[acts], s.actuator_forcerange[ref], rtol=1e-12)  # the motor's torque limits
    joints = m.actuator_trnid[acts, 0]
    np.testing.assert_array_equal(m.actuator_ctrlrange[acts], m.jnt_range[joints])  # targets within the joint's range
    np.testing.assert_allclose(m.actuator_acc0[acts], s.actuator_acc0[ref], rtol=1e-9)  # mj_setConst: gear 1 now


def test_gear_algebra_on_one_hinge():
    """tau = clip(kp (target - q) - kd dq, gear * ctrlrange), and the motor's armature and damping stay reflected."""
    xml = """<mujoco><compiler angle="radian"/><worldbody><body><joint name="j" axis="0 1 0" range="-1 1"/>
    <geom type="capsule" size=".05" fromto="0 0 0 .4 0 0" mass="1"/></body></worldbody>
    <actuator><motor name="m" joint="j" gear="-3" ctrlrange="-2 4" forcerange="-5 10" armature="0.01" damping="0.2"/></actuator>
    </mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    data.qvel[0] = 0.7
    mujoco.mj_forward(model, data)
    inertia, passive = data.M.copy(), data.qfrc_passive.copy()
    assert servo_joint_actuators(model, [0], [40.0], [2.0]) == (MOTOR,)
    # torque = gear * p: ctrl in [-2, 4] gives [-12, 6]; force in [-5, 10] gives [-30, 15]; both: [-12, 6]
    np.testing.assert_array_equal(model.actuator_forcerange[0], [-12.0, 6.0])
    np.testing.assert_array_equal(model.actuator_ctrlrange[0], [-1.0, 1.0])
    for q, dq, target in ((0.1, 0.7, 0.3), (0.0, 0.0, 0.9), (0.5, -2.0, -0.8)):
        data.qpos[0], data.qvel[0], data.ctrl[0] = q, dq, target
        mujoco.mj_forward(model, data)
        want = np.clip(40.0 * (target - q) - 2.0 * dq, -12.0, 6.0)
        assert data.qfrc_actuator[0] == pytest.approx(want, abs=1e-12)
        assert data.actuator_force[0] == pytest.approx(want, abs=1e-12)  # gear 1: actuator_force is the joint torque
    data.qpos[0], data.qvel[0], data.ctrl[0] = 0.0, 0.7, 0.0
    mujoco.mj_forward(model, data)
    np.testing.assert_allclose(data.M, inertia, rtol=1e-12)  # armature 0.01 * 3^2
    np.testing.assert_allclose(data.qfrc_passive, passive, rtol=1e-12)  # damping 0.2 * 3^2


# --- the same behaviour ---------------------------------------------------------------------


def _random_actions(t: int, obs: np.ndarray, size: int) -> np.ndarray:
    """Step ``t``'s seeded actions (amplitude 0.3), the same for every rollout."""
    return 0.3 * np.random.default_rng(t).uniform(-1.0, 1.0, size=(obs.shape[0], size)).astype(np.float32)


def _rollout(env_id: str, steps: int, actions=_random_actions, **kwargs) -> dict[str, np.ndarray]:
    """Observations, rewards and terminations of 2 envs from ``reset(seed=7)`` under ``actions(t, obs, size)``."""
    env = gym.make_vec(env_id, num_envs=2, num_threads=1, **kwargs)
    try:
        obs, info = env.reset(seed=7)
        size = env.single_action_space.shape[0]
        out = {"obs": [obs], "reward": [], "terminated": []}
        for t in range(steps):
            obs, reward, terminated, truncated, info = env.step(actions(t, obs, size))
            out["obs"].append(obs)
            out["reward"].append(reward)
            out["terminated"].append(terminated)
        return {k: np.stack(v) for k, v in out.items()}
    finally:
        env.close()


@pytest.mark.parametrize("env_id", list(ROBOTS))
def test_torque_variant_follows_the_shipped_trajectory(variants, env_id):
    """The same seeded actions from the same reset: the same observations and rewards over 50 steps."""
    want = _rollout(env_id, 50)
    got = _rollout(env_id, 50, model_path=str(variants[env_id]))
    np.testing.assert_allclose(got["obs"], want["obs"], atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(got["reward"], want["reward"], atol=1e-5, rtol=1e-5)
    np.testing.assert_array_equal(got["terminated"], want["terminated"])


def test_shipped_go1_policy_keeps_walking_on_the_torque_model(variants):
    """``policies/go1_joystick`` (its ONNX export: raw observation in, action out) on the <motor> Go1: no fall."""
    ort = pytest.importorskip("onnxruntime")
    if not POLICY_ONNX.is_file():
        pytest.skip(f"{POLICY_ONNX} is not there")
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(POLICY_ONNX), options, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name

    def policy(t, obs, size):
        return session.run(None, {name: obs.astype(np.float32)})[0]

    want = _rollout(GO1, 500, policy)  # 10 s of walking, a command resample included
    got = _rollout(GO1, 500, policy, model_path=str(variants[GO1]))
    assert not got["terminated"].any(), "the shipped policy fell on the torque-actuated Go1"
    np.testing.assert_allclose(got["obs"], want["obs"], atol=1e-4, rtol=1e-4)


def test_unilab_play_runs_the_torque_model_with_the_spec_gains(variants):
    """``unilab play --model-path`` a <motor> Go1: the spec's servos, the shipped model's motion, no fall."""
    pytest.importorskip("onnxruntime")
    from trainers.play import Player, find_policy

    bundle = find_policy(POLICY_ONNX.parent)
    shipped, torque = Player(bundle, seed=0), Player(bundle, model_path=str(variants[GO1]), seed=0)
    assert torque.io.actuator_differences() == []  # Kp, Kd as in the deploy spec; position servos now
    np.testing.assert_array_equal(torque.model.actuator_biastype[torque.io.actuators], int(mujoco.mjtBias.mjBIAS_AFFINE))
    for _ in range(150):
        assert not shipped.control_step() and not torque.control_step()
    np.testing.assert_allclose(torque.data.qpos, shipped.data.qpos, atol=1e-6)


# --- what is refused ------------------------------------------------------------------------


@pytest.mark.parametrize("element, kind", [
    ('<velocity kv="2"/>', "<velocity>"),
    ('<intvelocity kp="20" actrange="-1 1"/>', "<intvelocity>"),
    ('<general gaintype="affine" gainprm="0 0 -1" ctrlrange="0 1"/>', "<damper>"),
    ('<cylinder area="0.01"/>', "<cylinder>"),
    ('<muscle/>', "<muscle>"),
    ('<position kp="35" kv="0.5" gear="2"/>', "gear is 2"),
])
def test_an_unsupported_actuator_is_refused_by_name(tmp_path, element, kind):
    path = torque_variant(go1.MJCF_PATH, tmp_path / "go1_mixed.xml", 1.0, replace={"FL_thigh": element})
    with pytest.raises(ValueError) as error:
        gym.make_vec(GO1, num_envs=1, num_threads=1, model_path=str(path))
    message = str(error.value)
    assert "'FL_thigh'" in message and kind in message and SUPPORTED_ACTUATORS in message


def test_a_tendon_actuator_is_refused_with_what_is_supported(tmp_path):
    tree = ET.parse(go1.MJCF_PATH)
    root = tree.getroot()
    ET.SubElement(ET.SubElement(root, "tendon"), "fixed", name="fl_thigh").append(
        ET.Element("joint", joint="FL_thigh_joint", coef="1"))
    section = root.find("actuator")
    old = next(e for e in section if e.get("name") == "FL_thigh")
    section.remove(old)
    section.append(ET.Element("motor", name="FL_thigh", tendon="fl_thigh", ctrlrange="-23.7 23.7"))
    path = tmp_path / "go1_tendon.xml"
    tree.write(path)
    with pytest.raises(ValueError, match="FL_thigh_joint.*found 0.*tendon, site and body transmissions are not supported"):
        gym.make_vec(GO1, num_envs=1, num_threads=1, model_path=str(path))


def test_gains_of_the_wrong_length_are_refused(variants):
    with pytest.raises(ValueError, match=r"pd_kp / pd_kd need one gain per driven joint \(12"):
        gym.make_vec(GO1, num_envs=1, num_threads=1, model_path=str(variants[GO1]), pd_kp=(35.0,) * 3, pd_kd=(0.5,) * 3)
    with pytest.raises(ValueError, match="pd_kp / pd_kd must be > 0"):
        gym.make_vec(GO1, num_envs=1, num_threads=1, pd_kp=(0.0,) * 12)


def test_other_gains_reach_the_torque_model_and_its_deploy_spec(variants):
    from unilab_envs.deploy_spec import deploy_spec_for

    kp, kd = tuple(np.linspace(20.0, 31.0, 12)), (0.7,) * 12
    spec = deploy_spec_for(GO1, model_path=str(variants[GO1]), pd_kp=kp, pd_kd=kd)
    assert spec.action.kp == pytest.approx(kp) and spec.action.kd == pytest.approx(kd)
    assert spec.action.torque_limit == pytest.approx((23.7, 23.7, 35.55) * 4)
    assert spec.model.mjcf == str(variants[GO1].resolve())
    shipped = deploy_spec_for(GO1, pd_kp=kp, pd_kd=kd)  # a position model keeps its own gains
    assert shipped.action.kp == pytest.approx(go1.PD_KP)
