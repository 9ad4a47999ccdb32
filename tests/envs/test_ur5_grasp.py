"""The UR5e + 2F-85-like gripper scene and the ``UniLab/UR5Grasp-v0`` task."""

from __future__ import annotations

import gymnasium as gym
import mujoco
import numpy as np
import pytest

from unilab_robot.assets import ur5e_2f85 as scene
from unilab_envs.tasks.ur5_grasp_kernels import IX_CUBE_Q, IX_PINCH

TASK = "UniLab/UR5Grasp-v0"


def _scene(timestep: float, mass: float, friction: float):
    model = mujoco.MjModel.from_xml_path(str(scene.MJCF_PATH))
    model.opt.timestep = timestep
    cube = model.body(scene.OBJECT_BODY).id
    model.body_mass[cube] = mass
    model.body_inertia[cube] = mass * 0.05**2 / 6  # solid 5 cm cube
    model.geom_friction[model.geom(scene.OBJECT_BODY).id, 0] = friction
    data = mujoco.MjData(model)
    mujoco.mj_setConst(model, data)
    mujoco.mj_resetDataKeyframe(model, data, model.key(scene.HOME_KEYFRAME).id)
    return model, data


def _move(model, data, goal, grip, steps, site, down, speed=0.02):
    """Resolved-rate control at 25 Hz: each step, joint targets = q + J+ (pose error), the
    pinch point moving toward ``goal`` at ``speed`` m per step with the home orientation."""
    jacp, jacr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    for _ in range(steps):
        pos, rot = data.site_xpos[site], data.site_xmat[site].reshape(3, 3)
        delta = goal - pos
        delta *= min(1.0, speed / max(np.linalg.norm(delta), 1e-9))
        mujoco.mj_jacSite(model, data, jacp, jacr, site)
        jac = np.vstack([jacp[:, :6], jacr[:, :6]])
        error = np.concatenate([delta, 0.5 * sum(np.cross(rot[:, k], down[:, k]) for k in range(3))])
        data.ctrl[:6] = data.qpos[:6] + jac.T @ np.linalg.solve(jac @ jac.T + 1e-4 * np.eye(6), error)
        data.ctrl[6] = grip
        for _ in range(round(0.04 / model.opt.timestep)):
            mujoco.mj_step(model, data)


@pytest.mark.parametrize("timestep, mass, friction", [(0.004, 0.05, 1.0), (0.004, 0.25, 0.5), (0.002, 0.1, 0.8)])
def test_a_scripted_pick_lifts_and_holds_the_cube(timestep, mass, friction):
    """Open-loop pick (above, descend open, close, lift 20 cm, hold 1 s): the physics allows a
    grasp at the lightest / heaviest, most / least slippery ends of the task's ranges."""
    model, data = _scene(timestep, mass, friction)
    cube_q = model.jnt_qposadr[model.body(scene.OBJECT_BODY).jntadr[0]]
    data.qpos[cube_q : cube_q + 3] = [-0.05, 0.55, 0.025]
    mujoco.mj_forward(model, data)
    site = model.site(scene.PINCH_SITE).id
    down = data.site_xmat[site].reshape(3, 3).copy()
    start = data.qpos[cube_q : cube_q + 3].copy()
    closed = model.actuator(scene.GRIPPER_ACTUATOR).ctrlrange[1]
    _move(model, data, start + [0, 0, 0.12], 0.0, 30, site, down)
    _move(model, data, start, 0.0, 20, site, down)
    np.testing.assert_allclose(data.qpos[cube_q : cube_q + 3], start, atol=2e-3)  # the open pads straddle it untouched
    _move(model, data, start, closed, 15, site, down)
    sensors = data.sensordata.reshape(2, 4)  # per pad: contacts found, net force (3)
    assert (sensors[:, 0] > 0).all(), "both pads touch the cube"
    np.testing.assert_allclose(np.linalg.norm(sensors[:, 1:], axis=1), 20.0, rtol=0.4)  # 40 N shared by the pads
    _move(model, data, start + [0, 0, 0.2], closed, 45, site, down)  # lift, then hold (about 1 s at the top)
    pinch, cube = data.site_xpos[site], data.qpos[cube_q : cube_q + 3]
    assert cube[2] - start[2] > 0.18, f"the cube rose {cube[2] - start[2]:.3f} m of 0.2"
    assert np.linalg.norm(cube - pinch) < 0.015, "the cube stays between the pads"
    assert all(w.number == 0 for w in data.warning)


