"""``unilab eval`` / ``unilab export`` on SB3 runs (and the clipped ONNX output of both trainers);
not-a-run paths and SB3 config mistakes exit 2."""

from __future__ import annotations

import argparse
import pickle

import numpy as np
import onnxruntime as ort
import pytest
import torch
from stable_baselines3 import PPO, SAC, TD3

from tests.trainers.conftest import POINT_REACH_ID
from trainers import cli
from trainers.common.checkpoint import load_checkpoint, save_checkpoint
from trainers.ppo.evaluate import load_policy
from trainers.ppo.runner import CKPT_FORMAT, CKPT_VERSION
from trainers.sb3.cli import train_sb3
from trainers.sb3.config import ConfigError
from tests.trainers.standins import register_point_reach

PENDULUM = "Pendulum-v1"  # actions in [-2, 2]: rescaling and clipping are visible
TINY = {"sb3-ppo": ["algo_kwargs.n_steps=16", "algo_kwargs.batch_size=32", "algo_kwargs.n_epochs=1"],
        "sb3-sac": ["algo_kwargs.learning_starts=32", "algo_kwargs.batch_size=32", "algo_kwargs.buffer_size=1000"],
        "sb3-td3": ["algo_kwargs.learning_starts=32", "algo_kwargs.batch_size=32", "algo_kwargs.buffer_size=1000"]}
CLASSES = {"sb3-ppo": PPO, "sb3-sac": SAC, "sb3-td3": TD3}


def _train(tmp_path, algo, task=PENDULUM, *extra):
    out = tmp_path / algo
    argv = ["train", "--algo", algo, "--task", task, "--num-envs", "2", "--total-steps", "64", "--seed", "0",
            "--device", "cpu", "--out", str(out), "--no-progress", *TINY[algo],
            "algo_kwargs.policy_kwargs={net_arch: [16, 16]}", *extra]
    assert cli.main(argv) == 0
    return out


def test_eval_of_an_sb3_run(tmp_path, capsys):
    out = _train(tmp_path, "sb3-ppo", register_point_reach())
    capsys.readouterr()
    assert cli.main(["eval", str(out), "--episodes", "3", "--num-envs", "2"]) == 0
    text = capsys.readouterr().out
    assert "episodes 4" in text and "return" in text and "video" not in text  # 2 whole episodes from each env
    assert not list(out.glob("eval.*"))  # no video unless asked for


