"""Exact resume on the real tasks: a run stopped at its checkpoint and resumed in a new
process (``unilab train --resume``) ends bit-identical to the run that went straight
through: parameters, optimizer, normalizers, the env's state (terrain curriculum included)
and its next observations, the episode windows, the stop rule's streak, the logged
statistics, and the iteration at which a ``stop:`` rule ends the run."""

import dataclasses
import math
import os
import subprocess
import sys

import pytest
import torch

import unilab_envs  # noqa: F401  registers UniLab/*
from tests.trainers.test_ppo_checkpoint import flat_leaves
from trainers.common.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from trainers.common.logging import read_csv
from trainers.ppo import train
from trainers.ppo.config import TrainConfig, deep_merge, from_dict, load_config
from trainers.ppo.runner import CKPT_FORMAT, CKPT_VERSION

GO1, G1, UR5 = "UniLab/Go1Joystick-v0", "UniLab/G1Joystick-v0", "UniLab/UR5Reach-v0"
GRASP, ROUGH = "UniLab/UR5Grasp-v0", "UniLab/Go1JoystickRough-v0"
#: UR5Grasp's own stop rule, counted from 8 episodes so it is checked (success stays 0 in a tiny run)
GRASP_STOP = {**dataclasses.asdict(load_config(GRASP).stop), "min_episodes": 8}
#: first episodes start on high terrain levels, so the curriculum moves (down) within a tiny run
ROUGH_CURRICULUM = {"init_levels": [5, 9]}


def run_state(path) -> dict:
    """Every value of a checkpoint but its config (which names the run's folder) and wall time, by path."""
    ckpt = load_checkpoint(path, CKPT_FORMAT, CKPT_VERSION)
    return flat_leaves({k: v for k, v in ckpt.items() if k not in ("config", "wall_time")})


def assert_same_run_state(a_path, b_path) -> None:
    a, b = run_state(a_path), run_state(b_path)
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], torch.Tensor):
            assert torch.equal(a[key], b[key]), key
        else:
            assert a[key] == b[key], key


def same(x: float, y: float) -> bool:
    return x == y or (math.isnan(x) and math.isnan(y))


def assert_logs_the_same_from(resumed_csv, straight_csv, first_iteration: int) -> None:
    """The resumed log's rows equal the straight run's from ``first_iteration`` (all but perf/* timings)."""
    resumed, straight = read_csv(resumed_csv), read_csv(straight_csv)
    for key, values in resumed.items():
        if not key.startswith("perf/"):
            expected = straight[key][first_iteration - 1:]
            assert len(values) == len(expected) and all(map(same, values, expected)), key


def tiny_cfg(task, out, **over) -> TrainConfig:
    # one torch thread, as the resumed process has (UNILAB_NUM_THREADS=1): with torch's default (one a
    # core) the straight run's reductions split differently and its floats differ in the last bits
    base = {"task": task, "num_envs": 8, "total_steps": 8 * 8 * 4, "seed": 5, "out": str(out), "torch_threads": 1,
            "algo": {"num_steps": 8, "num_epochs": 1, "num_minibatches": 2},
            "policy": {"actor_hidden": [32, 32], "critic_hidden": [32, 32]},
            "env_kwargs": {"max_episode_steps": 12},  # episodes end (and wrappers redraw) within the run
            "log": {"tensorboard": False, "progress": False, "plot": False, "save_interval": 2, "keep_every": 2}}
    return from_dict(TrainConfig, deep_merge(base, over))


@pytest.mark.parametrize("task, over", [
    (GO1, {"sim2real": "go1_real"}),
    (GO1, {"sim2real": "go1_real", "overlap": True}),
    (G1, {}),
    (UR5, {}),
    (GRASP, {"stop": GRASP_STOP}),
    (ROUGH, {"env_kwargs": ROUGH_CURRICULUM}),
    (GRASP, {"sim2real": "ur5_grasp_real", "obs_history": {"groups": ["object_pos", "object_vel"], "length": 3}}),
], ids=["go1-sim2real", "go1-sim2real-overlap", "g1", "ur5", "ur5grasp-stop", "go1rough-curriculum",
        "ur5grasp-history"])
