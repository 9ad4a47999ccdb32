"""The UR5e-like arm and the ``UniLab/UR5Reach-v0`` task."""

from __future__ import annotations

import math

import gymnasium as gym
import mujoco
import numpy as np
import pytest

from unilab_robot.assets import ur5e
from unilab_envs.tasks.ur5_reach import UR5ReachConfig

TASK = "UniLab/UR5Reach-v0"


def _dh_forward(q: np.ndarray) -> np.ndarray:
    """End-effector position from UR's standard DH table (hand-written, independent of the MJCF)."""
    dh = ur5e.DH
    d = (dh["d1"], 0.0, 0.0, dh["d4"], dh["d5"], dh["d6"])
    a = (0.0, dh["a2"], dh["a3"], 0.0, 0.0, 0.0)
    alpha = (math.pi / 2, 0.0, 0.0, math.pi / 2, -math.pi / 2, 0.0)
    t = np.eye(4)
    for k in range(6):
        ct, st, ca, sa = math.cos(q[k]), math.sin(q[k]), math.cos(alpha[k]), math.sin(alpha[k])
        t = t @ np.array([[ct, -st * ca, st * sa, a[k] * ct], [st, ct * ca, -ct * sa, a[k] * st], [0, sa, ca, d[k]], [0, 0, 0, 1]])
    return t[:3, 3]


def _ik_step(model, data, site, error, damping=0.1):
    """Damped-least-squares joint step that moves ``site`` by ``error``."""
    jacp = np.zeros((3, model.nv))
    mujoco.mj_jacSite(model, data, jacp, None, site)
    return jacp.T @ np.linalg.solve(jacp @ jacp.T + damping**2 * np.eye(3), error)


def test_robot_facts_match_the_model():
    model = mujoco.MjModel.from_xml_path(str(ur5e.MJCF_PATH))
    masses = [model.body(n).mass[0] for n in ("base", "shoulder_link", "upper_arm_link", "forearm_link", "wrist_1_link", "wrist_2_link", "wrist_3_link")]
    np.testing.assert_allclose(masses, [4.0, 3.761, 8.058, 2.846, 1.37, 1.3, 0.365])
    assert [model.actuator(i).name for i in range(model.nu)] == [n.replace("_joint", "") for n in ur5e.JOINT_NAMES]
    ranges = np.array([model.joint(n).range for n in ur5e.JOINT_NAMES])
    np.testing.assert_allclose(ranges[:, 1], [2 * math.pi, 2 * math.pi, math.pi, 2 * math.pi, 2 * math.pi, 2 * math.pi], atol=1e-4)
    np.testing.assert_allclose(model.actuator_gainprm[:, 0], [2000, 2000, 2000, 500, 500, 500])
    np.testing.assert_allclose(model.actuator_forcerange[:, 1], [150, 150, 150, 28, 28, 28])
    assert model.key(ur5e.HOME_KEYFRAME).id == 0 and model.site(ur5e.EE_SITE).id >= 0
    assert model.body_mocapid[model.body(ur5e.TARGET_BODY).id] == 0


def test_link_lengths_match_the_ur5e_dh_table():
    model = mujoco.MjModel.from_xml_path(str(ur5e.MJCF_PATH))
    data = mujoco.MjData(model)
    site = model.site(ur5e.EE_SITE).id
    rng = np.random.default_rng(0)
    for q in [np.zeros(6), model.key("home").qpos, *rng.uniform(-math.pi, math.pi, (5, 6))]:
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        np.testing.assert_allclose(data.site_xpos[site], _dh_forward(q), atol=1e-6)