def test_scene_facts_match_the_model():
    model = mujoco.MjModel.from_xml_path(str(scene.MJCF_PATH))
    gripper = ("base_mount", "gripper_base", "left_pad", "right_pad")
    assert sum(model.body(n).mass[0] for n in gripper) == pytest.approx(0.925)  # Robotiq 2F-85 datasheet
    stroke = model.joint("left_slide").range[1] * 2
    assert stroke == pytest.approx(0.085)
    assert model.actuator(scene.GRIPPER_ACTUATOR).forcerange[1] == pytest.approx(40.0)
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key(scene.HOME_KEYFRAME).id)
    mujoco.mj_forward(model, data)
    np.testing.assert_allclose(data.site_xmat[model.site(scene.PINCH_SITE).id].reshape(3, 3)[:, 2], [0, 0, -1], atol=1e-4)
    pads = [data.xpos[model.body(n).id] for n in scene.PAD_BODIES]
    assert np.linalg.norm(pads[0] - pads[1]) - 0.008 == pytest.approx(0.085, abs=1e-6)  # open: 85 mm between the pad faces


# --- the task ------------------------------------------------------------------------


class ScriptedPick:
    """Above the cube, descend open, close, lift: a per-env phase machine over the
    observation (``object_pos`` = cube - pinch), the actions the task's controller takes."""

    def __init__(self, num_envs: int, action_scale: float = 0.02) -> None:
        self.phase = np.zeros(num_envs, int)
        self.timer = np.zeros(num_envs, int)
        self.scale = action_scale

    def restart(self, mask: np.ndarray) -> None:
        self.phase[mask] = 0
        self.timer[mask] = 0

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        goal = obs[:, 20:23].astype(float)
        goal[self.phase == 0, 2] += 0.08  # first 8 cm above the cube
        near = np.linalg.norm(goal, axis=1) < 0.01
        actions = np.zeros((len(obs), 4), np.float32)
        actions[:, :3] = np.where((self.phase <= 1)[:, None], np.clip(goal / self.scale, -1, 1), 0.0)
        actions[:, 3] = np.where(self.phase >= 2, 1.0, -1.0)
        actions[self.phase == 3, 2] = 1.0
        before = self.phase.copy()
        self.phase[(before <= 1) & near] += 1
        self.timer[before == 2] += 1
        self.phase[(before == 2) & (self.timer > 12)] = 3
        return actions


def _grasp_env(num_envs: int, **kwargs):
    return gym.make_vec(TASK, num_envs=num_envs, spread_episode_starts=False, **kwargs)


def test_a_scripted_policy_picks_through_the_task_and_succeeds():
    """Through the env's own controller and termination: most picks end as successes within
    about 2.5 s; a success ends the episode exactly after 25 steps (1 s) of holding."""
    n = 32
    env = _grasp_env(n)
    obs, _ = env.reset(seed=1)
    policy = ScriptedPick(n)
    finished, success, holding_run = np.zeros(n, bool), np.zeros(n, bool), np.zeros(n, int)
    weights = dict(zip(env.reward_names, env.task.reward_weights))
    for _ in range(125):
        obs, _, terminated, truncated, info = env.step(policy(obs))
        holds = info["reward_terms"]["hold"] > 0
        holding_run = np.where(holds, holding_run + 1, 0)
        ended = (terminated | truncated) & ~finished
        success[ended] = info["is_success"][ended]
        won = ended & info["is_success"]
        assert (holding_run[won] == 25).all() and terminated[won].all()
        np.testing.assert_allclose(info["reward_terms"]["success"][won], weights["success"])
        assert (info["reward_terms"]["success"][~info["is_success"]] == 0).all()
        finished |= terminated | truncated
        policy.restart(terminated | truncated)
    assert success.mean() >= 0.9, f"scripted success {success.mean():.2f}"
    env.close()


