"""Deterministic evaluation of an SB3 run (``unilab train --algo sb3-*``), with an
optional video of env 0: the SB3 counterpart of ``trainers.ppo.evaluate.evaluate``,
measured by the same frame (:func:`trainers.common.evaluation.run_episodes`: each env
contributes ``ceil(episodes / num_envs)`` whole episodes, each env's first possibly partial
episode left out, the same metrics), so the numbers of the two trainers are comparable.

    from trainers.sb3.evaluate import evaluate_sb3
    print(evaluate_sb3("runs/ur5_sb3", episodes=20, video="runs/ur5_sb3/eval.mp4").summary())
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml
from stable_baselines3 import PPO, SAC, TD3
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import VecNormalize

from trainers.common.envs import AS_TRAINED, Sim2RealSpec, resolve_sim2real
from trainers.common.evaluation import ActionFn, EvalResult, run_episodes, video_fps
from trainers.common.runs import sb3_model
from trainers.common.video import VideoRecorder
from trainers.sb3.callbacks import find_adapter, load_model
from trainers.sb3.env import make_sb3_env

__all__ = ["evaluate_sb3", "is_sb3_run", "sb3_action_fn"]

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
                 max_video_frames: int = 1000, env_kwargs: dict | None = None, skip_first: bool = True,
                 sim2real: Sim2RealSpec = AS_TRAINED, progress: bool = True) -> EvalResult:
    """Run the deterministic policy of ``run`` (run directory or model zip) for at least
    ``episodes`` episodes on the training env stack (task config, Sim2Real profile, frozen
    VecNormalize observation statistics); optionally film env 0.

    The episodes, metrics and video are those of ``trainers.ppo.evaluate.evaluate`` (one
    frame, :func:`trainers.common.evaluation.run_episodes`, run on the Gymnasium env under
    the SB3 adapter): each env contributes ``ceil(episodes / num_envs)`` whole episodes,
    returns use the raw (unnormalized) reward. ``env_kwargs``: task keywords on top of the
    run's. ``skip_first``: leave out each env's first episode, which may be partial when the
    env spreads episode start times at reset. ``video``: film one whole episode of env 0 (a
    progress bar on stderr while filming, unless ``progress=False``). ``sim2real``: the run's
    profile (``AS_TRAINED``), ``None`` for the bare env, or another profile."""
    path = _model_path(run)
    cfg = yaml.safe_load((path.parent / "config.yaml").read_text())
    algo, task = cfg["algo"], task or cfg["task"]
    num_envs = num_envs or max(1, min(int(cfg.get("num_envs", episodes)), episodes))
    kwargs = {**(cfg.get("env") or {}), **(env_kwargs or {})}
    if video is not None:
        kwargs["render_mode"] = "rgb_array"
    env = make_sb3_env(task, num_envs, sim2real=resolve_sim2real(sim2real, cfg.get("sim2real")), **kwargs)
    try:
        stats = path.with_name(path.stem + "_vecnormalize.pkl")
        if stats.exists():
            env = VecNormalize.load(str(stats), env)
            env.training, env.norm_reward = False, False
        model = load_model(_CLASSES[algo], path, env, device=device)  # also runs saved with +/-inf obs bounds
        venv = find_adapter(env).venv  # the Gymnasium VectorEnv the frame steps
        recorder = VideoRecorder(video, video_fps(venv), max_video_frames, progress) if video is not None else None
        act = sb3_action_fn(model, env if isinstance(env, VecNormalize) else None)
        return run_episodes(venv, act, episodes, seed, recorder, skip_first)
    finally:
        env.close()


def sb3_action_fn(model: BaseAlgorithm, normalize: VecNormalize | None = None) -> ActionFn:
    """``obs -> actions`` of ``model``'s deterministic policy on raw observations: ``normalize``'s
    frozen observation statistics applied first (its ``normalize_obs``), then
    ``model.predict(..., deterministic=True)``."""
    def act(obs: np.ndarray) -> np.ndarray:
        if normalize is not None:
            obs = normalize.normalize_obs(obs)
        return model.predict(obs, deterministic=True)[0]
    return act
