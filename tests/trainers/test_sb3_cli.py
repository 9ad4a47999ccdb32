"""``train_sb3(args)`` writes model, VecNormalize stats, TensorBoard, CSV, curve PNG."""

from __future__ import annotations

import argparse

import pytest
import yaml
from stable_baselines3 import PPO, SAC
from stable_baselines3.common.vec_env import VecNormalize
from tests.trainers.standins import POINT_REACH_ID

from trainers.common.logging import read_csv
from trainers.sb3.cli import train_sb3
from trainers.sb3.config import load_config
from trainers.sb3.evaluate import evaluate_sb3, is_sb3_run
from trainers.sb3.env import make_sb3_env


def _args(tmp_path, algo, **kw):
    base = dict(algo=algo, task=POINT_REACH_ID, num_envs=8, total_steps=640, device="cpu", seed=0,
                out=str(tmp_path / algo), config=None, overrides=[], no_progress=True)
    base.update(kw)
    return argparse.Namespace(**base)


def test_train_ppo_writes_run_directory(tmp_path):
    cfg = tmp_path / "ppo.yaml"
    cfg.write_text(yaml.safe_dump({"algo_kwargs": {"n_steps": 16, "batch_size": 64, "n_epochs": 1,
                                                   "policy_kwargs": {"net_arch": [32, 32]}}}))
    path = train_sb3(_args(tmp_path, "sb3-ppo", config=str(cfg), overrides=["algo_kwargs.learning_rate=1e-3",
                                                                               "checkpoint_every=256"]))
    out = path.parent
    assert path.name == "model.zip" and path.exists()
    assert (out / "model_vecnormalize.pkl").exists()
    assert (out / "checkpoint.zip").exists() and (out / "checkpoint_vecnormalize.pkl").exists()
    assert list((out / "tb").glob("events.out.tfevents.*"))
    assert (out / "learning_curve.png").stat().st_size > 1000
    assert not [p for p in out.iterdir() if "tmp" in p.name]
    saved = yaml.safe_load((out / "config.yaml").read_text())
    assert saved["algo_kwargs"]["learning_rate"] == 1e-3 and saved["algo_kwargs"]["n_steps"] == 16
    cols = read_csv(out / "progress.csv")
    for key in ("step", "episode/return", "reward/distance", "reward/action", "train/value_loss"):
        assert key in cols, sorted(cols)
    assert cols["step"][-1] >= 640
    assert any(v == v for v in cols["train/value_loss"])  # not all NaN: declared up front, filled later

    assert is_sb3_run(out) and not is_sb3_run(tmp_path)
    res = evaluate_sb3(out, episodes=5, num_envs=2)
    assert res.episodes == 5 and res.video is None and res.mean_length <= 40


def test_resume_continues_to_total_steps(tmp_path):
    small = ["algo_kwargs.n_steps=16", "algo_kwargs.batch_size=64", "algo_kwargs.n_epochs=1"]
    first = train_sb3(_args(tmp_path, "sb3-ppo", total_steps=256, overrides=small))
    path = train_sb3(_args(tmp_path, "sb3-ppo", total_steps=512, overrides=small, resume=str(first.parent)))
    assert PPO.load(path, device="cpu").num_timesteps >= 512
    steps = read_csv(path.parent / "progress.csv")["step"]
    assert steps == sorted(steps) and steps[-1] >= 512


def test_train_sac_and_reload(tmp_path):
    overrides = ["algo_kwargs.learning_starts=64", "algo_kwargs.batch_size=32", "algo_kwargs.gradient_steps=1",
                 "algo_kwargs.buffer_size=5000", "algo_kwargs.policy_kwargs={net_arch: [32, 32]}", "log_every=128"]
    path = train_sb3(_args(tmp_path, "sb3-sac", total_steps=400, overrides=overrides))
    steps = read_csv(path.parent / "progress.csv")["step"]
    assert steps == [128.0, 256.0, 384.0]  # every log_every env steps, not every few episodes
    env = VecNormalize.load(str(path.parent / "model_vecnormalize.pkl"), make_sb3_env(POINT_REACH_ID, 8))
    env.training, env.norm_reward = False, False
    model = SAC.load(path, env=env, device="cpu")
    assert model.predict(env.reset(), deterministic=True)[0].shape == (8, 2)


def test_config_validation():
    assert load_config("sb3-td3", 64).action_noise == 0.1
    with pytest.raises(ValueError, match="unknown SB3 config key 'learning_rate'. Did you mean 'algo_kwargs.learning_rate'"):
        load_config("sb3-ppo", 8, overrides=["learning_rate=1e-3"])
    with pytest.raises(ValueError, match="not key=value"):
        load_config("sb3-ppo", 8, overrides=["normalize_obs"])
    with pytest.raises(ValueError, match="clip_obs"):
        load_config("sb3-ppo", 8, overrides=["clip_obs=-1"])
    with pytest.raises(ValueError, match="unknown SB3 algo"):
        load_config("sb3-a2c", 8)
    cfg = load_config("sb3-ppo", 1024)
    assert cfg.algo_kwargs["n_steps"] * 1024 >= 16384
    with pytest.raises(dataclasses_frozen_error()):
        cfg.sim2real = "x"


def dataclasses_frozen_error():
    import dataclasses

    return dataclasses.FrozenInstanceError
