"""The G1-like humanoid and its joystick task: model facts, standing, layout, rewards, config errors."""

from __future__ import annotations

import math

import gymnasium as gym
import mujoco
import numpy as np
import pytest

from unilab_robot.assets import g1
from unilab_envs.tasks.g1_joystick import OBS_GROUPS, PRIVILEGED_GROUPS, REWARD_NAMES

ENV_ID = "UniLab/G1Joystick-v0"
QUIET = dict(spread_episode_starts=False, reset_xy_range=0.0, reset_joint_range=0.0, reset_base_velocity=0.0)


@pytest.fixture(scope="module")
def model():
    return mujoco.MjModel.from_xml_path(str(g1.MJCF_PATH))


def test_robot_facts_match_the_model(model):
    assert 33.0 < model.body_subtreemass[model.body("pelvis").id] < 36.0
    assert model.nu == len(g1.JOINT_NAMES) == 29
    assert [model.actuator(i).name for i in range(model.nu)] == list(g1.JOINT_NAMES)
    for i, name in enumerate(g1.JOINT_NAMES):
        assert model.actuator_trnid[i, 0] == model.joint(name).id
    key = model.key(g1.STAND_KEYFRAME)
    stand_qpos = [key.qpos[model.jnt_qposadr[model.joint(n).id]] for n in g1.JOINT_NAMES]
    np.testing.assert_allclose(stand_qpos, g1.STAND_POSE)
    np.testing.assert_allclose(key.ctrl, g1.STAND_POSE)  # PD targets at the pose
    assert key.qpos[2] == pytest.approx(g1.STAND_HEIGHT)
    assert model.site(g1.IMU_SITE).bodyid == model.body(g1.ROOT_BODY).id
    assert model.joint(model.body(g1.ROOT_BODY).jntadr[0]).type == mujoco.mjtJoint.mjJNT_FREE
    knee = model.joint("left_knee_joint").range
    assert knee[0] < 0.0 < 2.8 < knee[1] < 2.9
    np.testing.assert_allclose(model.joint("left_hip_pitch_joint").range, (-2.5307, 2.8798))
    np.testing.assert_allclose(model.actuator("left_knee_joint").forcerange, (-139.0, 139.0))
    np.testing.assert_allclose(model.actuator("left_shoulder_pitch_joint").forcerange, (-25.0, 25.0))
    # collision: the robot never collides with itself; feet, pelvis and torso touch the floor
    robot = model.geom_bodyid > 0
    assert not (model.geom_contype[robot] & model.geom_conaffinity[robot][:, None]).any()
    colliding = {model.geom(g).name for g in np.flatnonzero(robot & (model.geom_conaffinity > 0))}
    assert colliding == {"left_foot", "right_foot", "pelvis", "torso"}


def test_model_stands_on_its_pd_targets_in_mujoco(model):
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key(g1.STAND_KEYFRAME).id)
    for _ in range(int(3.0 / model.opt.timestep)):
        mujoco.mj_step(model, data)
    assert data.qpos[2] > 0.75
    assert np.abs(data.qpos[:2]).max() < 0.03
    assert np.abs(data.qvel).max() < 0.05  # at rest


def test_stands_with_zero_action_for_two_seconds():
    env = gym.make_vec(ENV_ID, num_envs=4, **QUIET)
    obs, _ = env.reset(seed=0)
    qpos = env.batch.bind("qpos")
    start_xy = qpos[:, :2].copy()
    for _ in range(int(2.0 / env.dt)):
        obs, reward, terminated, truncated, info = env.step(np.zeros((4, 29), np.float32))
        assert not terminated.any()
    assert (qpos[:, 2] > 0.75).all() and (qpos[:, 2] < 0.80).all()
    assert (obs[:, OBS_GROUPS["gravity"]][:, 2] < -0.995).all()  # upright
    assert np.abs(qpos[:, :2] - start_xy).max() < 0.03  # no drift
    assert np.abs(obs[:, OBS_GROUPS["joint_pos"]]).max() < 0.1  # near the standing pose
    np.testing.assert_array_equal(info["privileged_obs"][:, PRIVILEGED_GROUPS["foot_contact"]], 1.0)
    env.close()


