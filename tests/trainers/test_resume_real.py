"""Exact resume on the real tasks: a run stopped at its checkpoint and resumed in a new
process (``unilab train --resume``) ends bit-identical to the run that went straight
through: parameters, optimizer, normalizers, the env's state and its next observations."""

import os
import subprocess
import sys

import pytest
import torch

import unilab_envs  # noqa: F401  registers UniLab/*
from tests.trainers.test_ppo_checkpoint import _flat_state
from trainers.common.checkpoint import CheckpointError
from trainers.ppo import train
from trainers.ppo.config import TrainConfig, deep_merge, from_dict

GO1, G1, UR5 = "UniLab/Go1Joystick-v0", "UniLab/G1Joystick-v0", "UniLab/UR5Reach-v0"


def tiny_cfg(task, out, **over) -> TrainConfig:
    base = {"task": task, "num_envs": 8, "total_steps": 8 * 8 * 4, "seed": 5, "out": str(out),
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
], ids=["go1-sim2real", "go1-sim2real-overlap", "g1", "ur5"])
def test_resume_in_a_new_process_equals_the_straight_run(tmp_path, task, over):
    full = train(tiny_cfg(task, tmp_path / "full", **over))
    middle = tmp_path / "full" / "checkpoint_2.pt"
    assert full.iterations == 4 and middle.exists()
    assert torch.load(middle, weights_only=True)["env_state"] is not None, "the env state must be saved"
    env = {**os.environ, "UNILAB_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "trainers.cli", "train", "--resume", str(middle),
                           "--out", str(tmp_path / "resumed")], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "re-seeded" not in done.stderr
    a, b = _flat_state(full.checkpoint), _flat_state(tmp_path / "resumed" / "checkpoint.pt")
    assert a.keys() == b.keys()
    assert any(k.startswith("/env_state/") for k in a) and any(k.startswith("/collector/") for k in a)
    for key in a:
        if isinstance(a[key], torch.Tensor):
            assert torch.equal(a[key], b[key]), key
        else:
            assert a[key] == b[key], key


def test_a_checkpoint_of_another_task_is_refused(tmp_path):
    go1 = train(tiny_cfg(GO1, tmp_path / "go1", total_steps=64))
    with pytest.raises(CheckpointError, match=r"was trained on task 'UniLab/Go1Joystick-v0', this run is "
                                              r"'UniLab/UR5Reach-v0': resume with --task UniLab/Go1Joystick-v0"):
        train(tiny_cfg(UR5, tmp_path / "ur5", total_steps=64), resume=go1.checkpoint)


def test_a_checkpoint_of_another_wrapper_stack_is_refused(tmp_path):
    bare = train(tiny_cfg(GO1, tmp_path / "bare", total_steps=64))
    with pytest.raises(CheckpointError, match="its env state does not fit this run's env"):
        train(tiny_cfg(GO1, tmp_path / "wrapped", total_steps=128, sim2real="go1_real"), resume=bare.checkpoint)