def test_resume_in_a_new_process_equals_the_straight_run(tmp_path, task, over):
    full = train(tiny_cfg(task, tmp_path / "full", **over))
    middle = tmp_path / "full" / "checkpoint_2.pt"
    assert full.iterations == 4 and middle.exists()
    saved = torch.load(middle, weights_only=True)
    assert saved["env_state"] is not None, "the env state must be saved"
    assert saved["episodes"]["finished"] > 0, "the finished episodes must be saved"
    assert (saved["stop"] is not None) == ("stop" in over)
    env = {**os.environ, "UNILAB_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "trainers.cli", "train", "--resume", str(middle),
                           "--out", str(tmp_path / "resumed")], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "re-seeded" not in done.stderr
    assert_same_run_state(full.checkpoint, tmp_path / "resumed" / "checkpoint.pt")
    assert {"/env_state", "/collector", "/episodes"} <= {"/" + k.split("/")[1] for k in run_state(full.checkpoint)}
    straight_log = tmp_path / "full" / "progress.csv"
    assert_logs_the_same_from(tmp_path / "resumed" / "progress.csv", straight_log, first_iteration=3)
    if task == ROUGH:  # the curriculum moved after the checkpoint (the resumed run moved it alike)
        levels = read_csv(straight_log)["env/terrain_level"]
        assert levels[3] != levels[1], levels


def test_a_checkpoint_of_another_task_is_refused(tmp_path):
    go1 = train(tiny_cfg(GO1, tmp_path / "go1", total_steps=64))
    with pytest.raises(CheckpointError, match=r"was trained on task 'UniLab/Go1Joystick-v0', this run is "
                                              r"'UniLab/UR5Reach-v0': resume with --task UniLab/Go1Joystick-v0"):
        train(tiny_cfg(UR5, tmp_path / "ur5", total_steps=64), resume=go1.checkpoint)


def test_a_checkpoint_of_another_wrapper_stack_is_refused(tmp_path):
    bare = train(tiny_cfg(GO1, tmp_path / "bare", total_steps=64))
    with pytest.raises(CheckpointError, match="its env state does not fit this run's env"):
        train(tiny_cfg(GO1, tmp_path / "wrapped", total_steps=128, sim2real="go1_real"), resume=bare.checkpoint)


#: every UR5Reach episode ends within reach (a 10 m threshold), so success is 100% from the first finished
#: episodes; the rule holds from iteration 3 (16 episodes) and fires at iteration 4 (patience 2)
STOP_AT_4 = {"env_kwargs": {"success_threshold": 10.0}, "total_steps": 8 * 8 * 6,
             "stop": {"success_rate": 0.9, "min_episodes": 16, "patience": 2},
             "log": {"save_interval": 1, "keep_every": 1}}


def test_a_run_resumed_just_before_its_stop_rule_fires_stops_where_the_straight_run_stops(tmp_path):
    full = train(tiny_cfg(UR5, tmp_path / "full", **STOP_AT_4))
    assert full.iterations == 4 and full.stop_reason and "for 2 iteration(s)" in full.stop_reason
    before = tmp_path / "full" / "checkpoint_3.pt"
    saved = torch.load(before, weights_only=True)
    # the streak has begun, and iteration 4 alone finishes fewer episodes than min_episodes
    assert saved["stop"]["streak"] == 1 and saved["episodes"]["finished"] >= 16
    resumed = train(tiny_cfg(UR5, tmp_path / "resumed", **STOP_AT_4), resume=before)
    assert (resumed.iterations, resumed.stop_reason) == (full.iterations, full.stop_reason)
    assert_same_run_state(full.checkpoint, resumed.checkpoint)
    assert_logs_the_same_from(tmp_path / "resumed" / "progress.csv", tmp_path / "full" / "progress.csv", 4)


def test_a_checkpoint_without_episodes_or_streak_still_resumes_as_before(tmp_path):
    """Checkpoints written before the episode windows and the streak were saved: the windows start
    empty and the streak at 0, so the rule waits for min_episodes new episodes and patience again."""
    full = train(tiny_cfg(UR5, tmp_path / "full", **STOP_AT_4))
    ckpt = load_checkpoint(tmp_path / "full" / "checkpoint_3.pt", CKPT_FORMAT, CKPT_VERSION)
    old = {k: v for k, v in ckpt.items() if k not in ("episodes", "stop", "format", "version")}
    old_path = save_checkpoint(old, tmp_path / "old.pt", CKPT_FORMAT, CKPT_VERSION)
    resumed = train(tiny_cfg(UR5, tmp_path / "resumed", **STOP_AT_4), resume=old_path)
    assert full.iterations == 4 and resumed.iterations > 4
    log = read_csv(tmp_path / "resumed" / "progress.csv")
    assert log["episode/finished"][0] < 16  # counted from the resume on
