"""Physical sanity of the Go1-like robot and its task."""

from __future__ import annotations

import gymnasium as gym
import mujoco
import numpy as np

from unilab_robot.assets import go1


def test_robot_facts_match_the_model():
    model = mujoco.MjModel.from_xml_path(str(go1.MJCF_PATH))
    assert 12.0 < model.body_subtreemass[model.body("trunk").id] < 13.5
    assert [model.actuator(i).name for i in range(model.nu)] == [n.replace("_joint", "") for n in go1.JOINT_NAMES]
    assert all(model.joint(n) is not None for n in go1.JOINT_NAMES)
    np.testing.assert_allclose(model.actuator_gainprm[:, 0], 35.0)
    assert model.key("home").id == 0 and model.site("imu").id >= 0


def test_stands_at_home_with_zero_action_for_two_seconds():
    env = gym.make_vec("UniLab/Go1Joystick-v0", num_envs=8, spread_episode_starts=False, reset_xy_range=0.0, reset_joint_range=0.0, reset_base_velocity=0.0)
    obs, _ = env.reset(seed=0)
    qpos = env.batch.bind("qpos")
    steps = int(2.0 / env.dt)
    for t in range(steps):
        if t == steps // 2:
            settled_xy = qpos[:, :2].copy()  # after the sag onto the PD springs
        obs, reward, terminated, truncated, info = env.step(np.zeros((8, 12), np.float32))
        assert not terminated.any()
    height = qpos[:, 2]
    assert (height > 0.22).all() and (height < 0.30).all()
    gravity_z = obs[:, env.obs_groups["gravity"]][:, 2]
    assert (gravity_z < -0.98).all()  # upright
    assert np.abs(qpos[:, :2]).max() < 0.1  # settles in place
    assert np.abs(qpos[:, :2] - settled_xy).max() < 0.01  # and does not drift once settled
    env.close()


def test_observation_layout_by_group():
    env = gym.make_vec("UniLab/Go1Joystick-v0", num_envs=2, spread_episode_starts=False)
    obs, _ = env.reset(seed=0)
    groups = env.obs_groups
    assert sum(s.stop - s.start for s in groups.values()) == env.single_observation_space.shape[0] == 50
    np.testing.assert_allclose(obs[:, groups["command"]], env.task.command, rtol=1e-6)
    phase = obs[:, groups["phase"]]
    np.testing.assert_allclose(phase[:, 0] ** 2 + phase[:, 1] ** 2, 1.0, rtol=1e-5)
    actions = np.full((2, 12), 0.25, np.float32)
    obs, *_ = env.step(actions)
    np.testing.assert_allclose(obs[:, groups["last_action"]], 0.25)
    qpos = env.batch.bind("qpos")
    np.testing.assert_allclose(obs[:, groups["joint_pos"]], qpos[:, 7:19] - env.task._home, rtol=1e-5, atol=1e-6)
    assert env.privileged_observation_space.shape == (25,)
    env.close()


def test_a_fall_terminates():
    env = gym.make_vec("UniLab/Go1Joystick-v0", num_envs=2, spread_episode_starts=False)
    env.reset(seed=0)
    qpos = env.batch.bind("qpos")
    qpos[1, 3:7] = (0.0, 1.0, 0.0, 0.0)  # upside down
    _, reward, terminated, truncated, info = env.step(np.zeros((2, 12), np.float32))
    assert terminated.tolist() == [False, True] and not truncated.any()
    assert info["reward_terms"]["termination"][1] < 0 and info["reward_terms"]["termination"][0] == 0
    env.close()


def test_runs_on_a_menagerie_style_model_path(tmp_path):
    xml = go1.MJCF_PATH.read_text().replace('model="unilab_go1"', 'model="user_go1"')
    path = tmp_path / "my_go1.xml"
    path.write_text(xml)
    env = gym.make_vec("UniLab/Go1Joystick-v0", num_envs=2, model_path=str(path))
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(np.zeros((2, 12), np.float32))
    assert np.isfinite(obs).all()
    env.close()