@pytest.mark.parametrize("algo", ["sb3-ppo", "sb3-sac", "sb3-td3"])
def test_onnx_equals_the_deterministic_sb3_action(tmp_path, capsys, algo):
    out = _train(tmp_path, algo)
    if algo == "sb3-ppo":  # make the Gaussian mean overshoot the bounds, so the clip is exercised
        model = PPO.load(out / "model.zip", device="cpu")
        with torch.no_grad():
            model.policy.action_net.weight.mul_(300.0)
            model.policy.action_net.bias.fill_(0.5)
        model.save(out / "model.zip")
    capsys.readouterr()
    assert cli.main(["export", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"onnx: {out / 'policy.onnx'}" in text
    assert "input  obs float32 [batch, 3]" in text and "output actions float32 [batch, 1]" in text
    assert "[-2, 2]" in text and "deterministic" in text

    model = CLASSES[algo].load(out / "model.zip", device="cpu")
    with open(out / "model_vecnormalize.pkl", "rb") as f:
        norm = pickle.load(f)
    assert norm.norm_obs and np.abs(norm.obs_rms.mean).max() > 0  # the statistics are not the identity
    rng = np.random.default_rng(0)
    obs = (rng.normal(size=(256, 3)) * 4).astype(np.float32)  # some beyond the VecNormalize clip
    expected = model.predict(norm.normalize_obs(obs), deterministic=True)[0]
    sess = ort.InferenceSession(str(out / "policy.onnx"), providers=["CPUExecutionProvider"])
    (got,) = sess.run(["actions"], {"obs": obs})
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    assert got.min() >= -2.0 and got.max() <= 2.0
    if algo == "sb3-ppo":
        assert np.isclose(np.abs(got), 2.0).mean() > 0.2  # many clipped to the bounds


def test_bundled_ppo_onnx_is_clipped_to_the_action_space(tmp_path, capsys):
    out = tmp_path / "ppo"
    assert cli.main(["train", "--task", POINT_REACH_ID, "--num-envs", "4", "--no-progress", "algo.num_steps=16",
                     "policy.actor_hidden=[8]", "policy.critic_hidden=[8]", "log.tensorboard=false",
                     "log.plot=false", "--total-steps", "64", "--out", str(out)]) == 0
    ckpt = load_checkpoint(out / "checkpoint.pt", CKPT_FORMAT, CKPT_VERSION)
    last = [k for k in ckpt["algo"]["policy"] if k.startswith("actor.") and k.endswith(".weight")][-1]
    ckpt["algo"]["policy"][last] = ckpt["algo"]["policy"][last] * 100.0  # means far beyond Box(-1, 1)
    save_checkpoint({k: v for k, v in ckpt.items() if k not in ("format", "version")}, out / "checkpoint.pt",
                    CKPT_FORMAT, CKPT_VERSION)
    capsys.readouterr()
    assert cli.main(["export", str(out)]) == 0
    text = capsys.readouterr().out
    assert "input  obs float32 [batch, 4]" in text and "output actions float32 [batch, 2]" in text
    assert "mean, clipped to the action space [-1, 1]" in text
    policy, _, _ = load_policy(out / "checkpoint.pt")
    obs = (np.random.default_rng(1).normal(size=(128, 4)) * 3).astype(np.float32)
    with torch.no_grad():
        mean = policy(torch.from_numpy(obs)).numpy()
    assert np.abs(mean).max() > 1.5
    (got,) = ort.InferenceSession(str(out / "policy.onnx"), providers=["CPUExecutionProvider"]).run(None, {"obs": obs})
    np.testing.assert_allclose(got, np.clip(mean, -1, 1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("command", ["eval", "export"])
def test_missing_and_non_run_folders_exit_2(tmp_path, capsys, command):
    assert cli.main([command, str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "does not exist" in err and "unilab train --out" in err
    (tmp_path / "notes.txt").write_text("not a run")
    assert cli.main([command, str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "is not a run" in err and "checkpoint.pt" in err and "model.zip" in err
    (tmp_path / "model.zip").write_bytes(b"PK")
    assert cli.main([command, str(tmp_path / "model.zip")]) == 2
    assert "no config.yaml" in capsys.readouterr().err


@pytest.mark.parametrize("override, message", [
    ("algo_kwargs.learning_rat=1e-3", "Did you mean 'algo_kwargs.learning_rate'"),
    ("learning_rate=1e-3", "Did you mean 'algo_kwargs.learning_rate'"),
    ("algo_kwargs.seed=3", "algo_kwargs.seed is set by --seed"),
    ("algo_kwargs.n_steps=0", "PPO rejects this config"),
    ("normalize_obs=maybe", "normalize_obs must be true or false"),
    ("policy=MlpPolicyy", "Did you mean 'MlpPolicy'"),
    ("sim2real=ur5_real", "'ur5_real' is for UniLab/UR5Reach-v0"),
])
def test_sb3_config_errors_exit_2_before_the_run_folder(tmp_path, capsys, override, message):
    out = tmp_path / "run"
    argv = ["train", "--algo", "sb3-ppo", "--task", register_point_reach(), "--num-envs", "2", "--total-steps", "64",
            "--out", str(out), "--no-progress", override]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
    assert not out.exists()


def test_sb3_task_typo_and_bad_counts_create_no_folder(tmp_path, capsys):
    out = tmp_path / "run"
    assert cli.main(["train", "--algo", "sb3-sac", "--task", "UniLab/UR5Reech-v0", "--out", str(out)]) == 2
    assert "UniLab/UR5Reach-v0" in capsys.readouterr().err  # the closest id
    assert not out.exists()
    args = dict(algo="sb3-ppo", task=register_point_reach(), num_envs=2, total_steps=64, device="cpu", seed=0, out=str(out),
                config=None, overrides=[], no_progress=True)
    for bad, message in ((dict(num_envs=-3), "--num-envs must be >= 1"), (dict(total_steps=0), "--total-steps"),
                         (dict(task="UniLabTest/PointReech-v0"), "did you mean 'UniLabTest/PointReach-v0'"),
                         (dict(resume=str(tmp_path / "none")), "--resume: no SB3 checkpoint")):
        with pytest.raises(ConfigError, match=message):
            train_sb3(argparse.Namespace(**{**args, **bad}))
        assert not out.exists()
