"""``unilab play`` headless: the exported policy in plain MuJoCo matches ``unilab eval``; mistakes end in one line."""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

import gymnasium as gym
import numpy as np
import onnxruntime as ort
import pytest
import torch

from trainers.play import GLFW_KEYS, Player, PlayError, apply_key, find_policy, run_headless
from trainers.ppo.evaluate import evaluate, load_policy
from unilab_robot.deploy import load_spec

from tests.deploy.conftest import one_error_line, run



def test_export_writes_the_spec_beside_the_policy_and_in_it(ur5_run):
    folder = Path(ur5_run)
    beside, embedded = load_spec(folder / "deploy_spec.json"), load_spec(folder / "policy.onnx")
    assert beside == embedded and beside.task.id == "UniLab/UR5Reach-v0"


def test_onnx_actions_equal_the_torch_policy(ur5_run):
    policy, cfg, _ = load_policy(ur5_run)
    env = gym.make_vec("UniLab/UR5Reach-v0", num_envs=64, num_threads=1)
    obs, _ = env.reset(seed=5)
    batches = [obs]
    rng = np.random.default_rng(0)
    for _ in range(10):
        obs, *_ = env.step(rng.uniform(-1, 1, (64, 6)).astype(np.float32))
        batches.append(obs)
    env.close()
    obs = np.concatenate(batches).astype(np.float32)
    with torch.no_grad():
        expected = np.clip(policy(torch.as_tensor(obs)).numpy(), -1.0, 1.0)
    session = ort.InferenceSession(str(Path(ur5_run) / "policy.onnx"), providers=["CPUExecutionProvider"])
    got = session.run(None, {"obs": obs})[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_headless_play_reaches_the_success_of_eval(ur5_run, capsys):
    ev = evaluate(ur5_run, episodes=64, num_envs=16, progress=False)
    played = run_headless(Player(find_policy(ur5_run), seed=0), 64, progress=False)
    assert played.fall_rate == 0.0 and played.mean_length == 75
    assert ev.success_rate >= 0.9, ev.summary()
    assert abs(played.success_rate - ev.success_rate) <= 0.05, (ev.summary(), played.summary())
    # the loop's time per step is measured and reported, not bounded here: a busy machine's time is not the loop's
    assert played.step_us > 0, played.summary()
    # and through the CLI
    assert run(["play", ur5_run, "--headless", "--episodes", "8", "--no-video", "--no-progress"]) == 0
    out = capsys.readouterr().out
    success = float(re.search(r"success ([\d.]+)%", out).group(1)) / 100
    assert success >= 0.75 and "x faster than real time" in out, out


def test_go1_policy_plays_without_nan_with_sim2real_and_a_video(go1_run, tmp_path):
    for sim2real in (None, "go1_real"):
        player = Player(find_policy(go1_run), sim2real=sim2real, seed=1)
        video = tmp_path / f"play_{sim2real}.gif"
        res = run_headless(player, 2, video=video, video_frames=3, progress=False)
        assert np.isfinite(player.data.qpos).all() and np.isfinite(player.data.qvel).all()
        assert math.isfinite(res.tracking_lin_vel) and 0 <= res.fall_rate <= 1 and res.mean_length >= 1
        assert res.video is not None and res.video.exists()
        if sim2real:
            assert "packet_loss" in res.sim2real


def test_play_remembers_the_sent_action_not_the_delayed_one(go1_run, tmp_path):
    """Under action latency the policy's last_action is what it sent (clipped), as the training
    stack's ControllerState gives it, while the motors execute the action of a step before."""
    profile = tmp_path / "late.yaml"
    profile.write_text("robot: go1\nenv_id: UniLab/Go1Joystick-v0\naction_latency: {delay: 1}\n")
    player = Player(find_policy(go1_run), sim2real=str(profile), seed=1)
    player.reset()
    sent, executed = [], []
    policy = player.policy
    player.policy = lambda obs: sent.append(policy(obs)) or sent[-1]
    apply_action = player.io.apply_action
    player.io.apply_action = lambda a, *rest: executed.append(np.array(a)) or apply_action(a, *rest)
    low, high = player.io.clip
    for _ in range(3):
        player.act()
        np.testing.assert_allclose(player.state.last_action, np.clip(sent[-1], low, high), atol=1e-6)
    np.testing.assert_allclose(executed[0], 0.0)  # nothing has arrived yet: the neutral action
    np.testing.assert_allclose(executed[2], sent[1], atol=1e-6)
    assert not np.allclose(sent[2], sent[1])


def test_play_films_only_when_asked_and_never_into_the_policy_folder(go1_run, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    policy = Path(go1_run)
    shipped = sorted(p.name for p in policy.iterdir())
    argv = ["play", go1_run, "--headless", "--episodes", "1", "--no-progress"]
    assert run(argv) == 0
    assert "video" not in capsys.readouterr().out and not (tmp_path / "runs").exists()

    assert run([*argv, "--video", "--video-frames", "2"]) == 0  # a bare --video: runs/play/<policy folder name>.*
    [video] = (tmp_path / "runs" / "play").iterdir()
    assert video.name in (f"{policy.name}.mp4", f"{policy.name}.gif") and video.stat().st_size > 0
    assert f"video runs/play/{video.name}" in capsys.readouterr().out

    assert run([*argv, "--video", str(tmp_path / "here.gif"), "--video-frames", "2"]) == 0
    assert (tmp_path / "here.gif").stat().st_size > 0
    assert sorted(p.name for p in policy.iterdir()) == shipped  # nothing added to the policy folder


def test_play_on_a_model_given_by_path(go1_run, tmp_path):
    from unilab_robot.assets import go1

    heavy = tmp_path / "go1_heavy.xml"  # a different robot with the same names: 1.5 kg more trunk
    heavy.write_text(go1.MJCF_PATH.read_text().replace('mass="5.204"', 'mass="6.704"', 1))
    player = Player(find_policy(go1_run), model_path=str(heavy), seed=0)
    assert player.model.body_mass[1] == pytest.approx(6.704)
    assert player.io.actuator_differences() == []
    res = run_headless(player, 1, progress=False)
    assert res.episodes == 1 and np.isfinite(player.data.qpos).all()
    renamed = tmp_path / "go1_renamed.xml"
    renamed.write_text(go1.MJCF_PATH.read_text().replace('"RR_thigh_joint"', '"rear_right_thigh"'))
    with pytest.raises(PlayError, match=r"no joint named \['RR_thigh_joint'\]"):
        Player(find_policy(go1_run), model_path=str(renamed))


def test_spec_of_another_task_is_refused(go1_run, ur5_run, capsys):
    with pytest.raises(PlayError, match="is for UniLab/UR5Reach-v0, not UniLab/Go1Joystick-v0"):
        find_policy(go1_run, spec_path=Path(ur5_run) / "deploy_spec.json")
    assert run(["play", go1_run, "--headless", "--spec", str(Path(ur5_run) / "deploy_spec.json")]) == 2
    assert "is for UniLab/UR5Reach-v0, not UniLab/Go1Joystick-v0" in one_error_line(capsys)


def test_an_old_export_without_spec_gets_the_spec_beside_it_checked_by_size(go1_run, ur5_run, tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    import onnx

    model = onnx.load(str(Path(go1_run) / "policy.onnx"))
    kept = [(p.key, p.value) for p in model.metadata_props if p.key != "unilab_deploy_spec"]
    del model.metadata_props[:]
    for k, v in kept:
        model.metadata_props.add(key=k, value=v)
    onnx.save(model, str(folder / "policy.onnx"))
    shutil.copy(Path(ur5_run) / "deploy_spec.json", folder / "deploy_spec.json")
    with pytest.raises(PlayError, match=r"does not fit .*policy.onnx \(obs 50, action 12\)"):
        Player(find_policy(folder))


@pytest.mark.parametrize("argv, message", [
    (["play", "no/such/run"], "no/such/run does not exist"),
    (["play", "RUN", "--episodes", "0"], "--episodes: must be a positive integer"),
    (["play", "RUN", "--sim2real", "mars_rover"], "unknown sim-to-real profile 'mars_rover'"),
    (["play", "RUN", "--sim2real", "ur5_real"], "is for UniLab/UR5Reach-v0 (robot ur5e), but the policy is for UniLab/Go1Joystick-v0"),
    (["play", "RUN", "--model-path", "nowhere.xml"], "model nowhere.xml does not exist"),
])
def test_play_mistakes_end_in_one_line(go1_run, argv, message, capsys):
    argv = [go1_run if a == "RUN" else a for a in argv]
    assert run([*argv, "--headless", "--no-video"]) == 2
    assert message in one_error_line(capsys)


def test_a_run_not_exported_yet_says_to_export(tmp_path, capsys):
    (tmp_path / "checkpoint.pt").write_bytes(b"")
    assert run(["play", str(tmp_path), "--headless"]) == 2
    assert f"run `unilab export {tmp_path}` first" in one_error_line(capsys)


def test_a_task_without_a_deploy_spec_says_so_not_to_re_export(tmp_path, capsys):
    # every UniLab task has a deploy spec builder now: a run on a Gymnasium task stands in for one without
    (tmp_path / "config.yaml").write_text("task: HalfCheetah-v5\nenv_kwargs: {}\n")
    (tmp_path / "policy.onnx").write_bytes(b"")  # its ONNX carries no spec
    assert run(["play", str(tmp_path), "--headless"]) == 2
    line = one_error_line(capsys)
    assert "HalfCheetah-v5 has no deploy spec yet" in line and "unilab eval" in line and "re-export" not in line


def test_keys_steer_the_command_within_the_training_ranges(go1_run):
    player = Player(find_policy(go1_run), seed=0)
    apply_key(player, GLFW_KEYS["space"])
    assert np.all(player.command == 0)
    for _ in range(3):
        apply_key(player, GLFW_KEYS["up"])
    apply_key(player, GLFW_KEYS["left"])
    apply_key(player, GLFW_KEYS["page_down"])
    np.testing.assert_allclose(player.command, [0.3, 0.1, -0.2])
    for _ in range(30):
        apply_key(player, GLFW_KEYS["down"])
    assert player.command[0] == pytest.approx(-0.6)  # the training range's low end
    player.control_step(resample=False)
    apply_key(player, GLFW_KEYS["r"])
    assert player.step_count == 0 and player.command[0] == pytest.approx(-0.6)


SHIPPED = Path(__file__).resolve().parents[2] / "policies" / "go1_joystick"


@pytest.mark.skipif(not (SHIPPED / "policy.onnx").exists(), reason="policies/go1_joystick is not shipped in this checkout")
def test_the_shipped_go1_policy_plays_and_walks(capsys):
    assert load_spec(SHIPPED / "deploy_spec.json") == load_spec(SHIPPED / "policy.onnx")
    assert run(["play", str(SHIPPED), "--headless", "--episodes", "2", "--no-video", "--no-progress"]) == 0
    out = capsys.readouterr().out
    falls = float(re.search(r"falls ([\d.]+)%", out).group(1))
    tracking = float(re.search(r"linear ([\d.]+)", out).group(1))
    assert falls == 0.0 and tracking > 0.7, out


def test_play_notes_actuators_that_differ_from_training(go1_run, tmp_path, capsys):
    from unilab_robot.assets import go1

    stiff = tmp_path / "go1_stiff.xml"
    stiff.write_text(go1.MJCF_PATH.read_text().replace('<position kp="35"', '<position kp="60"', 1))
    assert run(["play", go1_run, "--headless", "--episodes", "1", "--no-video", "--no-progress",
                "--model-path", str(stiff)]) == 0
    err = capsys.readouterr().err
    assert "Kp differs on 12 actuators (e.g. FR_hip: 60 here, 35 in training)" in err, err


def test_the_window_starts_on_a_zero_command_and_lists_its_keys(go1_run):
    """``unilab play``'s window: the robot waits for the keyboard (zero command, not a random one),
    and the on-screen key help states the steps the keys really take."""
    import mujoco

    from trainers.play import TARGET_STEP, VELOCITY_STEP, keys_overlay, start_idle

    player = Player(find_policy(go1_run), seed=1)
    start_idle(player)
    assert player.step_count == 0 and np.all(player.command == 0)
    for _ in range(10):
        player.control_step(resample=False)
    assert np.all(player.command == 0)  # nothing but a key changes it

    font, grid, keys, does = keys_overlay(player.spec.command.kind)
    assert grid == mujoco.mjtGridPos.mjGRID_TOPRIGHT and font == mujoco.mjtFontScale.mjFONTSCALE_100
    assert len(keys.splitlines()) == len(does.splitlines()) == 5
    apply_key(player, GLFW_KEYS["up"])
    apply_key(player, GLFW_KEYS["page_up"])
    np.testing.assert_allclose(player.command, [VELOCITY_STEP[0], 0.0, VELOCITY_STEP[2]])
    assert f"forward speed +/- {VELOCITY_STEP[0]:g} m/s" in does and f"yaw rate +/- {VELOCITY_STEP[2]:g} rad/s" in does
    assert "Space" in keys and "R" in keys.splitlines()

    reach = keys_overlay("reach_target")
    assert f"target z +/- {TARGET_STEP * 100:.0f} cm" in reach[3] and "Ctrl + right-drag" in reach[2]


def test_the_reach_window_starts_with_the_target_at_the_gripper(ur5_run):
    from trainers.play import start_idle
    from unilab_robot.deploy.episodes import distance_to_target

    player = Player(find_policy(ur5_run), seed=1)
    start_idle(player)
    assert distance_to_target(player.io, player.data, player.state) < 1e-9
    np.testing.assert_allclose(player.data.mocap_pos[player.io.target_mocap], player.command)
