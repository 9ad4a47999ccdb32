"""Does the bundled PPO reach its targets on this machine (CPU only)? Prints one table.

Targets, with the task YAML defaults of ``trainers/configs``:

- ``UniLab/UR5Reach-v0``: >= 95% success (deterministic evaluation), wall clock <= 3 min;
- ``UniLab/UR5Grasp-v0``: >= 94% success (deterministic evaluation) in <= 1.3M steps (<= 30 min);
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

HalfCheetah against SB3's PPO: ``benchmarks/cheetah_vs_sb3.py``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import unilab_envs  # noqa: F401  (thread policies first, registers the tasks)

from trainers.ppo import load_config, train
from trainers.ppo.evaluate import evaluate


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
    "reach": {"task": "UniLab/UR5Reach-v0", "budget_s": 180, "success": 0.95},
    "grasp": {"task": "UniLab/UR5Grasp-v0", "budget_s": 1800, "max_steps": 1_300_000, "success": 0.94},
    "go1": {"task": "UniLab/Go1Joystick-v0", "budget_s": 600, "tracking": 0.7, "stop_tracking": 0.8},
    "g1": {"task": "UniLab/G1Joystick-v0", "budget_s": 7200, "max_steps": 40_000_000, "tracking": 0.6,
           "stop_tracking": 0.7, "speeds": (0.3, 0.6, 1.0), "speed_tolerance": 0.15},
}


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
    if "success" in spec and cfg.stop.success_rate is None:
        raise SystemExit(f"{spec['task']}: its config has no stop.success_rate; set one in trainers/configs")
    res = train(cfg, callback=_stopper(budget, t0, track_max, spec.get("stop_tracking")))
    wall = time.perf_counter() - t0
    t1 = time.perf_counter()
    ev = evaluate(res.checkpoint, episodes=eval_episodes, num_envs=min(eval_episodes, 64), video=None)
    eval_s = time.perf_counter() - t1
    row = {"task": spec["task"], "steps": res.env_steps, "iterations": res.iterations, "train_wall_s": round(wall, 1),
           "budget_s": budget, "eval_s": round(eval_s, 1), "eval_return": round(ev.mean_return, 3),
           "eval_episodes": ev.episodes, "eval_fall_rate": round(ev.fall_rate, 4)}
    if "success" in spec:
        row["eval_success"] = ev.success_rate
        row["met"] = bool(ev.success_rate is not None and ev.success_rate >= spec["success"] and wall <= budget)
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
    args = p.parse_args(argv)
    rows = []
    for name in args.task or ["reach", "go1"]:
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
