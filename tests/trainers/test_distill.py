"""Teacher-student distillation (trainers.distill): it learns, the student sees nothing privileged, the
teacher's groups are found by name or named when missing, and the result is a bundled-PPO run."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import yaml

from trainers import cli
from trainers.common.checkpoint import CheckpointError
from trainers.common.envs import make_vec_env
from trainers.distill import DistillConfig, Distiller, distill
from trainers.distill.observations import GroupError, check_student_observation, teacher_index
from trainers.distill.teacher import Teacher
from trainers.ppo.config import ConfigError, load_config
from trainers.ppo.evaluate import evaluate, load_policy
from trainers.ppo.runner import build_learner

FLAT, ROUGH, DEPTH = "UniLab/Go1Joystick-v0", "UniLab/Go1JoystickRough-v0", "UniLab/Go1JoystickDepth-v0"
QUIET = ["log.progress=false", "log.tensorboard=false", "log.plot=false"]


def _held_out_states(teacher: Teacher, n: int = 32, steps: int = 30, seed: int = 999) -> torch.Tensor:
    """Observations of the flat Go1 under the teacher, from seeds the distillation never saw."""
    env = make_vec_env(FLAT, n)
    try:
        obs, _ = env.reset(seed=seed)
        seen = []
        for _ in range(steps):
            x = torch.as_tensor(obs, dtype=torch.float32)
            seen.append(x)
            obs, *_ = env.step(teacher(x).numpy())
        return torch.cat(seen)
    finally:
        env.close()


def _rms(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).square().mean().sqrt())


def test_a_tiny_distillation_learns_the_teachers_actions(tmp_path):
    """Student = the teacher's own observation (the flat Go1), teacher = the shipped go1_joystick."""
    out = tmp_path / "student"
    cfg = load_config(FLAT, overrides=[*QUIET, "num_envs=32", "total_steps=4608", f"out={out}"], torch_threads=1)
    result = distill(cfg, DistillConfig(teacher="policies/go1_joystick"))
    assert result.iterations == 6 and (out / "checkpoint.pt").exists()

    teacher = Teacher("policies/go1_joystick")
    states = _held_out_states(teacher)
    fresh = build_learner(result_dims(out), cfg, torch.device("cpu"))  # the student before any fitting
    student, student_cfg, _ = load_policy(out)
    with torch.no_grad():
        target = teacher(states)
        before = _rms(fresh.policy.actor(fresh.obs_normalizer(states)), target)
        after = _rms(student(states), target)
    print(f"held-out RMS action error: fresh student {before:.3f}, distilled {after:.3f}")
    assert after < 0.5 * before, (before, after)

    # a bundled-PPO run: its config is a TrainConfig, eval runs it, distill.yaml names the teacher
    assert student_cfg.task == FLAT and yaml.safe_load((out / "config.yaml").read_text())["task"] == FLAT
    assert yaml.safe_load((out / "distill.yaml").read_text())["teacher"] == "policies/go1_joystick"
    assert evaluate(out, episodes=2, num_envs=2, env_kwargs={"max_episode_steps": 40}).episodes == 2


def result_dims(out):
    from trainers.common.checkpoint import load_checkpoint
    from trainers.ppo.checkpoint_format import CKPT_FORMAT, CKPT_VERSION
    from trainers.ppo.envs import EnvDims

    return EnvDims(**load_checkpoint(out, CKPT_FORMAT, CKPT_VERSION)["dims"])


