"""The guard travels with the policy (issue 55 item 4).

* ``unilab export`` writes the guard's limits into every joystick spec, resolved on the training
  model: the run's profile section, else the defaults, with a stated ``source``; resolving that
  section again on the same model gives the same limits, bit for bit.
* ``PolicyIO`` (the NumPy runtime) runs the spec's guard by default; ``safety=False`` opts out;
  a spec without the section (exported before it) runs none.
* ``unilab play`` says whether the guard is on.
* Training under a profile with a ``safety:`` section logs its clips and trips per iteration.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import mujoco
import numpy as np
import pytest

import unilab_envs  # noqa: F401  (registers UniLab/*)
from unilab_robot.deploy import PolicyIO, load_spec, spec_from_dict
from unilab_envs.deploy_spec import deploy_spec_for, default_model_path
from unilab_robot.deploy.safety import SafetyGuard, joint_model_from_spec, resolve_limits, safety_config

from tests.deploy.conftest import run

GO1, G1, UR5 = "UniLab/Go1Joystick-v0", "UniLab/G1Joystick-v0", "UniLab/UR5Grasp-v0"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def go1():
    """The Go1's spec with the default guard written in, and its model."""
    spec = deploy_spec_for(GO1, safety={}, safety_source="defaults, by the test")
    return spec, mujoco.MjModel.from_xml_path(str(default_model_path(GO1)))


# --- the section the export writes ---------------------------------------------------------


def test_the_go1_section_holds_the_guards_numbers_by_joint(go1):
    spec, _ = go1
    s = spec.safety
    # the calf: range [-2.7227, -0.83776] (the MJCF), home -1.8, scale 0.5: the action reaches [-2.3, -1.3],
    # inside the range, so the allowed targets are the reach; the force range is +-35.55 N m
    assert (s.position_low["FR_calf_joint"], s.position_high["FR_calf_joint"]) == pytest.approx((-2.3, -1.3))
    assert s.torque_limit == {**{f"{leg}_{j}_joint": 23.7 for leg in ("FR", "FL", "RR", "RL") for j in ("hip", "thigh")},
                              **{f"{leg}_calf_joint": 35.55 for leg in ("FR", "FL", "RR", "RL")}}
    assert s.max_target_step == dict.fromkeys(spec.action.joint_names, 0.75)
    assert s.max_joint_velocity == dict.fromkeys(spec.action.joint_names, 30.0)
    assert s.safe_damping == dict(zip(spec.action.joint_names, spec.action.kd))
    assert s.max_tilt == spec.episode.max_tilt == 1.0  # "task": the task's fall angle, as a number
    assert (s.stale_observation_s, s.safe_mode, s.source) == (0.25, "damping", "defaults, by the test")


@pytest.mark.parametrize("env_id, section", [
    (GO1, {}),
    (GO1, {"position_fraction": 0.9, "max_target_step": {"*_calf_joint": 0.2}, "torque_fraction": 0.8,
           "max_tilt": 0.6, "max_joint_velocity": None, "safe_mode": "hold", "safe_damping": 1.5}),
    (G1, {}),
    (G1, {"position_fraction": 0.95, "torque_limit": {"left_knee_joint": 100.0}, "stale_observation_s": None}),
])
def test_the_written_section_resolves_to_the_same_limits_bit_for_bit(env_id, section):
    spec = deploy_spec_for(env_id, safety=section, safety_source="test")
    spec = spec_from_dict(json.loads(spec.to_json()))  # through JSON, as the robot reads it
    model = mujoco.MjModel.from_xml_path(str(default_model_path(env_id)))
    joints = joint_model_from_spec(spec, model)
    want = resolve_limits(section, joints, spec.timing.control_dt)
    got = resolve_limits(spec.safety, joints, spec.timing.control_dt)
    for key in ("low", "high", "max_step", "tau", "max_qvel", "safe_kd", "start"):
        np.testing.assert_array_equal(getattr(got, key), getattr(want, key), err_msg=key)
    assert (got.cos_tilt, got.stale_steps, got.damping) == (want.cos_tilt, want.stale_steps, want.damping)


