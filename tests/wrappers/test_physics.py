"""Domain randomization, motor strength and pushes: drawn in range, per env, per episode,
written into the batch's model, and felt by the physics."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from tests.wrappers.conftest import MODES, make_go1
from wrappers import DomainRandomization, MotorStrength, RandomPush
from wrappers.physics import next_push_levels

A = 12
FULL = dict(
    friction=(0.4, 1.0), mass_scale=(0.9, 1.1), added_mass=(-1.0, 1.0), com_offset=(-0.05, 0.05),
    kp_scale=(0.8, 1.2), kd_scale=(0.7, 1.3), damping_scale=(0.5, 1.5), armature_scale=(1.0, 1.05), frictionloss_scale=(0.9, 1.1),
)  # fmt: skip


def test_drawn_in_range_per_env_and_written_to_the_model():
    n = 16
    env = DomainRandomization(make_go1(n), **FULL)
    env.reset(seed=0)
    for name, (low, high) in FULL.items():
        p = env.params[name]
        assert p.shape[0] == n and np.all(p >= low) and np.all(p <= high), name
        assert len(np.unique(p[:, 0])) == n, name  # differs across envs
    base, batch, model = env.unwrapped, env.unwrapped.batch, env.unwrapped.model
    trunk = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "trunk")
    p = env.params
    np.testing.assert_allclose(batch.expanded("geom_friction")[:, :, 0], np.repeat(p["friction"], model.ngeom, 1))
    mass = model.body_mass * p["mass_scale"]
    mass[:, trunk] += p["added_mass"][:, 0]
    np.testing.assert_allclose(batch.expanded("body_mass"), mass)
    np.testing.assert_allclose(batch.expanded("body_inertia")[:, 2], model.body_inertia[2] * p["mass_scale"][:, 2:3])
    np.testing.assert_allclose(batch.expanded("body_ipos")[:, trunk], model.body_ipos[trunk] + p["com_offset"])
    np.testing.assert_allclose(batch.expanded("body_subtreemass")[:, 0], mass.sum(1))  # set_const ran
    np.testing.assert_allclose(batch.expanded("dof_damping"), model.dof_damping * p["damping_scale"])
    np.testing.assert_allclose(batch.expanded("dof_armature"), model.dof_armature * p["armature_scale"])
    kp, kd = model.actuator_gainprm[:, 0], -model.actuator_biasprm[:, 2]
    np.testing.assert_allclose(batch.expanded("actuator_gainprm")[:, :, 0], kp * p["kp_scale"])
    np.testing.assert_allclose(-batch.expanded("actuator_biasprm")[:, :, 1], kp * p["kp_scale"])
    np.testing.assert_allclose(-batch.expanded("actuator_biasprm")[:, :, 2], kd * p["kd_scale"])
    assert base.task is not None


@pytest.mark.parametrize("mode", MODES)
def test_redrawn_for_the_rows_that_reset_only(mode):
    n = 8
    env = DomainRandomization(make_go1(n, mode=mode, max_episode_steps=3), friction=(0.2, 1.2))
    env.reset(seed=0)
    before = env.params["friction"].copy()
    zero = np.zeros((n, A), np.float32)
    for _ in range(3):
        env.step(zero)
    if mode.value == "NextStep":  # the reset happens on the step after the time-out
        np.testing.assert_array_equal(env.params["friction"], before)
        env.step(zero)
    assert np.all(env.params["friction"] != before)
    np.testing.assert_allclose(env.unwrapped.batch.expanded("geom_friction")[:, 0, 0], env.params["friction"][:, 0])
    env.reset()  # unseeded reset continues the streams: new draws
    assert not np.allclose(env.params["friction"], before)


def test_heavier_trunk_sinks_lower_at_rest():
    n = 12
    env = DomainRandomization(make_go1(n, reset_joint_range=0.0, reset_base_velocity=0.0), friction=None, mass_scale=None,
                              com_offset=None, armature_scale=None, frictionloss_scale=None, added_mass=(0.0, 6.0))  # fmt: skip
    env.reset(seed=0)
    for _ in range(75):  # 1.5 s standing on the PD home pose
        env.step(np.zeros((n, A), np.float32))
    height = env.unwrapped.batch.bind("qpos")[:, 2].copy()
    added = env.params["added_mass"][:, 0]
    assert np.corrcoef(added, height)[0, 1] < -0.9
    assert height[np.argmax(added)] < height[np.argmin(added)] - 0.005


def test_motor_strength_composes_with_kp_randomization():
    n = 6
    dr = DomainRandomization(make_go1(n), friction=None, mass_scale=None, added_mass=None, com_offset=None, armature_scale=None,
                             frictionloss_scale=None, kp_scale=(0.5, 0.6))  # fmt: skip
    env = MotorStrength(dr, strength=(0.8, 1.2))
    env.reset(seed=0)
    model, batch = env.unwrapped.model, env.unwrapped.batch
    assert np.all((env.gain >= 0.8) & (env.gain <= 1.2)) and len(np.unique(env.gain)) == n * A
    kp = model.actuator_gainprm[:, 0]
    np.testing.assert_allclose(batch.expanded("actuator_gainprm")[:, :, 0], kp * dr.params["kp_scale"] * env.gain)
    kd = model.actuator_biasprm[:, 2]
    np.testing.assert_allclose(batch.expanded("actuator_biasprm")[:, :, 2], kd * env.gain)


def test_motor_strength_on_actions():
    from tests.wrappers.conftest import Tap

    n = 4
    tap = Tap(make_go1(n))
    env = MotorStrength(tap, strength=(0.5, 0.7), target="action", per_actuator=False)
    env.reset(seed=0)
    assert np.all(env.gain == env.gain[:, :1])  # one gain per env
    a = np.full((n, A), 0.5, np.float32)
    env.step(a)
    np.testing.assert_allclose(tap.actions, a * env.gain, rtol=1e-6)


def test_velocity_pushes_at_random_intervals_with_the_configured_magnitude():
    n = 8
    env = RandomPush(make_go1(n), mode="velocity", interval_s=(0.1, 0.3), magnitude=(0.5, 1.0))
    env.reset(seed=0)
    qvel = env.unwrapped.batch.bind("qvel")
    zero = np.zeros((n, A), np.float32)
    last = np.zeros(n, np.int64)
    gaps = []
    for step in range(1, 80):
        before = qvel[:, :2].copy()
        env._actions(zero)  # the push lands in qvel before the physics step
        kick = np.linalg.norm(qvel[:, :2] - before, axis=1)
        pushed = env.pushed.copy()
        assert np.all((kick[pushed] >= 0.5 - 1e-9) & (kick[pushed] <= 1.0 + 1e-9)) and np.all(kick[~pushed] == 0)
        qvel[:, :2] = before  # undo, then step normally
        _, _, terminated, truncated, info = env.env.step(zero)
        gaps += (step - last[pushed]).tolist()
        last[pushed] = step
    gaps = np.array(gaps[n:])  # the first gap counts from the reset
    assert gaps.min() >= 5 and gaps.max() <= 15  # 0.1-0.3 s at 50 Hz
    assert len(np.unique(gaps)) > 5


def test_push_curriculum_rule_by_hand():
    level = np.array([0, 0, 3, 3, 4, 2])
    terminated = np.array([False, True, False, True, False, False])
    truncated = np.array([True, False, True, True, True, False])  # row 3: a fall at the last step counts as a fall
    assert next_push_levels(level, terminated, truncated, levels=4).tolist() == [1, 0, 4, 2, 4, 2]


def test_push_curriculum_bounds_each_envs_kick_by_its_level():
    n, levels = 5, 4
    env = RandomPush(make_go1(n), mode="velocity", interval_s=(0.1, 0.2), magnitude=(0.2, 1.0), levels=levels)
    env.reset(seed=0)
    env.level[:] = [0, 1, 2, 3, 4]
    limit = 0.2 + 0.8 * np.arange(5) / levels
    np.testing.assert_allclose(env.push_limits(), limit)
    qvel = env.unwrapped.batch.bind("qvel")
    zero = np.zeros((n, A), np.float32)
    kicks = [[] for _ in range(n)]
    for _ in range(120):
        before = qvel[:, :2].copy()
        env._actions(zero)
        kick = np.linalg.norm(qvel[:, :2] - before, axis=1)
        for i in np.flatnonzero(env.pushed):
            kicks[i].append(kick[i])
        qvel[:, :2] = before
        env.env.step(zero)
    assert all(len(k) >= 10 for k in kicks)
    np.testing.assert_allclose(kicks[0], 0.2)  # level 0: the smallest push only
    for i in range(1, n):
        assert 0.2 - 1e-9 <= min(kicks[i]) and max(kicks[i]) <= limit[i] + 1e-9
        assert max(kicks[i]) > limit[i - 1]  # and the level's new range is used


def test_push_levels_rise_with_episodes_that_reach_the_time_limit():
    n, levels = 4, 10
    env = RandomPush(make_go1(n, max_episode_steps=6), interval_s=(0.02, 0.04), magnitude=(0.0, 0.2), levels=levels)
    env.reset(seed=0)
    zero = np.zeros((n, A), np.float32)
    seen = []
    for _ in range(3 * 6):
        _, _, terminated, truncated, info = env.step(zero)
        assert not terminated.any()
        seen.append(info["push_level"].copy())
    assert env.level.tolist() == [3] * n
    assert [float(s[0]) for s in seen[5::6]] == [0.1, 0.2, 0.3]  # one level per 6-step episode
    state = env.get_state()
    env.level[:] = 0
    env.set_state(state)
    assert env.level.tolist() == [3] * n  # saved for an exact resume


def test_force_pushes_through_xfrc_applied():
    n = 4
    env = RandomPush(make_go1(n), mode="force", interval_s=(0.2, 0.2), magnitude=(30.0, 30.0), duration_s=0.06)
    env.reset(seed=0)
    xfrc = env.unwrapped.batch.bind("xfrc_applied")
    trunk = mujoco.mj_name2id(env.unwrapped.model, mujoco.mjtObj.mjOBJ_BODY, "trunk")
    active = []
    for _ in range(25):
        _, _, _, _, info = env.step(np.zeros((n, A), np.float32))
        norm = np.linalg.norm(xfrc[:, trunk, :3], axis=1)
        assert np.allclose(norm[norm > 0], 30.0)
        active.append(norm > 0)
    active = np.array(active)
    assert active.sum(0).tolist() == [6] * n  # 2 pushes of 3 steps in 25 steps, every 10 steps


def test_invalid_physics_configs():
    env = make_go1(2)
    with pytest.raises(ValueError, match="low <= high"):
        DomainRandomization(env, friction=(1.0, 0.5))
    with pytest.raises(ValueError, match="mass_scale"):
        DomainRandomization(env, mass_scale=(-0.5, 1.0))
    with pytest.raises(TypeError, match="Did you mean 'friction'"):
        DomainRandomization(env, fricton=(0.5, 1.0))
    with pytest.raises(ValueError, match="no body named"):
        DomainRandomization(env, base_body="torso")
    with pytest.raises(ValueError, match="target"):
        MotorStrength(env, target="current")
    with pytest.raises(ValueError, match="interval_s"):
        RandomPush(env, interval_s=(0.0, 1.0))
    with pytest.raises(ValueError, match="levels must be an int >= 0"):
        RandomPush(env, levels=-1)
