"""``unilab train --algo sb3-ppo|sb3-sac|sb3-td3 --task ...``: SB3 on a UniLab task.

``trainers/cli.py`` parses the command line and calls ``train_sb3(args)``. Output
layout under ``args.out``::

    config.yaml                       resolved config (defaults <- --config <- overrides)
    events.out.tfevents.*             TensorBoard (rollout/*, train/*, reward/<term>)
    progress.csv                      the same scalars as CSV
    checkpoints/step_<n>.zip          periodic checkpoints, written atomically
    checkpoints/step_<n>_vecnormalize.pkl
    model.zip, model_vecnormalize.pkl the final model and its VecNormalize statistics
    learning_curve.csv / .png         mean episode return against env steps

Reload for evaluation::

    env = VecNormalize.load("out/model_vecnormalize.pkl", make_sb3_env(task, n))
    env.training, env.norm_reward = False, False
    model = PPO.load("out/model.zip", env=env)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml
from stable_baselines3 import PPO, SAC, TD3
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import CallbackList
from stable_baselines3.common.logger import configure
from stable_baselines3.common.vec_env import VecEnv

from trainers.sb3.callbacks import CheckpointCallback, LearningCurveCallback, RewardTermsCallback, save_model
from trainers.sb3.config import ALGOS, SB3TrainConfig, load_config
from trainers.sb3.env import make_sb3_env
from trainers.sb3.noise import BatchedNormalActionNoise

__all__ = ["build_env", "build_model", "train_sb3"]

_ALGO_CLASSES: dict[str, type[BaseAlgorithm]] = {"sb3-ppo": PPO, "sb3-sac": SAC, "sb3-td3": TD3}


def sim2real_wrapper(profile: str):
    """A vector-wrapper factory for ``wrappers.Sim2Real(env, profile=profile)``."""
    try:
        from wrappers import Sim2Real
    except ImportError as exc:
        raise RuntimeError(
            f"sim2real={profile!r} needs wrappers.Sim2Real, which this install does not provide ({exc})"
        ) from exc
    return lambda env: Sim2Real(env, profile=profile)


def build_env(task: str, num_envs: int, cfg: SB3TrainConfig, seed: int | None) -> VecEnv:
    wrappers = [sim2real_wrapper(cfg.sim2real)] if cfg.sim2real else []
    normalize = {"norm_obs": cfg.normalize_obs, "norm_reward": cfg.normalize_reward, "clip_obs": cfg.clip_obs,
                 "gamma": cfg.algo_kwargs.get("gamma", 0.99)}
    use_norm = cfg.normalize_obs or cfg.normalize_reward
    return make_sb3_env(task, num_envs, wrappers, seed=seed, normalize=normalize if use_norm else False, **cfg.env)


def build_model(algo: str, env: VecEnv, cfg: SB3TrainConfig, *, seed: int | None, device: str,
                tensorboard_log: str | None = None) -> BaseAlgorithm:
    if algo not in _ALGO_CLASSES:
        raise ValueError(f"unknown SB3 algo {algo!r}; choose one of {ALGOS}")
    kwargs: dict[str, Any] = dict(cfg.algo_kwargs)
    if algo != "sb3-ppo" and cfg.action_noise:
        kwargs["action_noise"] = BatchedNormalActionNoise(env.num_envs, env.action_space.shape[0],
                                                          sigma=cfg.action_noise, seed=seed)
    return _ALGO_CLASSES[algo](cfg.policy, env, seed=seed, device=device, verbose=0,
                               tensorboard_log=tensorboard_log, **kwargs)


def train_sb3(args: argparse.Namespace) -> Path:
    """Train an SB3 agent on ``args.task``; returns the final model path.

    Reads ``args.algo, task, num_envs, total_steps, device, seed, out`` and, when
    present, ``config`` (YAML path) and ``overrides`` (list of ``key=value``).
    """
    algo = args.algo
    if algo not in _ALGO_CLASSES:
        raise ValueError(f"unknown SB3 algo {algo!r}; choose one of {ALGOS}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cfg = load_config(algo, args.num_envs, getattr(args, "config", None), getattr(args, "overrides", None))
    seed = getattr(args, "seed", None)
    run_info = {"algo": algo, "task": args.task, "num_envs": args.num_envs, "total_steps": args.total_steps,
                "seed": seed, "device": getattr(args, "device", "auto"), **cfg.to_dict()}
    (out / "config.yaml").write_text(yaml.safe_dump(json.loads(json.dumps(run_info, default=str)), sort_keys=False))

    env = build_env(args.task, args.num_envs, cfg, seed)
    try:
        model = build_model(algo, env, cfg, seed=seed, device=getattr(args, "device", None) or "auto")
        model.set_logger(configure(str(out), ["stdout", "csv", "tensorboard"]))
        curve = LearningCurveCallback()
        every = cfg.checkpoint_every or max(args.total_steps // 10, args.num_envs)
        callbacks = CallbackList([RewardTermsCallback(), curve, CheckpointCallback(out, every)])
        model.learn(total_timesteps=int(args.total_steps), callback=callbacks, log_interval=cfg.log_interval)
        path = save_model(model, out, "model")
        curve.write(out, title=f"{algo} on {args.task}")
    finally:
        env.close()
    return path


def main(argv: list[str] | None = None) -> None:
    """Standalone entry point (``python -m trainers.sb3.cli``), same flags as ``unilab train``."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--algo", choices=ALGOS, default="sb3-ppo")
    p.add_argument("--task", required=True)
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--total-steps", type=int, default=1_000_000)
    p.add_argument("--device", default="auto")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/sb3")
    p.add_argument("--config", default=None)
    p.add_argument("overrides", nargs="*", help="key=value config overrides")
    train_sb3(p.parse_args(argv))


if __name__ == "__main__":
    main()
