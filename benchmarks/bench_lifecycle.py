"""PPO and SAC iteration time and env step time before and after a change to the run plumbing (issue 75: one run lifecycle).

Two checkouts of UniLab, the one to test (this one) and a reference (``--before``, e.g. a
``git worktree add /tmp/before <commit>``), train the same short runs in alternating subprocesses
(before, after, before, after, ...), each on one thread, so a busy machine slows both alike:

- PPO: ``UniLab/UR5Reach-v0``, 64 envs x 32 steps, 12 iterations; the median seconds per
  iteration over iterations 3-12 (timed by the runner's ``callback``);
- SAC: ``UniLab/UR5Reach-v0``, 32 envs, 6,400 env steps (200 batch steps, updates from step 40)
  after a warm-up run in the same process; seconds per batch step;
- env (``--learners env``): ``UniLab/Go1Joystick-v0``, 1024 envs on one thread, a fixed random action batch; the
  median seconds per vector step over 5 blocks of 20 steps after 20 warm-up steps (the env's budget: after /
  before <= 1 / 0.97 = 1.031 in seconds, >= 0.97 in steps/s).

    git worktree add /tmp/before a0f2440
    python benchmarks/bench_lifecycle.py --before /tmp/before --rounds 5

Prints one table: the median of each side over the rounds and after / before (the budget: <= 1.03).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r'''
import json, sys, tempfile, time
import unilab_envs  # noqa: F401
import torch
torch.set_num_threads(1)
which, out = sys.argv[1], tempfile.mkdtemp()
if which == "ppo":
    from trainers.ppo.config import load_config
    from trainers.ppo.runner import train
    cfg = load_config("UniLab/UR5Reach-v0", overrides=["num_envs=64", "algo.num_steps=32", "total_steps=24576",
                      "log.progress=false", "log.tensorboard=false", "log.plot=false", "stop.success_rate=null",
                      f"out={out}"], torch_threads=1)
    marks = []
    train(cfg, callback=lambda runner, stats: marks.append(time.perf_counter()) and False)
    gaps = sorted(b - a for a, b in zip(marks[2:], marks[3:]))
    print(json.dumps(gaps[len(gaps) // 2]))
elif which == "env":
    import gymnasium as gym
    import numpy as np
    env = gym.make_vec("UniLab/Go1Joystick-v0", num_envs=1024, num_threads=1)
    env.reset(seed=0)
    actions = np.random.default_rng(0).uniform(-1, 1, env.action_space.shape).astype(np.float32)
    for _ in range(20):
        env.step(actions)
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(20):
            env.step(actions)
        times.append((time.perf_counter() - t0) / 20)
    print(json.dumps(sorted(times)[len(times) // 2]))
else:
    from trainers.offpolicy.config import load_offpolicy_config
    from trainers.offpolicy.runner import train
    def run(steps, folder):
        cfg = load_offpolicy_config("sac", "UniLab/UR5Reach-v0", overrides=[
            "num_envs=32", f"total_steps={steps}", "algo.learning_starts=1280", "algo.batch_size=256",
            "algo.buffer_size=20000", "log.progress=false", "log.tensorboard=false", "log.plot=false",
            "log.every_steps=640", "stop.success_rate=null", "stop.eval=null", f"out={folder}", "torch_threads=1"])
        t0 = time.perf_counter()
        train(cfg)
        return (time.perf_counter() - t0) / (steps // 32)
    run(1600, tempfile.mkdtemp())
    print(json.dumps(run(6400, out)))
'''


def measure(checkout: Path, which: str) -> float:
    """Seconds per iteration (PPO) or batch step (SAC) in a fresh process on ``checkout``'s code."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "UNILAB_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory() as cwd:
        done = subprocess.run([sys.executable, "-c", CHILD, which], cwd=cwd, env=env, capture_output=True,
                              text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{which} on {checkout} failed:\n{done.stderr[-3000:]}")
    return float(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", required=True, type=Path, help="the reference checkout (a git worktree)")
    p.add_argument("--rounds", type=int, default=5, help="before/after pairs per learner (default 5)")
    p.add_argument("--learners", default="ppo,sac,env", help="comma-separated: ppo, sac, env (default all three)")
    args = p.parse_args()
    rows = []
    for which in args.learners.split(","):
        before, after = [], []
        for _ in range(args.rounds):
            before.append(measure(args.before, which))
            after.append(measure(ROOT, which))
        b, a = statistics.median(before), statistics.median(after)
        rows.append((which, b, a, a / b, before, after))
    print(f"{'learner':8} {'before s/it':>12} {'after s/it':>12} {'after/before':>13}")
    for which, b, a, ratio, before, after in rows:
        print(f"{which:8} {b:12.5f} {a:12.5f} {ratio:13.3f}   rounds before {['%.5f' % x for x in before]} "
              f"after {['%.5f' % x for x in after]}")


if __name__ == "__main__":
    main()