def test_the_student_may_not_see_a_privileged_group(tmp_path, capsys):
    env = make_vec_env(ROUGH, 1)  # its policy observation holds height_scan, which is privileged too
    try:
        with pytest.raises(GroupError, match="privileged group.*height_scan"):
            check_student_observation(env, ROUGH)
    finally:
        env.close()
    for task in (FLAT, DEPTH):  # what the student sees on these is none of their privileged groups
        env = make_vec_env(task, 1)
        try:
            check_student_observation(env, task)
        finally:
            env.close()
    out = tmp_path / "leaky"
    assert cli.main(["distill", "--teacher", "policies/go1_rough", "--task", ROUGH, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "height_scan" in err and err.count("\n") == 1 and not out.exists()


def test_teacher_groups_come_by_name_from_both_observations():
    policy = {"proprio": slice(0, 50), "depth": slice(50, 242)}
    privileged = {"height": slice(0, 1), "height_scan": slice(25, 212)}
    index = teacher_index((("proprio", 50), ("height_scan", 187)), policy, privileged, 242, DEPTH)
    np.testing.assert_array_equal(index, np.r_[0:50, 242 + 25:242 + 212])
    with pytest.raises(GroupError, match="'height_scan' has 187 columns, .* has 10"):
        teacher_index((("height_scan", 187),), policy, {"height_scan": slice(0, 10)}, 242, DEPTH)


def test_under_a_profile_the_teacher_reads_the_clean_sensors_and_the_controllers_own_groups():
    policy = {"gyro": slice(0, 3), "last_action": slice(3, 5), "depth": slice(5, 9)}
    index = teacher_index((("gyro", 3), ("last_action", 2)), policy, {}, 9, DEPTH, clean_at=20)
    np.testing.assert_array_equal(index, np.r_[20:23, 3:5])  # gyro from the clean copy, last_action as the policy's


def test_the_depth_student_under_go1_depth_real_learns_from_a_teacher_on_exact_sensors(tmp_path):
    cfg = load_config(DEPTH, overrides=[*QUIET, "num_envs=4", "total_steps=16", "algo.num_steps=4",
                                        f"out={tmp_path / 'noisy'}", "sim2real=go1_depth_real"], torch_threads=1)
    distiller = Distiller(cfg, DistillConfig(teacher="policies/go1_rough", num_epochs=1))
    try:
        obs, info = distiller.env.reset(seed=0)
        for _ in range(3):
            obs, _, _, _, info = distiller.env.step(np.zeros((4, 12), np.float32))
        clean = distiller.tap.obs
        assert not np.allclose(obs[:, 9:21], clean[:, 9:21])  # the policy's joint angles are noisy, the tap's exact
        source = np.concatenate([obs, info["privileged_obs"], clean], axis=1)
        teacher_obs = source[:, distiller.index.numpy()]
        np.testing.assert_array_equal(teacher_obs[:, 9:21], clean[:, 9:21])
        np.testing.assert_array_equal(teacher_obs[:, 33:45], obs[:, 33:45])  # last_action: the controller's
        np.testing.assert_array_equal(teacher_obs[:, 50:], info["privileged_obs"][:, 25:212])  # the exact height scan
    finally:
        distiller.close()


def test_a_group_the_env_lacks_is_named(tmp_path, capsys):
    out = tmp_path / "blind"
    assert cli.main(["distill", "--teacher", "policies/go1_rough", "--task", FLAT, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "'height_scan' is in neither observation" in err and err.count("\n") == 1 and not out.exists()


def test_depth_student_of_the_height_scan_teacher(tmp_path):
    """The issue's pairing, one short iteration: the teacher reads the proprioception from the policy
    observation and height_scan from the privileged one; the student gets the CNN on depth."""
    cfg = load_config(DEPTH, overrides=[*QUIET, "num_envs=8", "total_steps=32", "algo.num_steps=4",
                                        f"out={tmp_path / 'depth'}"], torch_threads=1)
    distiller = Distiller(cfg, DistillConfig(teacher="policies/go1_rough", num_epochs=1))
    try:
        np.testing.assert_array_equal(distiller.index.numpy(), np.r_[0:50, 242 + 25:242 + 212])
        assert distiller.cfg.policy.image_groups[0].name == "depth"
        result = distiller.learn()
    finally:
        distiller.close()
    assert result.iterations == 1
    policy, student_cfg, _ = load_policy(result.out_dir)
    assert type(policy.actor).__name__ == "ImageMLP" and student_cfg.policy.image_groups[0].shape == (1, 12, 16)


def test_bad_distill_settings_are_one_line():
    with pytest.raises(ConfigError, match="distill.beta must be in"):
        DistillConfig(teacher="x", beta=1.5)
    with pytest.raises(ConfigError, match="--teacher"):
        DistillConfig()
    assert DistillConfig(teacher="x", beta=1.0, beta_decay=0.5, beta_min=0.1).beta_at(5) == 0.1


def test_init_from_starts_the_student_as_that_run_acts():
    """A student started from the teacher's own run (the flat Go1) acts as the teacher before any fitting."""
    cfg = load_config(FLAT, overrides=[*QUIET, "num_envs=4"], torch_threads=1, init_from="policies/go1_joystick")
    distiller = Distiller(cfg, DistillConfig(teacher="policies/go1_joystick"))
    try:
        states = _held_out_states(distiller.teacher, n=4, steps=5)
        np.testing.assert_allclose(distiller.student(states).numpy(), distiller.teacher(states).numpy(), atol=1e-5)
    finally:
        distiller.close()
    with pytest.raises(CheckpointError, match="trained on 'UniLab/Go1JoystickRough-v0', this run is 'UniLab/Go1Joystick-v0'"):
        Distiller(load_config(FLAT, overrides=[*QUIET, "num_envs=2"], init_from="policies/go1_rough"),
                  DistillConfig(teacher="policies/go1_joystick"))


def test_a_stopped_distillation_says_how_to_go_on(tmp_path, capsys):
    """A distillation has no exact resume: its stop line names `unilab distill --init-from`, not `train --resume`
    (which would go on with PPO)."""
    out = tmp_path / "stopped"
    cfg = load_config(FLAT, overrides=[*QUIET, "num_envs=4", "total_steps=96", "algo.num_steps=8", f"out={out}"],
                      torch_threads=1)
    distiller = Distiller(cfg, DistillConfig(teacher="policies/go1_joystick", num_epochs=1))
    fit, fits = distiller.fit, []

    def fit_then_ctrl_c():  # the second fit is interrupted, as Ctrl-C would
        if fits:
            raise KeyboardInterrupt
        fits.append(1)
        return fit()

    distiller.fit = fit_then_ctrl_c
    try:
        result = distiller.learn()
    finally:
        distiller.close()
    assert result.interrupted and result.iterations == 1 and (out / "checkpoint.pt").exists()
    err = capsys.readouterr().err
    assert (f"Go on distilling with: unilab distill --teacher policies/go1_joystick --init-from {out}" in err
            and "train --resume" not in err), err