def test_the_spec_limits_rule_on_a_robot_model_that_declares_none(go1, tmp_path):
    """A robot MJCF without force ranges: the guard still limits torque to the spec's numbers (not infinity)."""
    spec, _ = go1
    xml = Path(default_model_path(GO1)).read_text()
    bare = tmp_path / "go1_noforce.xml"
    bare.write_text(xml.replace('forcerange="-23.7 23.7"', "").replace('forcerange="-35.55 35.55"', ""))
    import shutil

    for asset in Path(default_model_path(GO1)).parent.iterdir():
        if asset.is_dir():
            shutil.copytree(asset, tmp_path / asset.name, dirs_exist_ok=True)
    model = mujoco.MjModel.from_xml_path(str(bare))
    assert np.isinf(SafetyGuard.from_spec(spec, model, {}).limits.tau).all()  # the bare defaults: unlimited
    np.testing.assert_array_equal(SafetyGuard.from_spec(spec, model).limits.tau, [23.7, 23.7, 35.55] * 4)


def test_arm_specs_carry_no_guard_and_refuse_one_given_to_the_runtime():
    from unilab_envs.config import ConfigError

    spec = deploy_spec_for(UR5, safety={}, safety_source="test")
    model = mujoco.MjModel.from_xml_path(str(default_model_path(UR5)))
    assert spec.safety is None and PolicyIO(spec, model).guard is None
    with pytest.raises(ConfigError, match="the guard maps home_offset actions"):
        PolicyIO(spec, model, safety={})


# --- the runtime runs it by default -----------------------------------------------------------


def _standing(model):
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    mujoco.mj_forward(model, data)
    return data


def test_policy_io_guards_by_default_and_opts_out(go1):
    spec, model = go1
    io, bare = PolicyIO(spec, model), PolicyIO(spec, model, safety=False)
    assert io.guard is not None and bare.guard is None
    data = _standing(model)
    state = io.initial_state(data)
    io.observe(data, state)
    action = np.zeros(12)
    action[2] = 1.0  # FR calf: home -1.8 + 0.5 = -1.3 wanted; the rate limit lets it go 0.75 rad/step from home
    ctrl = np.zeros(model.nu)
    targets = io.apply_action(action, state, ctrl, data)
    # torque first: kp 35 (target - q) within 35.55 N m at rest: target <= q + 35.55/35 ~ q + 1.0157, not binding
    assert targets[2] == pytest.approx(-1.3) and ctrl[io.actuators[2]] == pytest.approx(-1.3)
    action[2] = -1.0  # -2.3 wanted: 1.0 rad from -1.3, the rate limit gives -1.3 - 0.75 = -2.05
    assert io.apply_action(action, state, ctrl, data)[2] == pytest.approx(-2.05)
    assert io.guard.counts["rate_limits"] == 1
    assert bare.apply_action(action, bare.initial_state(data), ctrl)[2] == pytest.approx(-2.3)  # unguarded


def test_policy_io_without_the_robot_state_says_what_to_pass(go1):
    spec, model = go1
    io = PolicyIO(spec, model)
    data = _standing(model)
    from unilab_robot.deploy import SpecError

    with pytest.raises(SpecError, match=r"pass the robot's state to apply_action\(action, state, ctrl, data\).*"
                                        r"safety=False"):
        io.apply_action(np.zeros(12), io.initial_state(data), np.zeros(model.nu))


def test_a_nan_action_latches_damping_in_the_model_until_the_next_episode(go1):
    spec, _ = go1
    model = mujoco.MjModel.from_xml_path(str(default_model_path(GO1)))  # its own: the safe mode writes the gains
    io = PolicyIO(spec, model)
    data = _standing(model)
    state = io.initial_state(data)
    io.observe(data, state)
    kp = model.actuator_gainprm[io.actuators, 0].copy()
    targets = io.apply_action(np.full(12, np.nan), state, data.ctrl, data)
    assert io.guard.latched and io.guard.reason == "nonfinite_action"
    np.testing.assert_array_equal(targets, np.clip(data.qpos[io.joint_q], io.guard.limits.low, io.guard.limits.high))
    assert (model.actuator_gainprm[io.actuators, 0] == 0).all() and (model.actuator_biasprm[io.actuators, 1] == 0).all()
    np.testing.assert_array_equal(state.last_action, np.zeros(12))  # a NaN is remembered as 0
    io.initial_state(data)
    assert not io.guard.latched
    np.testing.assert_array_equal(model.actuator_gainprm[io.actuators, 0], kp)


