"""``wrappers.Safety``: the deploy guard on every env of a batch, equal to the NumPy guard, in a Sim2Real stack."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import unilab_envs  # noqa: F401  (registers UniLab/*)
from tests.wrappers.conftest import GO1, MODES, Tap, columns, make_go1
from unilab_envs.deploy_spec import deploy_spec_for
from unilab_robot.deploy.safety import REASONS, SafetyGuard, joint_model_from_spec, resolve_limits, up_z
from wrappers import PacketLoss, Safety, Sim2Real

DAMPED = {"safe_mode": "damping", "safe_damping": 2.0}


def _state(env):
    """``(q, qd, base quaternion)`` of every env now, copies (what the guard reads before a step)."""
    robot = env.unwrapped.task.robot
    b = env.unwrapped.batch
    qpos, qvel = b.bind("qpos"), b.bind("qvel")
    return qpos[:, robot.joint_q].copy(), qvel[:, robot.joint_d].copy(), qpos[:, robot.root_q + 3:robot.root_q + 7].copy()


def _extreme_actions(rng, n, t):
    a = rng.uniform(-3, 3, (n, 12)).astype(np.float32)
    if t % 7 == 3:
        a[rng.integers(n), rng.integers(12)] = rng.choice([np.nan, np.inf, -np.inf])
    return a


def test_the_wrapper_uses_the_limits_a_robot_program_gets_from_the_deploy_spec():
    env = Safety(make_go1(2), {"max_target_step": {"*_calf_joint": 0.2}})
    spec = deploy_spec_for(GO1)
    guard = SafetyGuard.from_spec(spec, env.unwrapped.model, env.config)
    for name in ("low", "high", "max_step", "kp", "kd", "tau", "max_qvel", "safe_kd", "start", "home"):
        np.testing.assert_array_equal(getattr(env.limits, name), getattr(guard.limits, name), err_msg=name)
    assert (env.limits.cos_tilt, env.limits.stale_steps, env.limits.scale) == \
        (guard.limits.cos_tilt, guard.limits.stale_steps, guard.limits.scale)


@pytest.mark.parametrize("mode", MODES)
def test_wrapper_and_numpy_guard_agree_on_every_target_and_trip(mode):
    """The same actions, joint readings and observations through the wrapper (4 envs) and four
    SafetyGuards: the same executed actions bit for bit, the same trips, latches and reasons."""
    n = 4
    cfg = {"max_tilt": 0.4, "stale_observation_s": 0.06, "max_joint_velocity": 25.0, "max_target_step": 0.3,
           "torque_fraction": 0.6, **DAMPED}
    base = make_go1(n, mode=mode, max_episode_steps=40)
    tap = Tap(PacketLoss(base, observations={"model": "bernoulli", "loss_rate": 0.5}))
    env = Safety(tap, cfg)
    spec = deploy_spec_for(GO1)
    guards = [SafetyGuard(resolve_limits(cfg, joint_model_from_spec(spec, base.unwrapped.model), spec.timing.control_dt))
              for _ in range(n)]
    obs, info = env.reset(seed=3)
    for g in guards:
        g.reset()
    new = ~info["obs_lost"]
    pending = np.zeros(n, bool)
    rng = np.random.default_rng(1)
    seen = dict.fromkeys(REASONS, 0)
    for t in range(160):
        q, qd, quat = _state(env)
        a = _extreme_actions(rng, n, t)
        next_obs, _, term, trunc, info = env.step(a)
        s = info["safety"]
        for i in range(n):
            if pending[i]:  # NEXT_STEP: this step resets env i, the guard does not run on it
                assert s["trips"][i] == 0 and s["rate_limits"][i] == 0
                continue
            expected = guards[i].action(a[i], q[i], qd[i], quat[i], obs=obs[i], obs_new=new[i])
            np.testing.assert_array_equal(tap.actions[i], expected, err_msg=f"step {t}, env {i}")
            assert guards[i].latched == s["latched"][i] and guards[i].hits.tolist() == [
                s[k][i] for k in ("position_clips", "rate_limits", "torque_limits", "trips")], (t, i)
            assert int(s["reason"][i]) == (REASONS.index(guards[i].reason) + 1 if guards[i].latched else 0)
            if s["trips"][i]:
                seen[guards[i].reason] += 1
        done = np.asarray(term) | np.asarray(trunc)
        started = done if mode is gym.vector.AutoresetMode.SAME_STEP else pending
        for i in np.flatnonzero(started):
            guards[i].reset()
        new = ~info["obs_lost"] | started
        pending = done if mode is gym.vector.AutoresetMode.NEXT_STEP else pending
        obs = next_obs
    assert sum(seen.values()) >= 4 and seen["stale_observation"] and seen["nonfinite_action"], seen
    np.testing.assert_array_equal(env.counts.sum(0)[3], sum(seen.values()))


def test_extreme_and_nan_actions_never_reach_the_motors_out_of_limits():
    env = Sim2Real(make_go1(6, max_episode_steps=50), profile={"safety": {}, "action_latency": {"delay": [0, 1]},
                                                              "packet_loss": {"actions": {"loss_rate": 0.2}}})
    limits = env.layers["safety"].limits
    ctrl = env.unwrapped.batch.bind("ctrl")
    acts = env.unwrapped.task.robot.actuator_ids
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    last = columns(env, "last_action")
    for t in range(150):
        a = (_extreme_actions(rng, 6, t) * 10.0 ** rng.integers(0, 30)).astype(np.float32)
        obs, _, term, trunc, _ = env.step(a)
        c = ctrl[:, acts]
        assert np.isfinite(c).all() and np.all(c >= limits.low - 1e-6) and np.all(c <= limits.high + 1e-6), t
        assert np.isfinite(obs).all()
        going = ~(term | trunc)  # a new episode's first observation holds a zero last action
        np.testing.assert_array_equal(obs[np.ix_(going, last)], np.clip(np.nan_to_num(a[going], nan=0.0), -1, 1))


def test_a_go1_pushed_over_trips_the_tilt_watchdog_within_one_control_step_of_the_tilt():
    """A 3 m/s sideways kick rolls a standing Go1 (the task's own fall termination is off here): the watchdog
    trips at the first control step whose reading is beyond max_tilt, i.e. within 20 ms of the crossing,
    0.3 s after the push at the latest, and the damping safe mode zeroes Kp of that env only."""
    max_tilt = 1.0
    base = make_go1(4, max_tilt=math.pi, min_base_height=0.0)
    env = Sim2Real(base, profile={"random_push": {"interval_s": [0.2, 0.2], "magnitude": [3.0, 3.0]},
                                  "safety": {"max_tilt": max_tilt}})
    env.reset(seed=0)
    qpos = base.unwrapped.batch.bind("qpos")
    crossed, tripped, push = np.full(4, -1), np.full(4, -1), None
    for t in range(40):
        beyond = up_z(qpos[:, 3:7]) < math.cos(max_tilt)  # the reading the next action sees
        _, _, term, _, info = env.step(np.zeros((4, 12), np.float32))
        assert not term.any()
        if push is None and info["pushed"].all():
            push = t
        crossed[(crossed < 0) & beyond] = t
        tripped[(tripped < 0) & (info["safety"]["trips"] == 1)] = t
        assert np.all(info["safety"]["reason"][tripped >= 0] == REASONS.index("tilt") + 1)
    fell = crossed >= 0
    assert fell.sum() >= 2 and push is not None
    np.testing.assert_array_equal(tripped[fell], crossed[fell])  # the step whose action first saw the tilt
    assert np.all(tripped[fell] - push <= 15) and np.all(tripped[~fell] < 0)
    gain = base.unwrapped.batch.expanded("actuator_gainprm")
    acts = base.unwrapped.task.robot.actuator_ids
    assert np.all(gain[np.ix_(fell, acts)][..., 0] == 0) and np.all(gain[np.ix_(~fell, acts)][..., 0] > 0)


def test_a_base_turned_over_trips_at_the_next_control_step():
    base = make_go1(2)
    env = Safety(base, {})  # max_tilt: the task's fall angle (1.0 rad)
    env.reset(seed=0)
    env.step(np.zeros((2, 12), np.float32))
    b = base.unwrapped.batch
    qpos = b.bind("qpos")
    qpos[1, 3:7] = (math.cos(0.6), math.sin(0.6), 0.0, 0.0)  # 1.2 rad of roll
    _, _, term, _, info = env.step(np.zeros((2, 12), np.float32))
    assert info["safety"]["trips"].tolist() == [0, 1] and info["safety"]["reason"][1] == REASONS.index("tilt") + 1


def test_damping_gains_compose_with_randomized_gains_and_are_restored_at_the_next_episode():
    base = make_go1(3, max_episode_steps=12)
    profile = {"domain_randomization": {"kp_scale": [0.8, 1.2], "kd_scale": [0.8, 1.2]},
               "motor_strength": {"strength": [0.9, 1.1]}, "safety": DAMPED}
    env = Sim2Real(base, profile=profile)
    env.reset(seed=0)
    b, acts = base.unwrapped.batch, base.unwrapped.task.robot.actuator_ids
    before_gain = b.expanded("actuator_gainprm")[:, acts].copy()
    before_bias = b.expanded("actuator_biasprm")[:, acts].copy()
    a = np.zeros((3, 12), np.float32)
    a[1, 0] = np.nan
    env.step(a)
    gain, bias = b.expanded("actuator_gainprm")[:, acts], b.expanded("actuator_biasprm")[:, acts]
    assert np.all(gain[1, :, 0] == 0) and np.all(bias[1, :, 1] == 0)
    kd = env.layers["safety"].limits.kd
    np.testing.assert_allclose(bias[1, :, 2], before_bias[1, :, 2] * 2.0 / kd)  # safe Kd 2, times the motor's draws
    np.testing.assert_array_equal(gain[[0, 2]], before_gain[[0, 2]])
    for _ in range(11):
        env.step(np.zeros((3, 12), np.float32))  # the episode ends at step 12: new draws, no safe mode
    assert not env.layers["safety"]._latched.any()
    assert np.all(b.expanded("actuator_gainprm")[:, acts, 0] > 0)


def test_get_state_set_state_resumes_exactly_with_a_latched_env():
    profile = {"domain_randomization": {"kp_scale": [0.8, 1.2]}, "packet_loss": {"observations": {"loss_rate": 0.3}},
               "safety": {"stale_observation_s": 0.04, **DAMPED}}

    def build():
        return Sim2Real(make_go1(3, max_episode_steps=25), profile=profile)

    rng = np.random.default_rng(0)
    actions = [_extreme_actions(rng, 3, t) for t in range(100)]
    a = build()
    a.reset(seed=4)
    start = 0
    while not a.layers["safety"]._latched.any():
        a.step(actions[start])
        start += 1
    assert start < 60
    saved = a.get_state()

    def rollout(env):
        out = []
        for t in range(start, start + 40):
            obs, reward, term, trunc, info = env.step(actions[t])
            out.append((obs.copy(), reward.copy(), {k: v.copy() for k, v in info["safety"].items()},
                        env.unwrapped.batch.expanded("actuator_gainprm").copy()))
        return out

    first = rollout(a)
    b = build()
    b.reset(seed=99)
    for t in range(7):  # a different history, latches included, then the saved state
        b.step(actions[t] * 3)
    b.set_state(saved)
    for (o1, r1, s1, g1), (o2, r2, s2, g2) in zip(first, rollout(b)):
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(g1, g2)
        for k in s1:
            np.testing.assert_array_equal(s1[k], s2[k])


@pytest.mark.parametrize("section, error, message", [
    ({"max_rate": 0.1}, TypeError, "profile section 'safety': unknown safety key 'max_rate'"),
    ({"position_fraction": 0}, ValueError, r"profile section 'safety': safety.position_fraction must be in \(0, 1\]"),
    ({"safe_mode": "stop"}, ValueError, "safety.safe_mode must be one of"),
    ({"torque_limit": {"knee": 1.0}}, ValueError, "safety.torque_limit: no joint matches 'knee'"),
    ("on", ValueError, "profile section 'safety' must be a mapping"),
])
def test_profile_config_errors_say_what_to_change(section, error, message):
    with pytest.raises(error, match=message):
        Sim2Real(make_go1(1), profile={"safety": section})


def test_safety_only_guards_joint_target_tasks():
    env = gym.make_vec("UniLab/UR5Grasp-v0", num_envs=1, num_threads=1)
    with pytest.raises(ValueError, match="Safety needs a UniLab task whose actions are joint targets"):
        Safety(env)


def test_the_guard_is_the_outermost_layer_and_is_not_scaled_by_the_curriculum():
    env = Sim2Real(make_go1(2), profile={"extends": "go1_real", "safety": {}, "curriculum": {"start": 0.0},
                                         "privileged_critic": True})
    assert list(env.layers)[-1] == "safety" and env.env is env.layers["safety"]
    assert env.layers["safety"].profile_level == 0.0 and env.layers["safety"].limits.max_step[0] == 0.75
    assert "safety_latched" in env.critic.groups
