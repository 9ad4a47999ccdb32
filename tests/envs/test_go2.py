"""Physical sanity of the Go2-like robot and its task, and its match with the robot side's Go2 motors."""

from __future__ import annotations

import gymnasium as gym
import mujoco
import numpy as np

import unilab_envs  # noqa: F401  (registers the tasks)
from unilab_robot.assets import go2
from unilab_robot.motors import ROBOTS, motor_map

GO2 = "UniLab/Go2Joystick-v0"


def _model() -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_path(str(go2.MJCF_PATH))


def test_robot_facts_match_the_model():
    model = _model()
    assert 15.0 < model.body_subtreemass[model.body(go2.ROOT_BODY).id] < 15.5  # Unitree: ~15 kg
    assert [model.actuator(i).name for i in range(model.nu)] == [n.replace("_joint", "") for n in go2.JOINT_NAMES]
    np.testing.assert_allclose(model.actuator_gainprm[:, 0], go2.PD_KP)
    np.testing.assert_allclose(-model.actuator_biasprm[:, 2], go2.PD_KD)
    np.testing.assert_allclose(model.actuator_forcerange[:, 1], go2.TORQUE_LIMITS)
    assert model.key(go2.HOME_KEYFRAME).id == 0 and model.site(go2.IMU_SITE).id >= 0
    assert all(model.geom(f).type == mujoco.mjtGeom.mjGEOM_SPHERE for f in go2.FOOT_NAMES)


def test_the_joint_order_is_the_sdk_motor_order_and_the_qpos_order():
    assert motor_map(ROBOTS["go2"], go2.JOINT_NAMES).tolist() == list(range(12))
    model = _model()
    assert [int(model.joint(n).qposadr[0]) for n in go2.JOINT_NAMES] == list(range(7, 19))


def test_the_model_is_left_right_symmetric():
    """Each left body is the mirror image (y -> -y) of its right partner: offsets, masses and inertias."""
    model = _model()
    flip = np.diag([1.0, -1.0, 1.0])
    for right in ("FR", "RR"):
        left = right[0] + "L"
        for part in ("hip", "thigh", "calf"):
            r, l = model.body(f"{right}_{part}"), model.body(f"{left}_{part}")
            np.testing.assert_allclose(l.pos, flip @ r.pos)
            np.testing.assert_allclose(l.ipos, flip @ r.ipos)
            np.testing.assert_allclose(l.mass, r.mass)
            np.testing.assert_allclose(l.inertia, r.inertia)
    assert model.body(go2.ROOT_BODY).ipos[1] == 0.0


def test_feet_touch_the_floor_at_the_home_keyframe():
    model = _model()
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key(go2.HOME_KEYFRAME).id)
    mujoco.mj_forward(model, data)
    bottoms = np.array([data.geom(f).xpos[2] - model.geom(f).size[0] for f in go2.FOOT_NAMES])
    assert np.all(np.abs(bottoms) < 1e-3)


def test_stands_at_home_with_zero_action_for_two_seconds():
    env = gym.make_vec(GO2, num_envs=8, spread_episode_starts=False, reset_xy_range=0.0, reset_joint_range=0.0, reset_base_velocity=0.0)
    obs, _ = env.reset(seed=0)
    qpos = env.batch.bind("qpos")
    steps = int(2.0 / env.dt)
    heights = []
    for t in range(steps):
        obs, reward, terminated, truncated, info = env.step(np.zeros((8, 12), np.float32))
        assert not terminated.any()
        heights.append(qpos[:, 2].copy())
    heights = np.array(heights)
    target = env.task.config.base_height_target
    assert np.abs(heights[steps // 2 :] - target).max() < 0.05  # settled on the PD springs near the target
    assert np.ptp(heights[steps // 2 :], axis=0).max() < 0.01  # and stays there (a slow creep of mm, as the Go1)
    assert (obs[:, env.obs_groups["gravity"]][:, 2] < -0.98).all()  # upright
    assert np.abs(qpos[:, :2]).max() < 0.1
    env.close()


def test_random_actions_do_not_diverge():
    env = gym.make_vec(GO2, num_envs=16)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(200):
        obs, reward, terminated, truncated, info = env.step(rng.uniform(-1, 1, (16, 12)).astype(np.float32))
        assert np.isfinite(obs).all() and np.isfinite(reward).all()
        assert np.abs(obs).max() < 1e3
    env.close()


def test_a_fall_terminates():
    env = gym.make_vec(GO2, num_envs=2, spread_episode_starts=False)
    env.reset(seed=0)
    env.batch.bind("qpos")[1, 3:7] = (0.0, 1.0, 0.0, 0.0)  # upside down
    _, _, terminated, truncated, _ = env.step(np.zeros((2, 12), np.float32))
    assert terminated.tolist() == [False, True] and not truncated.any()
    env.close()


def test_a_go2_deploy_spec_finds_the_go2_model_not_the_go1():
    """Same joint and actuator names as our Go1: the packaged-MJCF lookup of a spec must still pick go2.xml."""
    from unilab_envs.deploy_spec import deploy_spec_for
    from unilab_robot.model import load_play_model, packaged_model_path

    spec = deploy_spec_for(GO2)
    assert packaged_model_path(spec) == go2.MJCF_PATH
    model = load_play_model(spec)
    assert model.body(go2.ROOT_BODY).id == 1 and abs(float(model.body_mass.sum()) - 15.2) < 0.1