def test_reward_is_the_sum_of_its_terms_and_each_term_is_what_it_says():
    n = 16
    env = _grasp_env(n, reward_scales={"hold_break": -100.0, "overlift": -4.0})  # off by default: on, to check them
    obs, _ = env.reset(seed=3)
    cfg = env.task.config
    weights = dict(zip(env.reward_names, env.task.reward_weights))
    policy, rng = ScriptedPick(n), np.random.default_rng(0)
    previous = np.tile([0, 0, 0, -1.0], (n, 1))
    seen_lift, held, seen_break, seen_overlift = False, np.zeros(n, int), False, False
    for _ in range(60):
        actions = np.clip(policy(obs) + rng.normal(0, 0.2, (n, 4)), -1, 1).astype(np.float32)
        obs, reward, terminated, truncated, info = env.step(actions)
        terms = info["reward_terms"]
        np.testing.assert_allclose(reward, np.stack([terms[k] for k in env.reward_names]).sum(axis=0), rtol=1e-5, atol=1e-6)
        live = ~(terminated | truncated)  # finished rows are already reset
        d = np.linalg.norm(env.task.cube_pos - env.task.ee_pos, axis=1)
        np.testing.assert_allclose(terms["reach"][live], (weights["reach"] * (1 - np.tanh(d / cfg.reach_std)))[live], rtol=1e-4, atol=1e-7)
        grasped = env.task.pad_contacts.all(axis=1) & (d <= 0.025)  # and the pinch point inside the cube
        np.testing.assert_allclose(terms["grasp"][live], (weights["grasp"] * grasped)[live], rtol=1e-6)
        height = env.task.cube_pos[:, 2] - 0.025
        lift = grasped * np.clip(height / cfg.lift_target, 0, 1)
        np.testing.assert_allclose(terms["lift"][live], (weights["lift"] * lift)[live], rtol=1e-4, atol=1e-7)
        overlift = grasped * np.maximum(height - cfg.lift_target, 0) / cfg.lift_target
        np.testing.assert_allclose(terms["overlift"][live], (weights["overlift"] * overlift)[live], rtol=1e-4, atol=1e-7)
        seen_overlift |= bool((overlift[live] > 0).any())
        holding = grasped & (height >= 0.1)
        np.testing.assert_allclose(terms["hold"][live], (weights["hold"] * holding)[live], rtol=1e-6)
        # a hold that breaks gives back its share of the second: -100 x 0.04 x k / 25 = the k holds' 4 x 0.04 x k
        broke = live & (held > 0) & ~holding
        np.testing.assert_allclose(terms["hold_break"][live], (weights["hold_break"] * broke * held / 25)[live], rtol=1e-6)
        np.testing.assert_allclose(terms["hold_break"][broke], -weights["hold"] * held[broke], rtol=1e-6)
        seen_break |= bool(broke.any())
        held = np.where(live & holding, held + 1, 0)
        rate = ((actions - previous) ** 2).sum(axis=1)
        np.testing.assert_allclose(terms["action_rate"], weights["action_rate"] * rate, rtol=1e-4, atol=1e-8)
        previous = np.where((terminated | truncated)[:, None], [0, 0, 0, -1.0], actions)
        seen_lift |= bool((lift[live] > 0).any())
        policy.restart(terminated | truncated)
    assert seen_lift, "the rollout should reach lifted states"
    assert seen_break, "the noisy picks should break a hold"
    assert seen_overlift, "the picks lift at full speed: some should carry the cube past the lift target"
    assert weights["success"] == pytest.approx(250.0 * 0.04)
    env.close()


