"""Does the bundled PPO reach its targets on this machine (CPU only)? Prints one table.

Targets, with the task YAML defaults of ``trainers/configs``:

- ``UniLab/UR5Reach-v0``: >= 95% success (deterministic evaluation), wall clock <= 3 min;
- ``UniLab/Go1Joystick-v0``: walking: forward-velocity tracking reward >= 70% of its
  maximum (per step, deterministic evaluation) and falls < 5% of episodes, <= 10 min;
- ``UniLab/G1Joystick-v0``: walking: tracking >= 60% of its maximum, falls < 5%, and
  forward commands 0.3 / 0.6 / 1.0 m/s measured within 0.15 m/s, <= 2 h and <= 40M steps.

Training stops as soon as the training statistics clear the target with a margin
(reach: the task YAML's ``stop:`` rule, rolling success >= 97%, as ``unilab train`` does;
go1 / g1: tracking >= 80% / 70% and falls < 1% of the last finished episodes: the
deterministic policy falls more often than the training window shows), or at the
wall-clock budget;
the final policy is then evaluated deterministically. Wall clock
counts training only (evaluation is reported apart).

    python benchmarks/train_targets.py                 # reach and go1
    python benchmarks/train_targets.py --task reach    # one
    python benchmarks/train_targets.py --task g1       # the humanoid (hours on 2 cores)
    python benchmarks/train_targets.py --out runs/targets --budget-scale 2
    python benchmarks/train_targets.py --task cheetah --cheetah-seeds 0 1 2   # ours vs SB3 PPO, 1M steps

``cheetah`` (optional): HalfCheetah-v5, our PPO vs SB3 PPO side by side with the same
hyper-parameters (trainers/configs/halfcheetah.yaml; SB3 with VecNormalize on
observations, as ours normalizes them), equal step budgets, deterministic evaluation,
one CPU thread each: :func:`one_cpu_thread` sets torch's intra-op threads and Numba's to
1 (and ``UNILAB_NUM_THREADS`` / ``OMP_NUM_THREADS`` to 1 for any env pool or child
process), and our run is also configured with ``torch_threads=1``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import unilab_envs  # noqa: F401  (thread policies first, registers the tasks)

from trainers.ppo import load_config, train
from trainers.ppo.evaluate import evaluate
from unilab_envs.threads import configure_threads


def tracking_max(task: str, env_kwargs: dict) -> float:
    """The per-step maximum of the task's ``tracking_lin_vel`` term (its weight, scale * dt)."""
    import gymnasium as gym

    env = gym.make_vec(task, num_envs=1, **env_kwargs)
    try:
        return float(env.unwrapped.task.reward_weights[env.unwrapped.reward_names.index("tracking_lin_vel")])
    finally:
        env.close()


#: joystick targets: eval tracking share and falls; early stop on the training statistics
#: (tracking share and falls of the rolling window) with a margin; speeds: |measured - command|
TARGETS = {
    "reach": {"task": "UniLab/UR5Reach-v0", "budget_s": 180},
    "go1": {"task": "UniLab/Go1Joystick-v0", "budget_s": 600, "tracking": 0.7, "stop_tracking": 0.8},
    "g1": {"task": "UniLab/G1Joystick-v0", "budget_s": 7200, "max_steps": 40_000_000, "tracking": 0.6,
           "stop_tracking": 0.7, "speeds": (0.3, 0.6, 1.0), "speed_tolerance": 0.15},
    "cheetah": {"task": "HalfCheetah-v5", "budget_s": None},
}


def one_cpu_thread() -> None:
    """One CPU thread from here on: torch and Numba in this process, and the thread-count
    variables that env pools (``UNILAB_NUM_THREADS``) and child processes (OpenMP) read."""
    os.environ["UNILAB_NUM_THREADS"] = "1"
    os.environ["OMP_NUM_THREADS"] = "1"
    configure_threads(1)