def test_observation_layout_by_name():
    assert list(OBS_GROUPS) == ["linvel", "gyro", "gravity", "joint_pos", "joint_vel", "last_action", "command", "phase"]
    sizes = {name: s.stop - s.start for name, s in OBS_GROUPS.items()}
    assert sizes == {"linvel": 3, "gyro": 3, "gravity": 3, "joint_pos": 29, "joint_vel": 29, "last_action": 29,
                     "command": 3, "phase": 2}
    starts = [s.start for s in OBS_GROUPS.values()]
    assert starts == [0, 3, 6, 9, 38, 67, 96, 99]

    n = 2
    env = gym.make_vec(ENV_ID, num_envs=n, **QUIET)
    assert env.single_observation_space.shape == (101,) and env.single_action_space.shape == (29,)
    assert env.privileged_observation_space.shape == (45,)
    env.reset(seed=0)
    task = env.task
    qpos, qvel = env.batch.bind("qpos"), env.batch.bind("qvel")
    joint_q = [env.model.jnt_qposadr[env.model.joint(name).id] for name in g1.JOINT_NAMES]
    joint_d = [env.model.jnt_dofadr[env.model.joint(name).id] for name in g1.JOINT_NAMES]
    offsets = np.linspace(-0.05, 0.05, 29)
    velocities = np.arange(29) * 0.1 - 1.0
    roll = 0.3
    for i in range(n):
        qpos[i, 3:7] = (math.cos(roll / 2), math.sin(roll / 2), 0.0, 0.0)
        qvel[i, 0:3] = (0.4, 0.0, 0.0)  # world frame; the pelvis is rolled about x, so x stays x
        qvel[i, 3:6] = (0.1 + i, -0.2, 0.3)
        qpos[i, joint_q] = task.stand_pose + offsets * (i + 1)
        qvel[i, joint_d] = velocities * (i + 1)
    task.command[:] = [[0.5, -0.25, 0.75], [-0.4, 0.1, 0.0]]
    task.phase[:] = [0.0, 1.0]
    task.last_action[:] = np.linspace(-1.0, 1.0, 29)
    env.batch.forward()
    obs = np.zeros((n, 101), np.float32)
    privileged = np.zeros((n, 45), np.float32)
    task.observe(np.arange(n, dtype=np.int32), obs, privileged)

    def read(name):
        return obs[:, OBS_GROUPS[name]]

    np.testing.assert_allclose(read("linvel"), [[0.4, 0.0, 0.0]] * n, atol=1e-6)
    np.testing.assert_allclose(read("gyro"), [[0.1, -0.2, 0.3], [1.1, -0.2, 0.3]], rtol=1e-6)
    np.testing.assert_allclose(read("gravity"), [[0.0, -math.sin(roll), -math.cos(roll)]] * n, atol=1e-6)
    np.testing.assert_allclose(read("joint_pos"), [offsets, 2 * offsets], atol=1e-6)
    np.testing.assert_allclose(read("joint_vel"), [velocities, 2 * velocities], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(read("last_action"), [np.linspace(-1.0, 1.0, 29)] * n, rtol=1e-6)
    np.testing.assert_allclose(read("command"), task.command, rtol=1e-6)
    np.testing.assert_allclose(read("phase"), [[0.0, 1.0], [math.sin(1.0), math.cos(1.0)]], atol=1e-6)
    np.testing.assert_allclose(privileged[:, PRIVILEGED_GROUPS["height"]][:, 0], qpos[:, 2], rtol=1e-6)

    # a step writes the action it was given into last_action
    action = np.full((n, 29), 0.5, np.float32)
    action[:, 3] = -0.25
    step_obs, *_ = env.step(action)
    np.testing.assert_allclose(step_obs[:, OBS_GROUPS["last_action"]], action)
    np.testing.assert_allclose(step_obs[:, OBS_GROUPS["command"]], task.command, rtol=1e-6)
    env.close()


def test_reward_is_the_sum_of_seventeen_named_terms():
    assert len(REWARD_NAMES) == 17
    env = gym.make_vec(ENV_ID, num_envs=8)
    assert env.reward_names == REWARD_NAMES
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(25):
        action = rng.uniform(-1.0, 1.0, (8, 29)).astype(np.float32)
        _, reward, _, _, info = env.step(action)
        terms = np.stack([info["reward_terms"][name] for name in REWARD_NAMES])
        np.testing.assert_allclose(reward, terms.sum(axis=0), rtol=1e-5, atol=1e-6)
        assert np.isfinite(terms).all()
    env.close()


def test_a_fall_terminates_with_the_termination_penalty():
    env = gym.make_vec(ENV_ID, num_envs=3, **QUIET)
    env.reset(seed=0)
    qpos = env.batch.bind("qpos")
    qpos[1, 3:7] = (math.cos(0.6), math.sin(0.6), 0.0, 0.0)  # tilted 1.2 rad
    qpos[2, 2] = 0.3  # pelvis on the floor
    _, _, terminated, truncated, info = env.step(np.zeros((3, 29), np.float32))
    assert terminated.tolist() == [False, True, True] and not truncated.any()
    penalty = info["reward_terms"]["termination"]
    assert penalty[0] == 0.0 and (penalty[1:] < 0).all()
    env.close()


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(action_scael=0.3), TypeError, "action_scale"),
        (dict(reward_scales={"tracking_lin": 1.0}), TypeError, "tracking_lin_vel"),
        (dict(gait_frequency=0.0), ValueError, "gait_frequency"),
        (dict(command_vx=(1.0, -1.0)), ValueError, "command_vx"),
        (dict(control_dt=0.021), ValueError, "whole multiple"),
        (dict(max_tilt=4.0), ValueError, "max_tilt"),
        (dict(reward_scales={"pose": float("nan")}), ValueError, "pose"),
        (dict(model_path="/nowhere/g1.xml"), FileNotFoundError, "does not exist"),
    ],
)
def test_bad_config_is_rejected_clearly(kwargs, error, match):
    with pytest.raises(error, match=match):
        gym.make_vec(ENV_ID, num_envs=2, **kwargs)


