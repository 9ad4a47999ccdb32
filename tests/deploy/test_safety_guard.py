"""The safety guard in NumPy (unilab_robot.deploy.safety): hand-computed limits, watchdogs, extreme inputs,
config errors, the deploy spec's ``safety`` section and ``unilab play --safety``."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import mujoco
import numpy as np
import pytest

from unilab_envs.config import ConfigError
from unilab_robot.deploy import SpecError, load_spec, spec_from_dict, spec_from_json
from unilab_envs.deploy_spec import default_model_path, deploy_spec_for
from unilab_robot.deploy.safety import (REASONS, JointModel, SafetyConfig, SafetyGuard, joint_model_from_spec,
                                       resolve_limits, safety_config)

GO1 = "UniLab/Go1Joystick-v0"
UPRIGHT = np.array([1.0, 0.0, 0.0, 0.0])


def tilted(angle: float) -> np.ndarray:
    """A base quaternion tilted by ``angle`` about x."""
    return np.array([math.cos(angle / 2), math.sin(angle / 2), 0.0, 0.0])


def two_joints(**kw) -> JointModel:
    """Two hand-made joints: ranges [-1, 1] and [0, 2], home 0 and 1, action scale 0.5, Kp 10, Kd 1, 5 N m."""
    values = dict(names=("a", "b"), home=np.array([0.0, 1.0]), scale=0.5, clip=(-1.0, 1.0),
                  range_low=np.array([-1.0, 0.0]), range_high=np.array([1.0, 2.0]),
                  ctrl_low=np.full(2, -np.inf), ctrl_high=np.full(2, np.inf), kp=np.full(2, 10.0), kd=np.full(2, 1.0),
                  force=np.full(2, 5.0), fall_tilt=1.0, floating=True)
    values.update(kw)
    return JointModel(**values)


def guard(config=None, dt=0.02, **joints) -> SafetyGuard:
    g = SafetyGuard(resolve_limits(config or {}, two_joints(**joints), dt))
    g.reset()
    return g


ZERO = np.zeros(2)


# --- hand-computed limits ------------------------------------------------------------------------


def test_position_limits_are_a_centred_fraction_of_the_range_within_the_actions_reach():
    g = guard({"position_fraction": 0.5, "max_target_step": None, "torque_fraction": None})
    # half of range [-1, 1] is [-0.5, 0.5], of [0, 2] is [0.5, 1.5]; the actions reach home -+ 0.5
    np.testing.assert_allclose(g.limits.low, [-0.5, 0.5])
    np.testing.assert_allclose(g.limits.high, [0.5, 1.5])
    wide = guard({"position_fraction": 1.0})
    np.testing.assert_allclose(wide.limits.low, [-0.5, 0.5])  # the action's reach binds
    np.testing.assert_allclose(wide.limits.high, [0.5, 1.5])
    out = g.targets([0.7, 0.2], ZERO, ZERO, UPRIGHT)
    np.testing.assert_array_equal(out, [0.5, 0.5])
    assert g.hits.tolist() == [2, 0, 0, 0] and not g.latched
    np.testing.assert_array_equal(g.targets([0.1, 1.2], ZERO, ZERO, UPRIGHT), [0.1, 1.2])  # inside: untouched
    g2 = guard({"position_low": {"b": 0.9}, "position_high": [0.3, 1.1], "max_target_step": None, "torque_fraction": None})
    np.testing.assert_allclose(g2.limits.low, [-0.5, 0.9])  # a: the range [-1, 1] is wider than the action's reach
    np.testing.assert_allclose(g2.limits.high, [0.3, 1.1])


def test_rate_limit_moves_at_most_max_target_step_from_the_previous_target():
    g = guard({"max_target_step": 0.1, "torque_fraction": None})
    seen = [g.targets([0.4, 1.0], ZERO, ZERO, UPRIGHT)[0] for _ in range(5)]
    np.testing.assert_allclose(seen, [0.1, 0.2, 0.3, 0.4, 0.4])
    assert g.counts["rate_limits"] == 3
    np.testing.assert_allclose(g.targets([-0.4, 1.0], ZERO, ZERO, UPRIGHT)[0], 0.3)
    g.reset()  # a new episode starts from home
    np.testing.assert_allclose(g.targets([0.4, 1.0], ZERO, ZERO, UPRIGHT)[0], 0.1)
    per_joint = guard({"max_target_step": {"b": 0.05}, "torque_fraction": None})
    np.testing.assert_allclose(per_joint.limits.max_step, [SafetyConfig.max_target_step, 0.05])


def test_torque_limit_moves_the_target_to_the_estimated_torque_limit():
    # tau = kp (t - q) - kd qd = 10 (t - 0) - 1 * 2 must stay in [-5, 5]: t in [-0.3, 0.7]; motors without a force range
    g = guard({"max_target_step": None, "position_fraction": 1.0, "torque_limit": 5.0}, force=np.full(2, np.inf))
    assert g.limits.torque_step.all()
    q, qd = np.array([0.0, 1.0]), np.array([2.0, 0.0])
    out = g.targets([0.45, 1.0], q, qd, UPRIGHT)
    np.testing.assert_allclose(out[0], 0.45)  # 10 * 0.45 - 2 = 2.5 N m: within the limit
    out = g.targets([-0.5, 1.0], q, qd, UPRIGHT)
    np.testing.assert_allclose(out[0], -0.3)
    assert 10 * out[0] - 2 == pytest.approx(-5.0) and g.hits[2] == 1
    g = guard({"max_target_step": None, "torque_fraction": 0.5, "torque_limit": {"b": 1.0}})
    np.testing.assert_allclose(g.limits.tau, [2.5, 1.0])
    out = g.targets([0.5, 1.25], np.array([0.0, 1.0]), ZERO, UPRIGHT)
    np.testing.assert_allclose(out, [0.25, 1.1])


def test_the_torque_step_leaves_a_limit_the_motor_holds_itself_to_the_motor():
    # torque_fraction 1 of a 5 N m actuator: the motor clamps at 5 N m on every servo tick; the same -0.5 target that a
    # motor without a force range gets moved to -0.3 passes (moved, it would hold 5 N m only at the period's start)
    g = guard({"max_target_step": None, "position_fraction": 1.0})
    np.testing.assert_allclose(g.limits.tau, [5.0, 5.0])
    assert not g.limits.torque_step.any()
    out = g.targets([-0.5, 1.0], np.array([0.0, 1.0]), np.array([2.0, 0.0]), UPRIGHT)
    np.testing.assert_allclose(out, [-0.5, 1.0])
    assert g.hits[2] == 0
    # a limit below the motor's (headroom) on one joint: that joint's target moves, the other's is the motor's
    g = guard({"max_target_step": None, "torque_limit": {"a": 4.0}})
    np.testing.assert_array_equal(g.limits.torque_step, [True, False])
    out = g.targets([-0.5, 1.5], np.array([0.0, 0.9]), np.array([2.0, 0.0]), UPRIGHT)
    np.testing.assert_allclose(out, [-0.2, 1.5])  # 10 (t - 0) - 2 >= -4; joint b asks 6 N m of its 5 N m motor
    assert g.hits[2] == 1


def test_position_wins_over_rate_and_torque():
    g = guard({"max_target_step": 0.1, "position_fraction": 0.2})
    # q far outside the soft range: the torque step asks for a target near q, position keeps it in [-0.2, 0.2]
    out = g.targets([0.5, 1.0], np.array([0.9, 1.0]), ZERO, UPRIGHT)
    assert -0.2 <= out[0] <= 0.2


# --- watchdogs -------------------------------------------------------------------------------------


@pytest.mark.parametrize("reason, step", [
    ("tilt", dict(base_quat=tilted(1.1))),
    ("joint_velocity", dict(qd=np.array([0.0, 31.0]))),
    ("nonfinite_action", dict(targets=np.array([np.nan, 1.0]))),
    ("nonfinite_observation", dict(obs=np.array([1.0, np.inf]))),
    ("nonfinite_observation", dict(q=np.array([np.nan, 1.0]))),
])
def test_each_watchdog_latches_the_safe_mode_until_reset(reason, step):
    g = guard({"joint_velocity_steps": 1})  # the joint-velocity watchdog on its first reading (the default waits for 2)
    args = dict(targets=np.array([0.1, 1.1]), q=np.array([0.05, 1.05]), qd=ZERO, base_quat=UPRIGHT, obs=np.zeros(3))
    g.targets(**args)
    assert not g.latched and g.gains()[0].tolist() == [10.0, 10.0]
    out = g.targets(**{**args, **step})
    assert g.latched and g.reason == reason and g.hits[3] == 1
    assert np.isfinite(out).all() and np.all(out >= g.limits.low) and np.all(out <= g.limits.high)
    kp, kd = g.gains()
    assert kp.tolist() == [0.0, 0.0] and kd.tolist() == [1.0, 1.0]  # damping only, the model's Kd
    again = g.targets(**args)  # healthy again: still latched, still the pose of the trip
    assert g.latched and g.hits[3] == 0
    np.testing.assert_array_equal(again, out)
    g.reset()
    assert not g.latched and g.reason is None and g.gains()[0].tolist() == [10.0, 10.0]


def test_joint_velocity_trips_on_joint_velocity_steps_readings_in_a_row():
    args = dict(targets=np.array([0.1, 1.1]), q=np.array([0.05, 1.05]), base_quat=UPRIGHT)
    fast, slow = np.array([0.0, 31.0]), np.array([0.0, 29.0])
    g = guard()  # the default: 2 control steps in a row over 30 rad/s
    assert g.limits.qvel_steps == 2
    for qd in (fast, slow, fast, slow, fast, slow):  # single readings over the limit (impacts): no trip
        g.targets(qd=qd, **args)
        assert not g.latched
    g.targets(qd=fast, **args)
    assert not g.latched
    g.targets(qd=np.array([-31.0, 0.0]), **args)  # another joint, the next step: still "a joint over" twice in a row
    assert g.latched and g.reason == "joint_velocity" and g.hits[3] == 1
    g.reset()
    g.targets(qd=fast, **args)  # a reset forgets the reading before it
    assert not g.latched
    three = guard({"joint_velocity_steps": 3})
    for k, qd in enumerate((fast, fast, fast)):
        three.targets(qd=qd, **args)
        assert three.latched == (k == 2)


def test_tilt_trips_beyond_max_tilt_and_task_means_the_tasks_fall_angle():
    g = guard()
    assert g.limits.cos_tilt == pytest.approx(math.cos(1.0))  # fall_tilt of the joint model
    g.targets([0.0, 1.0], ZERO, ZERO, tilted(0.99))
    assert not g.latched
    g.targets([0.0, 1.0], ZERO, ZERO, tilted(1.01))
    assert g.reason == "tilt"
    off = guard({"max_tilt": None})
    off.targets([0.0, 1.0], ZERO, ZERO, tilted(3.0))
    assert not off.latched
    fixed = guard(floating=False)  # a fixed base: no tilt watchdog, no quaternion needed
    fixed.targets([0.0, 1.0], ZERO, ZERO, None)
    assert not fixed.latched
    with pytest.raises(ConfigError, match="max_tilt needs a floating-base robot"):
        guard({"max_tilt": 0.5}, floating=False)


def test_stale_observation_trips_after_stale_observation_s_without_a_new_one():
    g = guard({"stale_observation_s": 0.1}, dt=0.02)  # 5 steps of 20 ms: the 6th missed one trips
    assert g.limits.stale_steps == 5
    for _ in range(5):
        g.targets([0.0, 1.0], ZERO, ZERO, UPRIGHT, obs_new=False)
    assert not g.latched
    g.targets([0.0, 1.0], ZERO, ZERO, UPRIGHT, obs_new=True)  # a new one restarts the clock
    for _ in range(5):
        g.targets([0.0, 1.0], ZERO, ZERO, UPRIGHT, obs_new=False)
    assert not g.latched
    g.targets([0.0, 1.0], ZERO, ZERO, UPRIGHT, obs_new=False)
    assert g.reason == "stale_observation"


def test_hold_mode_holds_the_pose_of_the_trip_with_the_safe_damping():
    g = guard({"safe_mode": "hold", "safe_damping": [2.0, 3.0]})
    q = np.array([0.2, 1.1])
    out = g.targets([np.nan, 1.0], q, ZERO, UPRIGHT)
    np.testing.assert_array_equal(out, q)
    kp, kd = g.gains()
    assert kp.tolist() == [10.0, 10.0] and kd.tolist() == [2.0, 3.0]
    np.testing.assert_array_equal(g.targets([0.5, 1.2], np.array([0.0, 1.0]), ZERO, UPRIGHT), q)


def test_the_first_watchdog_in_reasons_order_is_reported():
    g = guard()
    g.targets([np.nan, 1.0], ZERO, np.array([40.0, 0.0]), tilted(2.0))
    assert g.reason == REASONS[0] == "tilt"


# --- extreme inputs ---------------------------------------------------------------------------------


def test_extreme_and_nan_inputs_never_give_an_out_of_limit_target():
    """Property test: 40 random guards, 300 steps each of random extreme, inf and NaN targets and readings."""
    rng = np.random.default_rng(0)
    specials = np.array([np.nan, np.inf, -np.inf, 1e300, -1e300, 0.0])
    for case in range(40):
        cfg = {"position_fraction": rng.uniform(0.05, 1.0), "max_target_step": rng.choice([None, rng.uniform(1e-3, 2)]),
               "torque_fraction": rng.choice([None, rng.uniform(0.01, 2)]), "safe_mode": rng.choice(["damping", "hold"]),
               "stale_observation_s": rng.choice([None, 0.0, 0.1])}
        g = guard(cfg)
        low, high = g.limits.low, g.limits.high
        for step in range(300):
            if step % 97 == 0:
                g.reset()
            scale = 10.0 ** rng.uniform(-3, 6)
            targets = rng.normal(0, scale, 2)
            q, qd = rng.normal(0, scale, 2), rng.normal(0, scale, 2)
            quat = rng.normal(0, 1, 4)
            for arr in (targets, q, qd, quat):
                mask = rng.random(arr.shape) < 0.05
                arr[mask] = rng.choice(specials, mask.sum())
            out = g.targets(targets, q, qd, quat, obs=rng.normal(0, 1, 3), obs_new=rng.random() < 0.7)
            assert np.isfinite(out).all(), (case, step, out)
            assert np.all(out >= low) and np.all(out <= high), (case, step, out, low, high)
            a = g.action(rng.normal(0, scale, 2), q, qd, quat)
            assert a.dtype == np.float32 and np.all(np.abs(a) <= 1.0)


# --- config errors --------------------------------------------------------------------------------


@pytest.mark.parametrize("section, message", [
    ({"max_rate": 0.1}, "unknown safety key 'max_rate'"),
    ({"position_fraction": 1.5}, r"safety.position_fraction must be in \(0, 1\], got 1.5"),
    ({"position_fraction": "all"}, "safety.position_fraction must be in"),
    ({"max_target_step": -0.1}, "safety.max_target_step must be a number > 0"),
    ({"max_target_step": [0.1, "x"]}, "safety.max_target_step must be a number > 0, a list of them"),
    ({"max_joint_velocity": {"a": 0}}, r"safety.max_joint_velocity\['a'\] must be a number > 0"),
    ({"joint_velocity_steps": 0}, "safety.joint_velocity_steps must be a whole number of control steps >= 1"),
    ({"joint_velocity_steps": 1.5}, "safety.joint_velocity_steps must be a whole number of control steps >= 1"),
    ({"torque_fraction": 0}, "safety.torque_fraction must be a number > 0 or null"),
    ({"max_tilt": 4}, r"safety.max_tilt must be 'task', null or an angle in \(0, pi\]"),
    ({"stale_observation_s": -1}, "safety.stale_observation_s must be a number >= 0 or null"),
    ({"safe_mode": "limp"}, r"safety.safe_mode must be one of \['damping', 'hold'\]"),
    ([1, 2], "the safety section must be a mapping"),
])
def test_bad_config_is_refused_with_what_to_change(section, message):
    with pytest.raises(ConfigError, match=message):
        safety_config(section)


@pytest.mark.parametrize("section, message", [
    ({"max_target_step": [0.1, 0.2, 0.3]}, r"safety.max_target_step has 3 values; the action has 2 joints"),
    ({"torque_limit": {"knee": 3.0}}, r"safety.torque_limit: no joint matches 'knee'; the joints are \['a', 'b'\]"),
    ({"position_low": {"a": 0.8}, "position_high": {"a": 0.7}}, "joint 'a' has no allowed target"),
])
def test_config_that_does_not_fit_the_robot_names_the_joint(section, message):
    with pytest.raises(ConfigError, match=message):
        guard(section)


# --- the deploy spec and play -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def go1():
    spec = deploy_spec_for(GO1)
    return spec, mujoco.MjModel.from_xml_path(str(default_model_path(GO1)))


def test_old_specs_load_without_a_guard_and_a_safety_section_round_trips(go1):
    spec, model = go1
    old = json.loads(Path("policies/go1_joystick/deploy_spec.json").read_text())
    del old["safety"]  # as exported before specs carried the guard
    assert spec_from_dict(old).safety is None and "safety" not in json.loads(spec_from_dict(old).to_json())
    guarded = dataclasses.replace(spec, safety=safety_config({"max_target_step": {"*_calf_joint": 0.3}, "safe_mode": "hold"}))
    again = spec_from_json(guarded.to_json())
    assert again == guarded and again.safety.max_target_step == {"*_calf_joint": 0.3}
    limits = SafetyGuard.from_spec(again, model).limits
    calf = [i for i, n in enumerate(limits.names) if n.endswith("calf_joint")]
    assert limits.max_step[calf].tolist() == [0.3] * 4 and not limits.damping
    data = json.loads(guarded.to_json())
    data["safety"]["max_target_step"] = "fast"
    with pytest.raises(SpecError, match="spec.safety: safety.max_target_step must be a number > 0"):
        spec_from_dict(data)


def test_limits_from_the_spec_are_the_models(go1):
    spec, model = go1
    limits = resolve_limits({}, joint_model_from_spec(spec, model), spec.timing.control_dt)
    np.testing.assert_allclose(limits.kp, spec.action.kp)
    np.testing.assert_allclose(limits.kd, spec.action.kd)
    np.testing.assert_allclose(limits.tau, spec.action.torque_limit)
    assert limits.cos_tilt == pytest.approx(math.cos(spec.episode.max_tilt)) and limits.stale_steps == 12
    home = np.asarray(spec.action.home)
    assert np.all(limits.low <= home) and np.all(home <= limits.high)
    np.testing.assert_allclose(limits.high - limits.low, 1.0)  # Go1: the action's reach (0.5 rad each way) binds


# --- unilab play --safety ------------------------------------------------------------------------------


def test_play_runs_the_guard_from_the_flag_the_profile_or_the_spec(tmp_path):
    from trainers.play import Player, PlayError, find_policy, play_safety

    bundle = find_policy("policies/go1_joystick")
    bundle = dataclasses.replace(bundle, spec=dataclasses.replace(bundle.spec, safety=None))  # a spec from before the guard
    spec = bundle.spec
    assert play_safety(None, spec, None) == (None, None)  # nothing asks for a guard
    assert play_safety("on", spec, None) == ({}, "defaults")
    assert play_safety("off", spec, {"safety": {}}) == (None, None)
    assert play_safety(None, spec, {"safety": {"max_target_step": 0.2}}, "mine.yaml")[0] == {"max_target_step": 0.2}
    guarded = dataclasses.replace(spec, safety=safety_config({"safe_mode": "hold"}))
    assert play_safety(None, guarded, None) == (guarded.safety, "the deploy spec")
    assert play_safety(None, guarded, {"safety": {}}, "p")[1] == "the --sim2real profile p"
    profile = tmp_path / "guard.yaml"
    profile.write_text("safety: {max_target_step: 0.1}\n")
    assert play_safety(str(profile), spec, None)[0] == {"max_target_step": 0.1}
    with pytest.raises(SpecError, match="that profile has no safety section"):
        play_safety("go1_real", spec, None)
    assert Player(bundle, safety=str(profile)).guard.limits.max_step.max() == 0.1
    assert Player(bundle).guard is None
    bad = tmp_path / "bad.yaml"
    bad.write_text("safety: {max_target_stp: 0.1}\n")
    with pytest.raises(PlayError, match="unknown safety key 'max_target_stp'"):
        Player(bundle, sim2real=str(bad))


def test_play_with_a_nan_policy_latches_damping_and_a_reset_restores_the_gains():
    from trainers.play import Player, find_policy, run_headless

    player = Player(find_policy("policies/go1_joystick"), safety="default")
    acts = player.io.actuators
    kp0, kd0 = player.model.actuator_gainprm[acts, 0].copy(), player.model.actuator_biasprm[acts, 2].copy()
    for _ in range(5):
        player.control_step()
    assert not player.guard.latched
    policy = player.policy
    player.policy = lambda obs: np.full(12, np.nan, np.float32)
    player.control_step()
    g = player.guard
    assert g.latched and g.reason == "nonfinite_action"
    ctrl = player.data.ctrl[acts]
    assert np.isfinite(ctrl).all() and np.all(ctrl >= g.limits.low - 1e-6) and np.all(ctrl <= g.limits.high + 1e-6)
    assert np.all(player.model.actuator_gainprm[acts, 0] == 0) and np.all(player.model.actuator_biasprm[acts, 1] == 0)
    np.testing.assert_array_equal(player.model.actuator_biasprm[acts, 2], kd0)  # damping only, the model's Kd
    assert np.all(player.state.last_action == 0)  # what the policy sent, NaN remembered as 0: the observation stays finite
    player.policy = policy
    player.reset()
    assert not g.latched
    np.testing.assert_array_equal(player.model.actuator_gainprm[acts, 0], kp0)
    result = run_headless(player, 2, progress=False)
    assert "safety (defaults): targets moved by position limits" in result.summary()
    assert "safe mode latched in 0 of 2 episodes" in result.summary()


def test_play_cli_safety_flag(capsys):
    from trainers import cli

    def run(argv):
        try:
            return cli.main(argv)
        except SystemExit as e:
            return e.code

    assert run(["play", "policies/go1_joystick", "--headless", "--episodes", "1", "--no-progress", "--safety"]) == 0
    assert "safety (the deploy spec)" in capsys.readouterr().out  # the shipped spec carries the default guard
    assert run(["play", "policies/go1_joystick", "--headless", "--episodes", "1", "--no-progress", "--safety",
                "default"]) == 0
    assert "safety (defaults)" in capsys.readouterr().out
    assert run(["play", "policies/go1_joystick", "--headless", "--episodes", "1", "--no-progress", "--safety", "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("unilab play:") and "unknown sim-to-real profile 'nope'" in err


def test_export_copies_the_training_profiles_safety_section_into_the_spec(tmp_path):
    import shutil

    from trainers.common.deploy_export import attach_for_run

    shutil.copy("policies/go1_joystick/policy.onnx", tmp_path / "policy.onnx")
    (tmp_path / "config.yaml").write_text("task: UniLab/Go1Joystick-v0\nenv_kwargs: {}\n"
                                          "sim2real: {extends: go1_real, safety: {max_target_step: 0.3}}\n")
    spec = load_spec(attach_for_run(tmp_path / "policy.onnx", tmp_path))
    assert load_spec(tmp_path / "policy.onnx") == spec
    s = spec.safety  # resolved on the Go1: every joint's numbers, by name, and where they came from
    assert s.max_target_step == dict.fromkeys(spec.action.joint_names, 0.3)
    assert s.torque_limit["FR_calf_joint"] == 35.55 and s.torque_limit["FR_hip_joint"] == 23.7
    assert s.max_tilt == 1.0 and "profile (go1_real" in s.source
    (tmp_path / "config.yaml").write_text("task: UniLab/Go1Joystick-v0\nsim2real: go1_real\n")
    defaults = load_spec(attach_for_run(tmp_path / "policy.onnx", tmp_path)).safety  # no section: the defaults
    assert defaults.max_target_step == dict.fromkeys(spec.action.joint_names, 0.75)
    assert defaults.source.startswith("defaults (the run trained without a safety section)")
