"""Does the bundled PPO reach its targets on this machine (CPU only)? Prints one table.

Targets, with the task YAML defaults of ``trainers/configs``:

- ``UniLab/UR5Reach-v0``: >= 95% success (deterministic evaluation), wall clock <= 3 min;
- ``UniLab/UR5Grasp-v0``: >= 94% success (deterministic evaluation) in <= 1.3M steps (<= 30 min);
- ``UniLab/Go1Joystick-v0``: walking: forward-velocity tracking reward >= 70% of its
  maximum (per step, deterministic evaluation) and falls < 5% of episodes, <= 10 min;
- ``UniLab/G1Joystick-v0``: walking: tracking >= 60% of its maximum, falls < 5%, and
  forward commands 0.3 / 0.6 / 1.0 m/s measured within 0.15 m/s, <= 2 h and <= 40M steps.

Training stops as soon as the target is met, or at the wall-clock budget. Reach stops by
its task YAML's ``stop:`` rule (rolling training success >= 97%), as ``unilab train``
does. The joystick tasks stop by the deterministic evaluation itself, so the stop and the
final evaluation cannot disagree: once the training statistics pass a gate (forward
tracking >= 80% / 70% of its maximum and falls below 1% / 10% of the rolling window of
finished episodes, go1 / g1), every ``probe_every`` iterations the current policy is saved
and judged by the same evaluation as the final one (same episodes, seed and speed
commands); training stops when that probe meets the target. (The stochastic training
policy falls more often than the deterministic one: a G1 run whose deterministic policy
fell in 0 of 64 episodes still fell in 6-8% of its training episodes, so a rule on training
falls alone never fired.) Probes count in the wall clock; the final policy is then
evaluated deterministically. Wall clock counts training only (evaluation is reported apart).

    python benchmarks/train_targets.py                 # reach and go1
    python benchmarks/train_targets.py --task reach    # one
    python benchmarks/train_targets.py --task g1       # the humanoid (hours on 2 cores)
    python benchmarks/train_targets.py --out runs/targets --budget-scale 2
    python benchmarks/train_targets.py --task g1 --out runs/targets_real sim2real=g1_real

With ``sim2real=``, training and the evaluation of tracking and falls run in the wrapped
env (the checkpoint records the profile); the speed commands run on the bare task.

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


#: joystick targets: eval tracking share and falls (and speeds: |measured - command|); the gate
#: on the training statistics (tracking share, falls of the rolling window) after which every
#: ``probe_every`` iterations the deterministic evaluation decides whether to stop
TARGETS = {
    "reach": {"task": "UniLab/UR5Reach-v0", "budget_s": 180, "success": 0.95},
    "grasp": {"task": "UniLab/UR5Grasp-v0", "budget_s": 1800, "max_steps": 1_300_000, "success": 0.94},
    "go1": {"task": "UniLab/Go1Joystick-v0", "budget_s": 600, "tracking": 0.7,
            "gate_tracking": 0.8, "gate_falls": 0.01, "probe_every": 10},
    "g1": {"task": "UniLab/G1Joystick-v0", "budget_s": 7200, "max_steps": 40_000_000, "tracking": 0.6,
           "speeds": (0.3, 0.6, 1.0), "speed_tolerance": 0.15,
           "gate_tracking": 0.7, "gate_falls": 0.10, "probe_every": 50},
}


def judge(checkpoint, spec: dict, eval_episodes: int) -> dict:
    """The deterministic evaluation of ``checkpoint`` against ``spec``'s target: the row's
    eval fields and ``eval_met`` (the target's numbers, not its wall clock)."""
    ev = evaluate(checkpoint, episodes=eval_episodes, num_envs=min(eval_episodes, 64), video=None, progress=False)
    row = {"eval_return": round(ev.mean_return, 3), "eval_episodes": ev.episodes, "eval_fall_rate": round(ev.fall_rate, 4)}
    if "success" in spec:
        row["eval_success"] = ev.success_rate
        row["eval_met"] = bool(ev.success_rate is not None and ev.success_rate >= spec["success"])
        return row
    share = ev.tracking_share or 0.0
    row["eval_tracking_frac"] = round(share, 3)
    row["eval_met"] = bool(share >= spec["tracking"] and ev.fall_rate < 0.05)
    if "speeds" in spec:
        from trainers.ppo.joystick_eval import measure_commands

        measured = measure_commands(checkpoint, list(spec["speeds"]))
        row["speeds"] = " ".join(f"{m.command:.1f}->{m.speed:.2f}" for m in measured)
        row["eval_met"] = row["eval_met"] and all(abs(m.speed - m.command) <= spec["speed_tolerance"] for m in measured)
    return row


class Stopper:
    """``callback(runner, stats) -> bool`` of :func:`~trainers.ppo.train`: stop at the wall-clock
    budget, or (joystick targets) when a probe of the deterministic evaluation meets the target.

    ``probe(runner) -> bool`` judges the current policy; it runs only after the training
    statistics pass the gate (tracking share >= ``gate_tracking`` and falls < ``gate_falls``
    of a rolling window that has seen at least two episodes per env), and then at most once
    every ``probe_every`` iterations. ``probes`` counts the probes that ran.
    """

    def __init__(self, budget_s: float, t0: float, track_max: float | None = None, gate_tracking: float = 0.0,
                 gate_falls: float = 1.0, probe_every: int = 1, probe=None, clock=time.perf_counter):
        self.budget_s, self.t0, self.clock = budget_s, t0, clock
        self.track_max, self.gate_tracking, self.gate_falls = track_max, gate_tracking, gate_falls
        self.probe_every, self.probe = max(int(probe_every), 1), probe
        self.probes, self.stopped_by, self._last_probe = 0, None, None

    def gate(self, runner, s: dict) -> bool:
        if self.track_max is None or self.probe is None:
            return False
        if s.get("episode/finished", 0) < 2 * runner.cfg.num_envs:  # rolling window not yet meaningful
            return False
        return (s.get("reward/tracking_lin_vel", 0.0) >= self.gate_tracking * self.track_max
                and s.get("episode/terminated_frac", 1.0) < self.gate_falls)

    def __call__(self, runner, s: dict) -> bool:
        if self.clock() - self.t0 > self.budget_s:
            self.stopped_by = "budget"
            return True
        if not self.gate(runner, s):
            return False
        if self._last_probe is not None and runner.iteration - self._last_probe < self.probe_every:
            return False
        self._last_probe = runner.iteration
        self.probes += 1
        if self.probe(runner):
            self.stopped_by = "target"
            return True
        return False


def run(name: str, out: Path, budget_scale: float, seed: int, eval_episodes: int, overrides=()) -> dict:
    spec = TARGETS[name]
    budget = spec["budget_s"] * budget_scale
    cfg = load_config(spec["task"], out=str(out / name), seed=seed, device="cpu",
                      total_steps=spec.get("max_steps"), overrides=["log.tensorboard=false", *overrides])
    if "success" in spec and cfg.stop.success_rate is None:
        raise SystemExit(f"{spec['task']}: its config has no stop.success_rate; set one in trainers/configs")
    probe_path = out / name / "probe.pt"

    def probe(runner) -> bool:
        runner.save(probe_path, at_boundary=False)  # the learner, judged as the final policy will be
        return judge(probe_path, spec, eval_episodes)["eval_met"]

    joystick = "tracking" in spec
    track_max = tracking_max(cfg.task, cfg.env_kwargs) if joystick else None
    stopper = Stopper(budget, time.perf_counter(), track_max, spec.get("gate_tracking", 0.0), spec.get("gate_falls", 1.0),
                      spec.get("probe_every", 1), probe if joystick else None)
    try:
        res = train(cfg, callback=stopper)
    finally:
        probe_path.unlink(missing_ok=True)  # a copy of the learner mid-run; the run's checkpoint is what stays
    wall = time.perf_counter() - stopper.t0
    t1 = time.perf_counter()
    row = {"task": spec["task"], "steps": res.env_steps, "iterations": res.iterations, "train_wall_s": round(wall, 1),
           "budget_s": budget, "stopped_by": stopper.stopped_by or res.stop_reason, "probes": stopper.probes,
           **judge(res.checkpoint, spec, eval_episodes)}
    row["eval_s"] = round(time.perf_counter() - t1, 1)
    row["met"] = bool(row.pop("eval_met") and wall <= budget)
    return row


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", choices=list(TARGETS), action="append")
    p.add_argument("--out", default="runs/targets")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budget-scale", type=float, default=1.0, help="multiply the wall-clock budgets")
    p.add_argument("--eval-episodes", type=int, default=64)
    p.add_argument("overrides", nargs="*", metavar="key=value",
                   help="config overrides on top of the task YAML, as for unilab train (e.g. sim2real=g1_real)")
    args = p.parse_args(argv)
    rows = []
    for name in args.task or ["reach", "go1"]:
        rows.append(run(name, Path(args.out), args.budget_scale, args.seed, args.eval_episodes, args.overrides))
    cols = ["task", "steps", "train_wall_s", "budget_s", "stopped_by", "probes", "eval_success", "eval_tracking_frac",
            "eval_fall_rate", "eval_return", "speeds", "met"]
    print()
    print(" | ".join(f"{c:>18}" for c in cols))
    for r in rows:
        print(" | ".join(f"{str(r.get(c, '-')):>18}" for c in cols))
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "targets.json").write_text(json.dumps(rows, indent=2))
    return rows


if __name__ == "__main__":
    main()
