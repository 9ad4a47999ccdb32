"""Does the bundled PPO reach its targets on this machine (CPU only)? Prints one table.

Targets (issue 8), with the task YAML defaults of ``trainers/configs``:

- ``UniLab/UR5Reach-v0``: >= 95% success (deterministic evaluation), wall clock <= 3 min;
- ``UniLab/Go1Joystick-v0``: walking: forward-velocity tracking reward >= 70% of its
  maximum (per step, deterministic evaluation) and falls < 5% of episodes, <= 10 min.

Training stops as soon as the training statistics meet the target (rolling success /
tracking / fall rate), or at the wall-clock budget; the final policy is then evaluated
deterministically. Wall clock counts training only (evaluation is reported apart).

    python benchmarks/train_targets.py                 # both tasks
    python benchmarks/train_targets.py --task reach    # one
    python benchmarks/train_targets.py --out runs/targets --budget-scale 2
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import unilab_envs  # noqa: F401  (thread policies first, registers the tasks)

from trainers.ppo import load_config, train
from trainers.ppo.evaluate import evaluate


def go1_tracking_max() -> float:
    from unilab_envs.tasks.go1_joystick import Go1JoystickConfig

    c = Go1JoystickConfig()
    return c.reward_scales.tracking_lin_vel * c.control_dt


TARGETS = {
    "reach": {"task": "UniLab/UR5Reach-v0", "budget_s": 180},
    "go1": {"task": "UniLab/Go1Joystick-v0", "budget_s": 600},
}


def _stopper(name: str, budget_s: float, t0: float, track_max: float | None):
    def stop(runner, s) -> bool:
        if time.perf_counter() - t0 > budget_s:
            return True
        if s.get("episode/finished", 0) < 2 * runner.cfg.num_envs:  # rolling window not yet meaningful
            return False
        if name == "reach":
            return s.get("episode/success", 0.0) >= 0.97
        return (s.get("reward/tracking_lin_vel", 0.0) >= 0.75 * track_max
                and s.get("episode/terminated_frac", 1.0) < 0.03)
    return stop


def run(name: str, out: Path, budget_scale: float, seed: int, eval_episodes: int) -> dict:
    spec = TARGETS[name]
    budget = spec["budget_s"] * budget_scale
    cfg = load_config(spec["task"], out=str(out / name), seed=seed, device="cpu",
                      overrides=["log.tensorboard=false"])
    track_max = go1_tracking_max() if name == "go1" else None
    t0 = time.perf_counter()
    res = train(cfg, callback=_stopper(name, budget, t0, track_max))
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
        track = ev.reward_terms.get("tracking_lin_vel", 0.0)
        row["eval_tracking_frac"] = round(track / track_max, 3)
        row["met"] = bool(track >= 0.7 * track_max and ev.fall_rate < 0.05 and wall <= budget)
    return row


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", choices=list(TARGETS), action="append")
    p.add_argument("--out", default="runs/targets")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budget-scale", type=float, default=1.0, help="multiply the wall-clock budgets")
    p.add_argument("--eval-episodes", type=int, default=64)
    args = p.parse_args(argv)
    rows = [run(n, Path(args.out), args.budget_scale, args.seed, args.eval_episodes) for n in args.task or TARGETS]
    cols = ["task", "steps", "train_wall_s", "budget_s", "eval_success", "eval_tracking_frac", "eval_fall_rate",
            "eval_return", "met"]
    print()
    print(" | ".join(f"{c:>18}" for c in cols))
    for r in rows:
        print(" | ".join(f"{str(r.get(c, '-')):>18}" for c in cols))
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "targets.json").write_text(json.dumps(rows, indent=2))
    return rows


if __name__ == "__main__":
    main()
