"""Deterministic evaluation of an SB3 run (``unilab train --algo sb3-*``), with an
optional video of env 0: the SB3 counterpart of ``trainers.ppo.evaluate.evaluate``,
returning the same ``EvalResult``.

    from trainers.sb3.evaluate import evaluate_sb3
    print(evaluate_sb3("runs/ur5_sb3", episodes=20, video="runs/ur5_sb3/eval.mp4").summary())
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml
from stable_baselines3 import PPO, SAC, TD3
from stable_baselines3.common.vec_env import VecNormalize

from trainers.common.envs import AS_TRAINED, Sim2RealSpec, resolve_sim2real
from trainers.common.runs import sb3_model
from trainers.common.video import VideoRecorder
from trainers.ppo.evaluate import EvalResult
from trainers.sb3.callbacks import find_adapter
from trainers.sb3.env import _is_unilab, make_sb3_env

__all__ = ["evaluate_sb3", "is_sb3_run"]

_CLASSES = {"sb3-ppo": PPO, "sb3-sac": SAC, "sb3-td3": TD3}


def _model_path(run: str | Path) -> Path:
    path = Path(run)
    if path.is_dir():
        path = next((path / n for n in ("model.zip", "checkpoint.zip") if (path / n).exists()), path / "model.zip")
    if not path.exists():
        raise FileNotFoundError(f"no SB3 model at {path}")
    return path


def is_sb3_run(run: str | Path) -> bool:
    """True for an SB3 run directory or model zip (what ``unilab eval`` should hand here)."""
    return sb3_model(Path(run)) is not None


def evaluate_sb3(run: str | Path, episodes: int = 10, num_envs: int | None = None, task: str | None = None,
                 video: str | Path | None = None, seed: int = 12345, device: str = "cpu",
                 max_video_frames: int = 1000, sim2real: Sim2RealSpec = AS_TRAINED,
                 progress: bool = True) -> EvalResult:
    """Run the deterministic policy of ``run`` (run directory or model zip) until
    ``episodes`` episodes finish, on the training env stack (task config, Sim2Real
    profile, frozen VecNormalize statistics). Returns use the raw (unnormalized)
    reward. Our tasks start all episodes at step 0 here (no spread starts), so no
    partial episode is counted. ``video``: film env 0's first episode (a progress bar
    on stderr while filming, unless ``progress=False``). ``sim2real``: the run's
    profile (``AS_TRAINED``), ``None`` for the bare env, or another profile."""
    path = _model_path(run)
    cfg = yaml.safe_load((path.parent / "config.yaml").read_text())
    algo, task = cfg["algo"], task or cfg["task"]
    num_envs = num_envs or max(1, min(int(cfg.get("num_envs", episodes)), episodes))
    env_kwargs = dict(cfg.get("env") or {})
    if _is_unilab(task):
        env_kwargs.setdefault("spread_episode_starts", False)
    if video is not None:
        env_kwargs["render_mode"] = "rgb_array"
    env = make_sb3_env(task, num_envs, seed=seed, sim2real=resolve_sim2real(sim2real, cfg.get("sim2real")),
                       **env_kwargs)
    stats = path.with_name(path.stem + "_vecnormalize.pkl")
    if stats.exists():
        env = VecNormalize.load(str(stats), env)
        env.training, env.norm_reward = False, False
    adapter = find_adapter(env)
    model = _CLASSES[algo].load(path, env=env, device=device)

    fps = int(env.metadata.get("render_fps") or 30)
    recorder = VideoRecorder(video, fps, max_video_frames, progress) if video is not None else None
    returns, lengths, truncs, successes = [], [], [], []
    filming = recorder is not None
    try:
        obs = env.reset()
        while len(returns) < episodes:
            if filming:
                recorder.add(adapter.render())
            obs, _, dones, infos = env.step(model.predict(obs, deterministic=True)[0])
            for i in np.flatnonzero(dones):
                info = infos[i]
                if len(returns) < episodes:
                    returns.append(info["episode"]["r"])
                    lengths.append(info["episode"]["l"])
                    truncs.append(info["TimeLimit.truncated"])
                    if "is_success" in info:
                        successes.append(bool(info["is_success"]))
                if i == 0:
                    filming = False
            filming = filming and not recorder.full
    except BaseException:
        if recorder is not None:
            recorder.close()
        raise
    finally:
        env.close()
    written = recorder.write() if recorder is not None else None
    return EvalResult(
        episodes=len(returns), mean_return=float(np.mean(returns)), std_return=float(np.std(returns)),
        mean_length=float(np.mean(lengths)), success_rate=float(np.mean(successes)) if successes else None,
        fall_rate=float(1.0 - np.mean(truncs)), video=written,
    )