def test_the_cube_off_the_table_terminates_as_a_failure_and_time_out_truncates():
    n = 4
    env = _grasp_env(n)
    env.reset(seed=0)
    zero = np.tile(np.array([0, 0, 0, -1], np.float32), (n, 1))
    env.step(zero)
    qpos = env.batch.bind("qpos")
    cube = env.task._ix[IX_CUBE_Q]
    qpos[1, cube : cube + 3] = [0.7, 0.5, 0.025]  # beyond the table's edge (x <= 0.6)
    qpos[2, cube + 2] = -0.2  # fallen below the top
    _, _, terminated, truncated, info = env.step(zero)
    assert terminated.tolist() == [False, True, True, False]
    assert not info["is_success"].any() and not truncated.any()
    for _ in range(123):  # 125 steps in all: rows 0 and 3 time out, rows 1 and 2 restarted at step 2
        _, _, terminated, truncated, _ = env.step(zero)
    assert truncated.tolist() == [True, False, False, True] and not terminated.any()
    env.close()


def test_zero_action_holds_the_gripper_still_and_moves_are_cartesian():
    env = _grasp_env(2)
    env.reset(seed=0)
    start = env.task.ee_pos.copy()
    hold = np.tile(np.array([0, 0, 0, -1], np.float32), (2, 1))
    for _ in range(50):
        env.step(hold)
    np.testing.assert_allclose(env.task.ee_pos, start, atol=2e-3)
    move = hold.copy()
    move[:, 0] = 1.0  # +x at full speed: 2 cm a step
    for _ in range(5):
        env.step(move)
    for _ in range(10):
        env.step(hold)
    shift = env.task.ee_pos - start
    np.testing.assert_allclose(shift[:, 0], 0.10, atol=0.01)
    np.testing.assert_allclose(shift[:, 1:], 0.0, atol=0.01)
    down = env.batch.bind("site_xmat")[:, env.task._ix[IX_PINCH]].reshape(2, 3, 3)[:, :, 2]
    np.testing.assert_allclose(down, np.tile([0, 0, -1.0], (2, 1)), atol=0.02)  # still pointing down
    env.close()


def test_reset_draws_the_cube_within_its_ranges_and_the_critic_sees_them():
    n = 256
    env = _grasp_env(n)
    _, info = env.reset(seed=5)
    cfg = env.task.config
    pos = env.task.cube_pos
    assert pos[:, 0].min() >= cfg.cube_x[0] and pos[:, 0].max() <= cfg.cube_x[1]
    assert pos[:, 1].min() >= cfg.cube_y[0] and pos[:, 1].max() <= cfg.cube_y[1]
    np.testing.assert_allclose(pos[:, 2], 0.025)
    mass, friction = info["privileged_obs"][:, 4], info["privileged_obs"][:, 5]
    assert cfg.cube_mass[0] <= mass.min() and mass.max() <= cfg.cube_mass[1] and np.ptp(mass) > 0.15
    assert cfg.cube_friction[0] <= friction.min() and friction.max() <= cfg.cube_friction[1] and np.ptp(friction) > 0.4
    cube_body = env.model.body("cube").id
    np.testing.assert_allclose(env.batch.expanded("body_mass")[:, cube_body], mass, rtol=1e-6)
    np.testing.assert_allclose(env.batch.expanded("body_inertia")[:, cube_body, 0], mass * 0.05**2 / 6, rtol=1e-6)
    assert not info["privileged_obs"][:, :4].any()  # nothing touches the cube at the start
    env.close()


def test_batched_envs_equal_single_envs_and_state_restores():
    """Also covered by the registry-wide tests; here across a reset with new cube draws."""
    from gymnasium.vector import AutoresetMode

    n = 3
    rng = np.random.default_rng(2)
    actions = [rng.uniform(-1, 1, (n, 4)).astype(np.float32) for _ in range(30)]
    env = _grasp_env(n, autoreset_mode=AutoresetMode.DISABLED)
    env.reset(seed=40)
    for a in actions:
        obs, reward, *_ = env.step(a)
    for i in range(n):
        single = gym.make(TASK).unwrapped
        o, _ = single.reset(seed=40 + i)
        for a in actions:
            o, r, *_ = single.step(a[i])
        np.testing.assert_array_equal(o, obs[i])
        assert r == reward[i]
        single.close()
    env.close()