def test_a_spec_without_the_section_loads_and_runs_no_guard(go1):
    spec, model = go1
    data = json.loads(spec.to_json())
    del data["safety"]
    old = spec_from_dict(data)
    assert old.safety is None and PolicyIO(old, model).guard is None


# --- play says so --------------------------------------------------------------------------


def test_play_says_whether_the_guard_is_on(tmp_path, capsys):
    folder = tmp_path / "go1"
    assert run(["export", str(ROOT / "policies" / "go1_joystick"), "--out", str(folder / "policy.onnx")]) == 0
    assert load_spec(folder).safety.source.startswith("defaults")
    assert "safety guard in the spec, run by unilab play and PolicyIO by default: defaults (the run trained without " \
           "a safety section)" in capsys.readouterr().out  # export states whose numbers it wrote
    assert run(["play", str(folder), "--headless", "--episodes", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "unilab play: safety guard: on (the deploy spec's section; --safety off runs without it)" in out
    assert "safety (the deploy spec): targets moved by" in out
    assert run(["play", str(folder), "--headless", "--episodes", "1", "--no-progress", "--safety", "off"]) == 0
    out = capsys.readouterr().out
    assert "unilab play: safety guard: OFF (--safety off)" in out and "safety (" not in out


# --- training logs it ------------------------------------------------------------------------


def test_training_under_a_safety_section_logs_clips_and_trips_per_iteration(tmp_path, monkeypatch):
    """A tight rate limit (0.02 rad/step) and tilt watchdog (0.05 rad) on 8 Go1 envs: every iteration's
    safety/* columns are that iteration's counts, summing to the wrapper's own totals."""
    from trainers.ppo import train
    from trainers.ppo.config import TrainConfig, from_dict
    from wrappers.safety import Safety

    monkeypatch.chdir(tmp_path)
    seen = {}

    def keep_the_guard(runner, stats):
        env = runner.env
        while not isinstance(env, Safety):
            env = env.env
        seen["counts"] = env.counts.sum(axis=0).copy()
        return False

    cfg = from_dict(TrainConfig, {
        "task": GO1, "num_envs": 8, "total_steps": 8 * 8 * 3, "seed": 3, "out": str(tmp_path / "run"),
        "sim2real": {"extends": "go1_real", "safety": {"max_target_step": 0.02, "max_tilt": 0.05}},
        "algo": {"num_steps": 8, "num_epochs": 1, "num_minibatches": 2},
        "policy": {"actor_hidden": [32, 32], "critic_hidden": [32, 32]},
        "log": {"tensorboard": False, "progress": False, "plot": False, "save_interval": 3}})
    result = train(cfg, callback=keep_the_guard)
    with open(tmp_path / "run" / "progress.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 3
    logged = {k: [float(r[f"safety/{k}"]) for r in rows] for k in ("position_clips", "rate_limits", "torque_limits",
                                                                    "trips", "latched")}
    assert sum(logged["rate_limits"]) > 0 and sum(logged["trips"]) > 0
    totals = [sum(logged[k]) for k in ("position_clips", "rate_limits", "torque_limits", "trips")]
    np.testing.assert_array_equal(totals, seen["counts"])
    assert all(0 <= v <= 1 for v in logged["latched"]) and result.stats["safety/trips"] == logged["trips"][-1]


def test_the_sb3_adapter_sums_the_guards_counts_per_rollout():
    """SB3 training: the adapter's pop_safety() totals are the Safety wrapper's own counts, then reset."""
    pytest.importorskip("stable_baselines3")
    from trainers.sb3 import make_sb3_env
    from trainers.sb3.callbacks import find_adapter
    from wrappers.safety import Safety

    env = make_sb3_env(GO1, 4, seed=0, sim2real={"extends": "go1_real", "safety": {"max_target_step": 0.02}})
    try:
        adapter = find_adapter(env)
        env.reset()
        rng = np.random.default_rng(0)
        for _ in range(20):
            env.step(rng.uniform(-1, 1, (4, 12)).astype(np.float32))
        guard = adapter.venv
        while not isinstance(guard, Safety):
            guard = guard.env
        got = adapter.pop_safety()
        want = guard.counts.sum(axis=0)
        assert [got[k] for k in ("position_clips", "rate_limits", "torque_limits", "trips")] == want.tolist()
        assert got["rate_limits"] > 0 and 0 <= got["latched"] <= 1
        assert adapter.pop_safety() == {}
    finally:
        env.close()
