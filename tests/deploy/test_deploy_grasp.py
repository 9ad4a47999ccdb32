"""UR5Grasp outside training: its deploy spec, the NumPy end-effector controller and object
observation against the env's Numba kernels, and ``unilab play`` of the grasp policy."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import gymnasium as gym
import mujoco
import numpy as np
import pytest

import unilab_envs  # noqa: F401
from unilab_robot.deploy import ControllerState, PolicyIO, SpecError, spec_from_dict, spec_from_json
from unilab_envs.deploy_spec import deploy_spec_for, spec_from_env
from unilab_robot.deploy.grasp import LiftRule

from tests.deploy.conftest import one_error_line, run

TASK = "UniLab/UR5Grasp-v0"
N = 8
SHIPPED = Path(__file__).resolve().parents[2] / "policies" / "ur5_grasp"


@pytest.fixture(scope="module")
def spec():
    return deploy_spec_for(TASK)


def _state(task, i: int, height: float) -> ControllerState:
    """Env ``i``'s controller state, read from the task's per-env arrays (the lift height is the task's constant)."""
    return ControllerState(last_action=np.array(task.last_action[i]), command=np.array([height]),
                           ee_target=np.array(task.ee_target[i]))


def _random_states(env, rng, steps: int):
    """Random actions, the gripper mostly closed so that pads touch and lift the cube now and then."""
    obs, _ = env.reset(seed=int(rng.integers(1000)))
    for _ in range(steps):
        a = rng.uniform(-1, 1, (N, 4))
        a[:, 2] -= 0.3  # down, towards the table and the cube
        obs, *_ = env.step(a.astype(np.float32))
    return obs


def test_spec_round_trips_and_holds_the_controller_and_the_object(spec):
    assert spec_from_json(spec.to_json()) == spec
    a, g = spec.action, spec.grasp
    assert a.mode == "ee_delta" and a.size == 4 and a.scale == 0.02 and len(a.joint_names) == 6
    assert a.joint_names[0] == "shoulder_pan_joint" and a.actuator_names[-1] == "wrist_3"
    assert spec.model.ee_site == "pinch" and spec.model.root_body is None and spec.model.home_keyframe == "home"
    assert (spec.timing.physics_dt, spec.timing.substeps, spec.timing.control_dt) == (0.004, 10, 0.04)
    assert g.gripper.actuator == "fingers_actuator" and (g.gripper.ctrl_open, g.gripper.ctrl_closed) == (0.0, 0.0425)
    assert g.controller.max_target_lead == 0.05 and g.controller.orientation[8] < -0.99  # pointing down
    assert g.object.body == "cube" and g.object.size == 0.05 and g.object.success_hold_steps == 25
    assert spec.command.kind == "lift" and spec.command.ranges == ((0.175, 0.175),)  # cube centre 15 cm up
    assert spec.episode.max_steps == 125 and spec.episode.reset_joint_range == 0.05
    data = json.loads(spec.to_json())
    assert list(data)[:2] == ["schema", "schema_version"] and "grasp" in data
    assert "grasp" not in json.loads(deploy_spec_for("UniLab/UR5Reach-v0").to_json())  # other tasks' specs unchanged


def test_task_keywords_reach_the_grasp_spec():
    spec = deploy_spec_for(TASK, cube_size=0.04, lift_target=0.2, max_target_lead=0.06)
    assert spec.grasp.object.size == 0.04 and spec.grasp.controller.max_target_lead == 0.06
    assert spec.command.ranges[0][0] == pytest.approx(0.22)


@pytest.mark.parametrize("path, value, message", [
    (("grasp",), None, "ee_delta actions need the spec's grasp section"),
    (("action", "size"), 6, "action.size must be 4"),
    (("action", "kp"), [1.0] * 4, "action.kp has 4 entries, action.joint_names has 6"),
    (("grasp", "gripper", "actuator"), "no_such", "'no_such' is not in the model's actuator names"),
    (("grasp", "controller", "orientation"), [1.0] * 8, "must be 9 finite numbers"),
    (("grasp", "object", "mass"), [0.2, 0.1], "grasp.object.mass must be (low, high)"),
    (("grasp", "object", "colour"), "red", "unknown keys ['colour']"),
    (("command", "kind"), "velocity", "the lift height (kind 'lift'"),
])
def test_bad_grasp_specs_are_refused_with_what_is_wrong(spec, path, value, message):
    data = json.loads(spec.to_json())
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(SpecError, match=re.escape(message)):
        spec_from_dict(data)


def test_reference_observation_and_controller_equal_the_env():
    env = gym.make_vec(TASK, num_envs=N, num_threads=1)
    try:
        spec, base = spec_from_env(env, TASK), env.unwrapped
        model = base.batch.get_model(0)
        io, data = PolicyIO(spec, model), mujoco.MjData(model)
        height = spec.command.ranges[0][0]
        rng = np.random.default_rng(0)
        touched = 0
        for steps in (0, 20, 45, 70):
            obs = _random_states(env, rng, steps)
            for i in range(N):
                base.batch.get_data(i, data)  # the state; derived fields are the reference's job
                io.refresh(data)
                ref = io.observe(data, _state(base.task, i, height))
                assert ref.dtype == np.float32 and ref.shape == obs[i].shape
                np.testing.assert_allclose(ref, obs[i], rtol=1e-6, atol=1e-6, err_msg=f"env {i} after {steps} steps")
                touched += bool(obs[i][12] < 0.08)  # the gripper closed at least a little
            # the controller: the same actions from the same states give the kernel's ctrl
            before = [_state(base.task, i, height) for i in range(N)]
            actions = rng.uniform(-1.5, 1.5, (N, 4)).astype(np.float32)
            base.task.apply_actions(actions)  # the Numba kernel writes the batch's ctrl and targets
            for i in range(N):
                base.batch.get_data(i, data)
                io.refresh(data)
                ctrl = np.array(data.ctrl)
                ctrl[:] = 0.0
                io.apply_action(actions[i], before[i], ctrl, data)
                np.testing.assert_allclose(ctrl, data.ctrl, rtol=0, atol=1e-10, err_msg=f"env {i}")
                np.testing.assert_allclose(before[i].ee_target, base.task.ee_target[i], rtol=0, atol=1e-12)
                np.testing.assert_allclose(before[i].last_action, np.clip(actions[i], -1, 1))
        assert touched > 0
    finally:
        env.close()


def test_a_fresh_state_is_the_env_reset_state(spec):
    env = gym.make_vec(TASK, num_envs=2, num_threads=1)
    try:
        obs, _ = env.reset(seed=3)
        base = env.unwrapped
        io = PolicyIO(spec, base.batch.get_model(0))
        data = mujoco.MjData(io.model)
        base.batch.get_data(1, data)
        state = io.initial_state(data)  # the gripper open, the target at the pinch point, the training lift height
        np.testing.assert_allclose(io.observe(data, state), obs[1], rtol=1e-6, atol=1e-6)
        with pytest.raises(SpecError, match="ee_delta actions need the robot's state"):
            io.apply_action(np.zeros(4), state, np.zeros(io.model.nu))
    finally:
        env.close()


def test_lift_rule_ends_episodes_as_the_env(grasp_run):
    """The trained policy in the batched env (NEXT_STEP autoreset: a finished row still holds its last
    state): on every step the reference's lift rule ends exactly the episodes the env ends, success or not."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(grasp_run / "policy.onnx"), providers=["CPUExecutionProvider"])
    env = gym.make_vec(TASK, num_envs=N, num_threads=1, autoreset_mode=gym.vector.AutoresetMode.NEXT_STEP)
    try:
        spec, base = spec_from_env(env, TASK), env.unwrapped
        io = PolicyIO(spec, base.batch.get_model(0))
        data = mujoco.MjData(io.model)
        sensordata = base.batch.bind("sensordata")  # the pad contacts of the last substep: not part of the state
        rules = [LiftRule(io.grasp) for _ in range(N)]
        obs, _ = env.reset(seed=1)
        resetting = np.zeros(N, bool)
        successes = failures = 0
        for _ in range(300):
            obs, _, terminated, truncated, info = env.step(session.run(None, {"obs": obs})[0])
            for i in range(N):
                if resetting[i]:  # this step reset the row
                    rules[i].reset()
                    continue
                base.batch.get_data(i, data)
                io.refresh(data)
                data.sensordata[:] = sensordata[i]
                assert rules[i].step(data) == bool(terminated[i]), f"env {i}"
                assert rules[i].success == bool(info["is_success"][i]), f"env {i}"
                successes += rules[i].success
                failures += rules[i].failed
            resetting = terminated | truncated
        assert successes >= N, (successes, failures)
    finally:
        env.close()


@pytest.fixture(scope="module")
def grasp_run(tmp_path_factory):
    """The shipped grasp policy (checkpoint and config) exported afresh into a scratch folder."""
    if not (SHIPPED / "checkpoint.pt").exists():
        pytest.skip("policies/ur5_grasp is not shipped in this checkout")
    folder = tmp_path_factory.mktemp("grasp") / "ur5_grasp"
    folder.mkdir()
    for name in ("checkpoint.pt", "config.yaml"):
        shutil.copy(SHIPPED / name, folder / name)
    assert run(["export", str(folder)]) == 0
    return folder


def test_export_writes_the_grasp_spec_and_play_picks(grasp_run, capsys):
    from trainers.play import Player, find_policy, run_headless
    from unilab_robot.deploy import load_spec

    assert load_spec(grasp_run / "deploy_spec.json") == load_spec(grasp_run / "policy.onnx") == deploy_spec_for(TASK)
    played = run_headless(Player(find_policy(grasp_run), seed=0), 4, progress=False)
    assert played.success_rate is not None and played.success_rate >= 0.75, played.summary()
    assert played.mean_length < 125 and played.fall_rate == 0.0 and played.step_us > 0, played.summary()  # timed, not bounded
    capsys.readouterr()
    assert run(["play", str(grasp_run), "--headless", "--episodes", "2", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"success [\d.]+%", out) and "x faster than real time" in out, out


def test_grasp_play_under_its_profile_and_without_a_guard(grasp_run, capsys):
    from trainers.play import Player, PlayError, find_policy, run_headless

    player = Player(find_policy(grasp_run), sim2real="ur5_grasp_real", seed=1)
    res = run_headless(player, 2, progress=False)
    assert res.episodes == 2 and np.isfinite(player.data.qpos).all() and "observation_latency" in res.sim2real
    with pytest.raises(PlayError, match="the guard maps home_offset actions"):
        Player(find_policy(grasp_run), safety="default")
    assert run(["play", str(grasp_run), "--headless", "--safety", "--no-progress"]) == 2
    assert "ee_delta" in one_error_line(capsys)


def test_the_shipped_grasp_policy_carries_its_spec_and_the_window_keys_move_the_lift_height(grasp_run):
    from trainers.play import GLFW_KEYS, Player, apply_key, find_policy, idle_command, keys_overlay, status_overlay
    from unilab_robot.deploy import load_spec

    assert load_spec(SHIPPED / "deploy_spec.json") == load_spec(SHIPPED / "policy.onnx") == load_spec(grasp_run)
    player = Player(find_policy(SHIPPED), seed=0)
    np.testing.assert_allclose(idle_command(player), [0.175])  # no idle command: it picks at training's height
    apply_key(player, GLFW_KEYS["page_up"])
    apply_key(player, GLFW_KEYS["up"])  # not a grasp key
    np.testing.assert_allclose(player.command, [0.195])
    apply_key(player, GLFW_KEYS["r"])  # a new cube, the lift height kept
    assert player.step_count == 0 and player.command[0] == pytest.approx(0.195)
    assert player.control_step(resample=False) is False
    names, values = status_overlay(player, False)[2:]
    assert names.splitlines()[0] == "lift height" and values.startswith("0.195 m")
    assert "lift height" in keys_overlay("lift")[3]
