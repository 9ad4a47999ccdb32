"""Our PPO and SB3's PPO on HalfCheetah-v5 with the same settings, seeds and step budget.

Both trainers read one of our PPO configs; SB3 gets the same hyper-parameters
(``VecNormalize`` for observation and reward normalization, ``policy_kwargs`` for the
networks, log-std and init, Adam's epsilon). Each run uses one CPU thread (torch, Numba,
``UNILAB_NUM_THREADS`` / ``OMP_NUM_THREADS``), is timed from the first to the last
training step in wall-clock and in CPU time of the process (``time.process_time``: what a
shared, loaded machine does not inflate), and is then evaluated deterministically with
its frozen normalization::

    # SB3's defaults for both (docs/halfcheetah_vs_sb3.md, "The same hyper-parameters")
    python benchmarks/cheetah_vs_sb3.py --config trainers/configs/halfcheetah.yaml --seeds 0 1 2 --eval-episodes 8
    # rl-baselines3-zoo's tuned setting (docs/halfcheetah_vs_sb3.md, "rl-baselines3-zoo's tuned setting")
    python benchmarks/cheetah_vs_sb3.py --config trainers/configs/halfcheetah_tuned.yaml --seeds 0 1 2
    # side by side on a 2-core machine: one process per trainer, at the same time
    python benchmarks/cheetah_vs_sb3.py --config ... --trainer ours --out runs/cheetah &
    python benchmarks/cheetah_vs_sb3.py --config ... --trainer sb3 --out runs/cheetah

Each finished run writes ``OUT/<trainer>_seed<k>.json``; every call ends by printing the
table of all runs found in ``OUT`` (``--summary`` prints it without training).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import time
from pathlib import Path

import unilab_envs  # noqa: F401  (thread policies first)

from trainers.ppo import load_config, train
from trainers.ppo.config import TrainConfig
from trainers.ppo.evaluate import evaluate
from unilab_envs.threads import configure_threads

TASK = "HalfCheetah-v5"


def one_cpu_thread() -> None:
    """One CPU thread from here on: torch and Numba in this process, and the thread-count
    variables that env pools (``UNILAB_NUM_THREADS``) and child processes (OpenMP) read."""
    os.environ["UNILAB_NUM_THREADS"] = "1"
    os.environ["OMP_NUM_THREADS"] = "1"
    configure_threads(1)


def cheetah_config(config_file: str | None, out: Path, seed: int, steps: int | None,
                   overrides: list[str] = ()) -> TrainConfig:
    return load_config(TASK, config_file=config_file, out=str(out), seed=seed, device="cpu", total_steps=steps,
                       torch_threads=1, overrides=["log.tensorboard=false", "log.progress=false", *overrides])


def run_ours(cfg: TrainConfig, eval_episodes: int) -> dict:
    t0, c0 = time.perf_counter(), time.process_time()
    res = train(cfg)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    ev = evaluate(res.checkpoint, episodes=eval_episodes, num_envs=min(eval_episodes, 10))
    return {"trainer": "ours", "seed": cfg.seed, "steps": res.env_steps, "train_wall_s": round(wall, 1),
            "train_cpu_s": round(cpu, 1), "eval_return": round(ev.mean_return, 1)}


def sb3_settings(cfg: TrainConfig) -> tuple[dict, dict]:
    """``(VecNormalize kwargs, PPO kwargs)`` that express ``cfg`` in SB3."""
    import torch

    a, p = cfg.algo, cfg.policy
    if a.schedule == "adaptive":
        raise SystemExit("SB3 has no KL-adaptive learning rate: compare with algo.schedule fixed or linear")
    if a.normalize_advantages and a.advantage_scope != "minibatch":
        print("[cheetah] note: SB3 normalizes advantages per minibatch; this config normalizes per rollout")
    lr = a.learning_rate if a.schedule == "fixed" else (lambda remaining: a.learning_rate * remaining)
    act = {"tanh": torch.nn.Tanh, "elu": torch.nn.ELU, "relu": torch.nn.ReLU, "silu": torch.nn.SiLU}[p.activation]
    normalize = {"norm_obs": p.obs_normalization, "norm_reward": a.reward_normalization, "clip_obs": p.obs_clip,
                 "clip_reward": a.reward_clip, "gamma": a.gamma}
    ppo = {"n_steps": a.num_steps, "batch_size": cfg.steps_per_iteration // a.num_minibatches,
           "n_epochs": a.num_epochs, "learning_rate": lr, "gamma": a.gamma, "gae_lambda": a.lam,
           "clip_range": a.clip, "clip_range_vf": a.clip if a.clip_value_loss else None,
           "normalize_advantage": a.normalize_advantages, "ent_coef": a.entropy_coef, "vf_coef": a.value_coef,
           "max_grad_norm": a.max_grad_norm,
           "policy_kwargs": {"net_arch": {"pi": list(p.actor_hidden), "vf": list(p.critic_hidden)},
                             "activation_fn": act, "log_std_init": math.log(p.init_std),
                             "ortho_init": p.ortho_init, "optimizer_kwargs": {"eps": a.adam_eps}}}
    return normalize, ppo


def run_sb3(cfg: TrainConfig, eval_episodes: int) -> dict:
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.vec_env import VecNormalize

    normalize, kwargs = sb3_settings(cfg)
    env = VecNormalize(make_vec_env(TASK, n_envs=cfg.num_envs, seed=cfg.seed), **normalize)
    model = PPO("MlpPolicy", env, seed=cfg.seed, device="cpu", verbose=0, **kwargs)
    torch.set_num_threads(1)
    steps = cfg.num_iterations * cfg.steps_per_iteration
    t0, c0 = time.perf_counter(), time.process_time()
    model.learn(steps)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    env.training, env.norm_reward = False, False
    ret, _ = evaluate_policy(model, env, n_eval_episodes=eval_episodes, deterministic=True)
    env.close()
    return {"trainer": "SB3", "seed": cfg.seed, "steps": steps, "train_wall_s": round(wall, 1),
            "train_cpu_s": round(cpu, 1), "eval_return": round(float(ret), 1)}


def table(out: Path) -> str:
    """Markdown table of every ``<trainer>_seed<k>.json`` in ``out``: per-seed returns, mean, wall clock."""
    runs = [json.loads(f.read_text()) for f in sorted(out.glob("*_seed*.json"))]
    seeds = sorted({r["seed"] for r in runs})
    lines = ["| trainer | " + " | ".join(f"seed {s}" for s in seeds)
             + " | mean | train wall clock (mean) | train CPU time (mean) |",
             "|---" * (len(seeds) + 5) + "|"]
    for who in ("ours", "SB3"):
        mine = {r["seed"]: r for r in runs if r["trainer"] == who}
        if not mine:
            continue
        cells = [f"{mine[s]['eval_return']:.0f}" if s in mine else "-" for s in seeds]
        mean = statistics.mean(r["eval_return"] for r in mine.values())
        wall = statistics.mean(r["train_wall_s"] for r in mine.values())
        cpu = statistics.mean(r.get("train_cpu_s", float("nan")) for r in mine.values())
        lines.append(f"| {who} | " + " | ".join(cells) + f" | **{mean:.0f}** | {wall:.0f} s | {cpu:.0f} s |")
    return "\n".join(lines)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default="trainers/configs/halfcheetah_tuned.yaml")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--trainer", choices=("ours", "sb3", "both"), default="both")
    p.add_argument("--steps", type=int, default=None, help="env steps per run (default: the config's total_steps)")
    p.add_argument("--eval-episodes", type=int, default=10)
    p.add_argument("--out", default="runs/cheetah_vs_sb3")
    p.add_argument("--summary", action="store_true", help="only print the table of the runs already in --out")
    p.add_argument("overrides", nargs="*", help="key=value config overrides, for both trainers (num_envs=8 ...)")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not args.summary:
        one_cpu_thread()
        for seed in args.seeds:
            for who in (("ours", "sb3") if args.trainer == "both" else (args.trainer,)):
                cfg = cheetah_config(args.config, out / f"{who}_seed{seed}", seed, args.steps, args.overrides)
                row = run_ours(cfg, args.eval_episodes) if who == "ours" else run_sb3(cfg, args.eval_episodes)
                row["config"] = " ".join([args.config, *args.overrides])
                (out / f"{who}_seed{seed}.json").write_text(json.dumps(row, indent=2))
                print(f"[cheetah] {row}", flush=True)
    print(table(out))


if __name__ == "__main__":
    main()