def test_a_model_without_g1_names_is_rejected(tmp_path):
    xml = g1.MJCF_PATH.read_text().replace('"left_knee_joint"', '"knee_l"')
    path = tmp_path / "renamed.xml"
    path.write_text(xml)
    with pytest.raises(ValueError, match="left_knee_joint"):
        gym.make_vec(ENV_ID, num_envs=2, model_path=str(path))


def test_the_positive_clip_zeroes_the_shaped_reward_but_keeps_the_fall_penalty():
    """legged_gym's only_positive_rewards: a step's shaped reward is clipped at zero, the
    termination penalty is added after the clip (so falling always costs)."""
    env = gym.make_vec(ENV_ID, num_envs=2, **QUIET, reward_scales={"orientation": -200.0})
    env.reset(seed=0)
    qpos = env.batch.bind("qpos")
    qpos[0, 3:7] = (math.cos(0.2), math.sin(0.2), 0.0, 0.0)  # tilted 0.4 rad: a large orientation penalty, upright enough
    qpos[1, 3:7] = (math.cos(0.6), math.sin(0.6), 0.0, 0.0)  # tilted 1.2 rad: a fall
    _, reward, terminated, _, info = env.step(np.zeros((2, 29), np.float32))
    terms = info["reward_terms"]
    shaped = sum(v for k, v in terms.items() if k not in ("termination", "positive_clip"))
    assert terminated.tolist() == [False, True]
    assert shaped[0] < 0 and terms["positive_clip"][0] == pytest.approx(-shaped[0], rel=1e-5)
    assert reward[0] == pytest.approx(0.0, abs=1e-6)
    assert reward[1] == pytest.approx(terms["termination"][1] + max(0.0, shaped[1]), abs=1e-6) and reward[1] < 0
    assert terms["alive"][0] > 0 and terms["alive"][1] == 0.0
