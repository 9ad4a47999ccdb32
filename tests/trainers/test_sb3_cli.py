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
    assert res.episodes == 6 and res.video is None and res.mean_length <= 40  # 3 whole episodes from each env


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


TINY_PPO = ["algo_kwargs.n_steps=16", "algo_kwargs.batch_size=64", "algo_kwargs.n_epochs=1",
            "algo_kwargs.policy_kwargs={net_arch: [16]}"]


def test_progress_bar_replaces_sb3_tables(tmp_path, capsys):
    """A bar (steps, fps, recent return) on stderr, no SB3 table on stdout; ``verbose=1`` gives the tables back."""
    train_sb3(_args(tmp_path / "bar", "sb3-ppo", total_steps=256, overrides=TINY_PPO, no_progress=False))
    out, err = capsys.readouterr()
    assert "|    " not in out and "rollout/" not in out, out
    last = err.replace("\r", "\n").strip().splitlines()[-1]
    assert POINT_REACH_ID in last and "256/256" in last and "ret=" in last and "fps=" in last, last

    train_sb3(_args(tmp_path / "lines", "sb3-sac", total_steps=96, no_progress=True,
                    overrides=["algo_kwargs.learning_starts=32", "algo_kwargs.batch_size=16",
                               "algo_kwargs.buffer_size=1000", "log_every=32"]))
    out, err = capsys.readouterr()
    lines = [line for line in out.splitlines() if line.startswith(f"[{POINT_REACH_ID}] steps ")]
    assert len(lines) >= 3 and lines[-1].startswith(f"[{POINT_REACH_ID}] steps 96/96 (100%) ret="), out
    assert "|    " not in out and "%|" not in err

    train_sb3(_args(tmp_path / "tables", "sb3-ppo", total_steps=128, overrides=[*TINY_PPO, "verbose=1"],
                    no_progress=False))
    out, err = capsys.readouterr()
    assert "| time/" in out and "total_timesteps" in out and "ret=" not in err, (out, err)


def test_verbose_is_checked():
    with pytest.raises(ValueError, match="verbose must be 0"):
        load_config("sb3-ppo", 8, overrides=["verbose=3"])


def test_ctrl_c_stops_cleanly_saves_and_says_how_to_continue(tmp_path, capsys):
    """SIGINT to a running ``unilab train --algo sb3-ppo``: no traceback, the model and its
    statistics saved atomically, one line naming them and the command that continues the run,
    exit status 130; ``--resume <run dir>`` then continues from that model, not the older checkpoint."""
    import os
    import shlex
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "run"
    script = ("import sys; from tests.trainers.standins import register_point_reach; register_point_reach(); "
              "from trainers.cli import main; sys.exit(main(sys.argv[1:]))")
    argv = ["train", "--algo", "sb3-ppo", "--task", POINT_REACH_ID, "--num-envs", "8", "--total-steps", "1e8",
            "--device", "cpu", "--out", str(out), *TINY_PPO, "checkpoint_every=512"]
    env = {**os.environ, "PYTHONPATH": str(root), "UNILAB_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-c", script, *argv], cwd=root, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 180
        while not (out / "checkpoint.zip").exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()
        time.sleep(1.0)  # into the run, past the first checkpoint
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, (stdout, stderr)
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    stopped = [line for line in stderr.replace("\r", "\n").splitlines() if line.startswith("[unilab] stopped at")]
    assert len(stopped) == 1, stderr
    assert f"saved {out / 'model.zip'} and its VecNormalize statistics (model_vecnormalize.pkl)" in stopped[0]
    assert (out / "model.zip").exists() and (out / "model_vecnormalize.pkl").exists()
    assert not [p.name for p in out.iterdir() if "tmp" in p.name]
    assert (out / "model.zip").stat().st_mtime_ns > (out / "checkpoint.zip").stat().st_mtime_ns
    steps = PPO.load(out / "model.zip", device="cpu").num_timesteps
    assert int(stopped[0].split()[3]) == steps > 0

    command = shlex.split(stopped[0].split("Continue with: ", 1)[1])
    assert command[:2] == ["unilab", "train"] and command[command.index("--resume") + 1] == str(out)
    assert command[command.index("--out") + 1] == str(out) and set(TINY_PPO) <= set(command)
    args = _args(tmp_path, "sb3-ppo", out=str(out), resume=str(out), total_steps=steps + 128, overrides=TINY_PPO)
    path = train_sb3(args)
    assert f"[unilab] resumed {out / 'model.zip'} at {steps} env steps" in capsys.readouterr().out
    assert args.interrupted is False and PPO.load(path, device="cpu").num_timesteps >= steps + 128


def test_a_model_saved_with_unbounded_observation_bounds_still_loads(tmp_path):
    """Runs saved while UniLab's observation spaces were +/-inf load against today's finite ones
    (``--resume``, ``unilab eval``); a space of another shape is still refused."""
    import numpy as np
    from gymnasium import spaces

    from trainers.sb3.callbacks import load_model
    from unilab_envs.core.vector_env import observation_box

    env = make_sb3_env(POINT_REACH_ID, 2)
    assert np.isposinf(env.observation_space.high).all()  # the stand-in still declares +/-inf
    PPO("MlpPolicy", env, n_steps=16, batch_size=32, device="cpu").save(tmp_path / "old.zip")
    env.observation_space = observation_box(4)
    with pytest.raises(ValueError, match="Observation spaces do not match"):
        PPO.load(tmp_path / "old.zip", env=env, device="cpu")
    model = load_model(PPO, tmp_path / "old.zip", env, device="cpu")
    assert model.observation_space == env.observation_space
    env.observation_space = spaces.Box(-1.0, 1.0, (5,), np.float32)
    with pytest.raises(ValueError, match="Observation spaces do not match"):
        load_model(PPO, tmp_path / "old.zip", env, device="cpu")
    env.close()