def run_cheetah(out: Path, steps: int, seed: int, eval_episodes: int) -> list[dict]:
    """Our PPO and SB3's PPO on HalfCheetah-v5 with the same settings and budget, one CPU thread each."""
    import numpy as np
    import torch
    from stable_baselines3 import PPO as SB3PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.vec_env import VecNormalize

    one_cpu_thread()
    cfg = load_config("HalfCheetah-v5", out=str(out / "cheetah_ours"), seed=seed, device="cpu", total_steps=steps,
                      torch_threads=1, overrides=["log.tensorboard=false", "log.progress=false"])
    t0 = time.perf_counter()
    res = train(cfg)
    ours_wall = time.perf_counter() - t0
    ev = evaluate(res.checkpoint, episodes=eval_episodes, num_envs=min(eval_episodes, 8))

    a, p = cfg.algo, cfg.policy
    env = VecNormalize(make_vec_env("HalfCheetah-v5", n_envs=cfg.num_envs, seed=seed), norm_reward=False)
    act = {"tanh": torch.nn.Tanh, "elu": torch.nn.ELU, "relu": torch.nn.ReLU, "silu": torch.nn.SiLU}[p.activation]
    model = SB3PPO("MlpPolicy", env, n_steps=a.num_steps, batch_size=cfg.steps_per_iteration // a.num_minibatches,
                   n_epochs=a.num_epochs, learning_rate=a.learning_rate, gamma=a.gamma, gae_lambda=a.lam,
                   clip_range=a.clip, clip_range_vf=a.clip if a.clip_value_loss else None, ent_coef=a.entropy_coef,
                   vf_coef=a.value_coef, max_grad_norm=a.max_grad_norm, seed=seed, device="cpu",
                   policy_kwargs=dict(net_arch=dict(pi=list(p.actor_hidden), vf=list(p.critic_hidden)),
                                      activation_fn=act, log_std_init=float(np.log(p.init_std))))
    torch.set_num_threads(1)  # as ours ran
    t0 = time.perf_counter()
    model.learn(cfg.num_iterations * cfg.steps_per_iteration)
    sb3_wall = time.perf_counter() - t0
    env.training = False
    sb3_ret, _ = evaluate_policy(model, env, n_eval_episodes=eval_episodes)
    env.close()
    return [{"task": "HalfCheetah-v5 (ours)", "steps": res.env_steps, "train_wall_s": round(ours_wall, 1),
             "eval_return": round(ev.mean_return, 1), "met": "-"},
            {"task": "HalfCheetah-v5 (SB3)", "steps": cfg.num_iterations * cfg.steps_per_iteration,
             "train_wall_s": round(sb3_wall, 1), "eval_return": round(float(sb3_ret), 1), "met": "-"}]


def seed_summary(pairs: list[list[dict]]) -> list[dict]:
    """Mean and median evaluation return (and mean wall clock) of ours and SB3 over seeds."""
    import statistics

    out = []
    for k, who in enumerate(("ours", "SB3")):
        returns = [pair[k]["eval_return"] for pair in pairs]
        walls = [pair[k]["train_wall_s"] for pair in pairs]
        out.append({"task": f"HalfCheetah-v5 ({who}, {len(pairs)} seeds)", "steps": pairs[0][k]["steps"],
                    "train_wall_s": round(statistics.mean(walls), 1),
                    "eval_return": f"mean {statistics.mean(returns):.0f} median {statistics.median(returns):.0f}",
                    "met": "-"})
    return out


def _stopper(budget_s: float, t0: float, track_max: float | None, stop_tracking: float | None):
    """Stop at the wall-clock budget or, for the joystick tasks, when the walking margin says
    the task is learned (reach stops by its config's ``stop:`` rule, which ``train`` applies)."""
    def stop(runner, s) -> bool:
        if time.perf_counter() - t0 > budget_s:
            return True
        if track_max is None:
            return False
        if s.get("episode/finished", 0) < 2 * runner.cfg.num_envs:  # rolling window not yet meaningful
            return False
        return (s.get("reward/tracking_lin_vel", 0.0) >= stop_tracking * track_max
                and s.get("episode/terminated_frac", 1.0) < 0.01)
    return stop