def test_reward_is_the_sum_of_its_terms():
    env = gym.make_vec(TASK, num_envs=16, spread_episode_starts=False)  # no autoreset within 10 steps
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    weights = dict(zip(env.reward_names, env.task.reward_weights))
    for _ in range(10):
        _, reward, terminated, truncated, info = env.step(rng.uniform(-1, 1, (16, 6)).astype(np.float32))
        terms = np.stack([info["reward_terms"][n] for n in env.reward_names])
        np.testing.assert_allclose(reward, terms.sum(axis=0), rtol=1e-5, atol=1e-6)
        assert not terminated.any()
        distance = np.linalg.norm(env.task.target - env.task.ee_pos, axis=1)
        np.testing.assert_allclose(info["reward_terms"]["distance"], weights["distance"] * distance, rtol=1e-5)
        np.testing.assert_allclose(info["reward_terms"]["distance_fine"], weights["distance_fine"] * (1 - np.tanh(distance / 0.1)), rtol=1e-4, atol=1e-7)
        np.testing.assert_array_equal(info["is_success"], distance < 0.05)
    assert env.task.reward_weights[0] == pytest.approx(-2.0 * 0.04)
    env.close()


def test_holds_still_at_home_with_zero_action_for_two_seconds():
    env = gym.make_vec(TASK, num_envs=4, spread_episode_starts=False, reset_joint_range=0.0)
    obs, _ = env.reset(seed=0)
    ee_start = env.task.ee_pos.copy()
    qpos = env.batch.bind("qpos")
    for _ in range(int(2.0 / env.dt)):
        obs, reward, terminated, truncated, _ = env.step(np.zeros((4, 6), np.float32))
        assert not terminated.any() and not truncated.any()
    np.testing.assert_allclose(qpos, np.tile(env.task._home, (4, 1)), atol=1e-4)
    np.testing.assert_allclose(env.task.ee_pos, ee_start, atol=1e-4)
    assert np.abs(obs[:, env.obs_groups["joint_vel"]]).max() < 1e-3
    env.close()


def test_stable_across_sim_timesteps_under_random_actions():
    for sim_dt in (0.002, 0.005):
        env = gym.make_vec(TASK, num_envs=8, sim_dt=sim_dt)
        env.reset(seed=1)
        rng = np.random.default_rng(1)
        for _ in range(50):
            obs, _, _, _, info = env.step(rng.uniform(-1, 1, (8, 6)).astype(np.float32))
            assert not info["diverged"].any() and np.isfinite(obs).all()
        env.close()


def test_targets_lie_in_the_reachable_workspace():
    cfg = UR5ReachConfig()
    env = gym.make_vec(TASK, num_envs=256)
    env.reset(seed=7)
    target = env.task.target
    radius = np.hypot(target[:, 0], target[:, 1])
    azimuth = np.arctan2(target[:, 1], target[:, 0]) - ur5e.FRONT_AZIMUTH
    assert (radius >= cfg.target_radius[0]).all() and (radius <= cfg.target_radius[1]).all()
    assert (azimuth >= cfg.target_azimuth[0]).all() and (azimuth <= cfg.target_azimuth[1]).all()
    assert (target[:, 2] >= cfg.target_height[0]).all() and (target[:, 2] <= cfg.target_height[1]).all()
    np.testing.assert_allclose(env.batch.bind("mocap_pos")[:, 0], target)  # the marker shows it
    # reachable: kinematic IK from home gets the end effector onto each target
    model, data = env.model, mujoco.MjData(env.model)
    site = model.site(ur5e.EE_SITE).id
    for i in range(0, 256, 8):
        data.qpos[:] = env.task._home
        for _ in range(100):
            mujoco.mj_kinematics(model, data)
            mujoco.mj_comPos(model, data)
            error = target[i] - data.site_xpos[site]
            data.qpos[:] += _ik_step(model, data, site, error, damping=0.05)
        assert np.linalg.norm(error) < 1e-3, f"target {target[i]} not reached by IK"
    env.close()


