"""The NumPy reference path rebuilds the env's observation and ctrl from a plain MjData and the deploy spec."""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium as gym
import mujoco
import numpy as np
import pytest

import unilab_envs  # noqa: F401
from unilab_robot.assets import go1, ur5e
from unilab_robot.deploy import ControllerState, PolicyIO, SpecError
from unilab_envs.deploy_spec import spec_from_env

TASKS = ["UniLab/Go1Joystick-v0", "UniLab/G1Joystick-v0", "UniLab/UR5Reach-v0"]
N = 8


def _controller_state(task, i: int) -> ControllerState:
    """Env ``i``'s controller state, read from the task's public per-env arrays."""
    get = lambda name: np.array(getattr(task, name)[i]) if hasattr(task, name) else None  # noqa: E731
    return ControllerState(last_action=get("last_action"), command=get("command") if hasattr(task, "command") else np.zeros(0),
                           phase=float(task.phase[i]) if hasattr(task, "phase") else 0.0,
                           joint_target=get("joint_target"), target=get("target"))


def _random_states(env, rng, steps: int = 12):
    obs, _ = env.reset(seed=int(rng.integers(1000)))
    for _ in range(steps):
        obs, *_ = env.step(rng.uniform(-1, 1, (N, env.single_action_space.shape[0])).astype(np.float32))
    return obs


def _assert_reference_matches_env(env_id: str, **kwargs) -> None:
    env = gym.make_vec(env_id, num_envs=N, num_threads=1, **kwargs)
    try:
        spec = spec_from_env(env, env_id)
        base = env.unwrapped
        model = base.batch.get_model(0)
        data = mujoco.MjData(model)
        io = PolicyIO(spec, model)
        rng = np.random.default_rng(0)
        for _ in range(3):
            obs = _random_states(env, rng)
            for i in range(N):
                base.batch.get_data(i, data)  # the state; derived fields are the reference's job
                io.refresh(data)
                ref = io.observe(data, _controller_state(base.task, i))
                assert ref.dtype == np.float32 and ref.shape == obs[i].shape
                np.testing.assert_allclose(ref, obs[i], rtol=1e-6, atol=1e-6, err_msg=f"{env_id} env {i}")
    finally:
        env.close()


@pytest.mark.parametrize("env_id", TASKS)
def test_reference_observation_equals_env_observation(env_id):
    _assert_reference_matches_env(env_id)


@pytest.mark.parametrize("env_id", TASKS)
def test_reference_action_mapping_equals_env_ctrl(env_id):
    env = gym.make_vec(env_id, num_envs=N, num_threads=1)
    try:
        spec, base = spec_from_env(env, env_id), env.unwrapped
        _random_states(env, np.random.default_rng(1))
        io = PolicyIO(spec, base.batch.get_model(0))
        before = [_controller_state(base.task, i) for i in range(N)]
        actions = np.random.default_rng(2).uniform(-1.5, 1.5, (N, spec.action.size)).astype(np.float32)
        base.task.apply_actions(actions)  # the Numba kernel writes the batch's ctrl
        data = mujoco.MjData(io.model)
        for i in range(N):
            base.batch.get_data(i, data)
            ctrl = np.zeros(io.model.nu)
            io.apply_action(actions[i], before[i], ctrl)
            np.testing.assert_allclose(ctrl, data.ctrl, rtol=0, atol=1e-12)
            np.testing.assert_allclose(before[i].last_action, np.clip(actions[i], -1, 1))
    finally:
        env.close()


def _shifted_go1(tmp_path: Path) -> Path:
    """Go1 with a free box before the robot (every qpos/qvel address moves) and its actuators in reverse order."""
    xml = go1.MJCF_PATH.read_text()
    xml = xml.replace("<worldbody>", '<worldbody>\n    <body name="box" pos="3 3 0.2"><freejoint/>'
                                     '<geom type="box" size="0.05 0.05 0.05"/></body>', 1)
    block = re.search(r"<actuator>(.*?)</actuator>", xml, re.S)
    lines = [line for line in block.group(1).splitlines() if line.strip()]
    xml = xml.replace(block.group(1), "\n" + "\n".join(reversed(lines)) + "\n  ")
    # the keyframe holds one qpos per dof: give the box its 7 first
    xml = re.sub(r'qpos="', 'qpos="3 3 0.2 1 0 0 0 ', xml, count=1)
    xml = re.sub(r'ctrl="([^"]*)"', lambda m: 'ctrl="' + " ".join(reversed(m.group(1).split())) + '"', xml)
    path = tmp_path / "go1_shifted.xml"
    path.write_text(xml)
    return path


def _shifted_ur5(tmp_path: Path) -> Path:
    """UR5e with a hinge-jointed flap before the arm, so the arm's joint addresses move."""
    xml = ur5e.MJCF_PATH.read_text()
    xml = xml.replace("<worldbody>", '<worldbody>\n    <body name="flap" pos="1 1 0.1"><joint name="flap" type="hinge"/>'
                                     '<geom type="box" size="0.05 0.05 0.05" contype="0" conaffinity="0"/></body>', 1)
    xml = re.sub(r'qpos="', 'qpos="0 ', xml, count=1)
    path = tmp_path / "ur5e_shifted.xml"
    path.write_text(xml)
    return path


def test_reference_follows_names_on_a_model_given_by_model_path(tmp_path):
    _assert_reference_matches_env("UniLab/Go1Joystick-v0", model_path=str(_shifted_go1(tmp_path)))
    _assert_reference_matches_env("UniLab/UR5Reach-v0", model_path=str(_shifted_ur5(tmp_path)))


def test_spec_of_a_model_path_names_that_model(tmp_path):
    path = _shifted_go1(tmp_path)
    env = gym.make_vec("UniLab/Go1Joystick-v0", num_envs=1, num_threads=1, model_path=str(path))
    try:
        spec = spec_from_env(env, "UniLab/Go1Joystick-v0")
    finally:
        env.close()
    assert spec.model.mjcf == str(path.resolve())
    assert spec.model.actuator_names[0] == "RL_calf" and spec.action.actuator_names[0] == "FR_hip"
    assert spec.model.joint_names[:2] == ("", "root") and len(spec.model.joint_names) == 14  # the box's, the trunk's


def test_a_model_without_the_spec_names_is_refused(tmp_path):
    env = gym.make_vec("UniLab/Go1Joystick-v0", num_envs=1, num_threads=1)
    try:
        spec = spec_from_env(env, "UniLab/Go1Joystick-v0")
    finally:
        env.close()
    xml = go1.MJCF_PATH.read_text().replace('"FL_calf_joint"', '"front_left_knee"')
    model = mujoco.MjModel.from_xml_string(xml)
    with pytest.raises(SpecError, match=r"no joint named \['FL_calf_joint'\]"):
        PolicyIO(spec, model)