def test_bad_configuration_says_what_to_fix(tmp_path):
    with pytest.raises(TypeError, match="unknown UR5Grasp config key 'cube_mas'"):
        gym.make_vec(TASK, num_envs=1, cube_mas=(0.1, 0.2))
    with pytest.raises(ValueError, match=r"cube_size must be in \[0.04, 0.06\]"):
        gym.make_vec(TASK, num_envs=1, cube_size=0.09)
    with pytest.raises(ValueError, match="cube_mass must have low <= high"):
        gym.make_vec(TASK, num_envs=1, cube_mass=(0.3, 0.1))
    with pytest.raises(ValueError, match="must lie on the table"):
        gym.make_vec(TASK, num_envs=1, cube_x=(-0.2, 0.9))
    from unilab_robot.assets import ur5e

    with pytest.raises(ValueError, match="needs a body 'cube'"):
        gym.make_vec(TASK, num_envs=1, model_path=str(ur5e.MJCF_PATH))  # the reach arm: no gripper, no cube
    env = gym.make_vec(TASK, num_envs=2)
    env.reset(seed=0)
    with pytest.raises(ValueError):
        env.step(np.zeros((2, 6), np.float32))  # the reach task's action size
    bad = np.zeros((2, 4), np.float32)
    bad[1, 3] = np.nan
    with pytest.raises(ValueError, match="1"):
        env.step(bad)
    env.close()


def test_a_model_without_the_pad_sensors_gets_them(tmp_path):
    """A user's combined Menagerie-named model need not carry the contact sensors."""
    text = scene.MJCF_PATH.read_text()
    start, end = text.index("<sensor>"), text.index("</sensor>") + len("</sensor>")
    path = tmp_path / "no_sensors.xml"
    path.write_text(text[:start] + text[end:])
    ours, theirs = _grasp_env(2), _grasp_env(2, model_path=str(path))
    actions = np.random.default_rng(0).uniform(-1, 1, (20, 2, 4)).astype(np.float32)
    a, _ = ours.reset(seed=9)
    b, _ = theirs.reset(seed=9)
    for act in actions:
        a, *_ = ours.step(act)
        b, *_ = theirs.step(act)
    np.testing.assert_array_equal(a, b)


def test_a_diverging_env_is_reset_and_reported_alone():
    n = 4
    env, twin = _grasp_env(n), _grasp_env(n)
    hold = np.tile(np.array([0, 0, 0, -1], np.float32), (n, 1))
    for e in (env, twin):
        e.reset(seed=0)
        for _ in range(3):
            e.step(hold)
    env.batch.bind("qvel")[2, :] = 1e12
    obs, reward, terminated, _, info = env.step(hold)
    twin_obs, twin_reward, *_ = twin.step(hold)
    assert info["diverged"].tolist() == [False, False, True, False]
    assert terminated[2] and reward[2] == 0.0 and np.isfinite(obs).all()
    for i in (0, 1, 3):
        np.testing.assert_array_equal(obs[i], twin_obs[i])
        assert reward[i] == twin_reward[i]
    env.close()
    twin.close()


def test_closed_fingertips_pressed_on_the_cube_top_are_no_grasp():
    """The hack a policy found under the sim-to-real profile: gripper closed, fingertips
    pushing down on the top face. Both pads touch the cube, yet grasp, lift and hold pay 0."""
    n = 8
    env = _grasp_env(n, cube_yaw=(0.0, 0.0))
    obs, _ = env.reset(seed=4)
    for _ in range(40):
        goal = obs[:, 20:23] + [0.0, 0.0, 0.045]  # pinch 4.5 cm above the cube centre: tips on the top face
        actions = np.concatenate([np.clip(goal / 0.02, -1, 1), np.ones((n, 1))], axis=1).astype(np.float32)
        obs, _, _, _, info = env.step(actions)
    pressing = env.task.pad_contacts.all(axis=1)
    assert pressing.sum() >= n // 2, "most fingertips rest on the cube's top face"
    for term in ("grasp", "lift", "hold"):
        assert (info["reward_terms"][term][pressing] == 0).all(), term
    env.close()