def run(name: str, out: Path, budget_scale: float, seed: int, eval_episodes: int) -> dict:
    spec = TARGETS[name]
    budget = spec["budget_s"] * budget_scale
    cfg = load_config(spec["task"], out=str(out / name), seed=seed, device="cpu",
                      total_steps=spec.get("max_steps"), overrides=["log.tensorboard=false"])
    joystick = "tracking" in spec
    track_max = tracking_max(cfg.task, cfg.env_kwargs) if joystick else None
    t0 = time.perf_counter()
    if name == "reach" and cfg.stop.success_rate is None:
        raise SystemExit(f"{spec['task']}: its config has no stop.success_rate; set one in trainers/configs")
    res = train(cfg, callback=_stopper(budget, t0, track_max, spec.get("stop_tracking")))
    wall = time.perf_counter() - t0
    t1 = time.perf_counter()
    ev = evaluate(res.checkpoint, episodes=eval_episodes, num_envs=min(eval_episodes, 64), video=None)
    eval_s = time.perf_counter() - t1
    row = {"task": spec["task"], "steps": res.env_steps, "iterations": res.iterations, "train_wall_s": round(wall, 1),
           "budget_s": budget, "eval_s": round(eval_s, 1), "eval_return": round(ev.mean_return, 3),
           "eval_episodes": ev.episodes, "eval_fall_rate": round(ev.fall_rate, 4)}
    if name == "reach":
        row["eval_success"] = ev.success_rate
        row["met"] = bool(ev.success_rate is not None and ev.success_rate >= 0.95 and wall <= budget)
    else:
        share = ev.tracking_share or 0.0
        row["eval_tracking_frac"] = round(share, 3)
        row["met"] = bool(share >= spec["tracking"] and ev.fall_rate < 0.05 and wall <= budget)
        if "speeds" in spec:
            from trainers.ppo.joystick_eval import measure_commands

            measured = measure_commands(res.checkpoint, list(spec["speeds"]))
            row["speeds"] = " ".join(f"{m.command:.1f}->{m.speed:.2f}" for m in measured)
            row["met"] = row["met"] and all(abs(m.speed - m.command) <= spec["speed_tolerance"] for m in measured)
    return row


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", choices=list(TARGETS), action="append")
    p.add_argument("--out", default="runs/targets")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budget-scale", type=float, default=1.0, help="multiply the wall-clock budgets")
    p.add_argument("--eval-episodes", type=int, default=64)
    p.add_argument("--cheetah-steps", type=int, default=1_000_000)
    p.add_argument("--cheetah-seeds", type=int, nargs="+", default=[0],
                   help="HalfCheetah seeds (returns at 1M steps vary a lot from seed to seed)")
    args = p.parse_args(argv)
    rows = []
    for name in args.task or ["reach", "go1"]:
        if name == "cheetah":
            pairs = [run_cheetah(Path(args.out) / f"seed{seed}", args.cheetah_steps, seed, min(args.eval_episodes, 8))
                     for seed in args.cheetah_seeds]
            rows += [row for pair in pairs for row in pair]
            if len(pairs) > 1:
                rows += seed_summary(pairs)
        else:
            rows.append(run(name, Path(args.out), args.budget_scale, args.seed, args.eval_episodes))
    cols = ["task", "steps", "train_wall_s", "budget_s", "eval_success", "eval_tracking_frac", "eval_fall_rate",
            "eval_return", "speeds", "met"]
    print()
    print(" | ".join(f"{c:>18}" for c in cols))
    for r in rows:
        print(" | ".join(f"{str(r.get(c, '-')):>18}" for c in cols))
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "targets.json").write_text(json.dumps(rows, indent=2))
    return rows


if __name__ == "__main__":
    main()