def test_is_success_fires_when_a_scripted_controller_reaches_the_target():
    n = 16
    env = gym.make_vec(TASK, num_envs=n, spread_episode_starts=False)
    obs, info = env.reset(seed=5)
    groups, home, scale = env.obs_groups, env.task._home, env.task.config.action_scale
    assert not info["is_success"].any()
    model, data = env.model, mujoco.MjData(env.model)
    site = model.site(ur5e.EE_SITE).id
    successes = []
    for _ in range(40):
        actions = np.zeros((n, 6), np.float32)
        for i in range(n):
            data.qpos[:] = obs[i, groups["joint_pos"]] + home
            mujoco.mj_kinematics(model, data)
            mujoco.mj_comPos(model, data)
            dq = _ik_step(model, data, site, obs[i, groups["ee_to_target"]].astype(np.float64))
            target_q = obs[i, groups["joint_target"]] + home
            actions[i] = np.clip(0.5 * (data.qpos + dq - target_q) / scale, -1, 1)
        obs, reward, _, _, info = env.step(actions)
        successes.append(info["is_success"].copy())
    assert np.stack(successes[-10:]).all(), "the scripted reacher should hold every target for the last 10 steps"
    distance = np.linalg.norm(obs[:, groups["ee_to_target"]], axis=1)
    assert (distance < 0.05).all()
    assert (info["reward_terms"]["success"] > 0).all() and (reward > 0).all()
    env.close()


def test_observation_layout_and_current_end_effector():
    env = gym.make_vec(TASK, num_envs=3, spread_episode_starts=False)
    obs, _ = env.reset(seed=0)
    groups = env.obs_groups
    assert sum(s.stop - s.start for s in groups.values()) == env.single_observation_space.shape[0] == 33
    assert env.single_action_space.shape == (6,) and env.dt == pytest.approx(0.04)
    obs, *_ = env.step(np.full((3, 6), 0.5, np.float32))
    np.testing.assert_allclose(obs[:, groups["last_action"]], 0.5)
    np.testing.assert_allclose(obs[:, groups["joint_target"]] - obs[:, groups["joint_pos"]], env.task.joint_target - env.batch.bind("qpos"), atol=1e-5)
    np.testing.assert_allclose(obs[:, groups["ee_to_target"]], obs[:, groups["target"]] - obs[:, groups["ee_pos"]], atol=1e-6)
    # ee_pos is the kinematics of the current qpos (step_stage = mjSTAGE_POS), not a substep behind
    data = mujoco.MjData(env.model)
    for i in range(3):
        data.qpos[:] = env.batch.bind("qpos")[i]
        mujoco.mj_kinematics(env.model, data)
        np.testing.assert_allclose(obs[i, groups["ee_pos"]], data.site_xpos[env.model.site(ur5e.EE_SITE).id], atol=1e-6)
    env.close()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"action_scal": 0.1}, TypeError, "Did you mean 'action_scale'"),
        ({"reward_scales": {"distanc": 1.0}}, TypeError, "distance"),
        ({"action_scale": 0.0}, ValueError, "action_scale"),
        ({"target_radius": (0.6, 0.3)}, ValueError, "target_radius"),
        ({"target_radius": (0.3, 1.5)}, ValueError, "reach"),
        ({"target_azimuth": (-4.0, 1.0)}, ValueError, "target_azimuth"),
        ({"success_threshold": 0.0}, ValueError, "success_threshold"),
        ({"control_dt": 0.03, "sim_dt": 0.004}, ValueError, "whole multiple"),
        ({"model_path": "/nonexistent/ur5e.xml"}, FileNotFoundError, "model_path"),
    ],
)
def test_bad_config_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        gym.make_vec(TASK, num_envs=1, **kwargs)


def test_runs_on_a_menagerie_style_model_without_a_target_marker(tmp_path):
    xml = ur5e.MJCF_PATH.read_text()
    start = xml.index('<body name="target"')
    xml = xml[:start] + xml[xml.index("</body>", start) + len("</body>") :]
    path = tmp_path / "ur5e_no_marker.xml"
    path.write_text(xml)
    env = gym.make_vec(TASK, num_envs=2, model_path=str(path))
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(np.zeros((2, 6), np.float32))
    assert env.model.nmocap == 0 and np.isfinite(obs).all()
    env.close()
