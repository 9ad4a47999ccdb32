"""Cost of the full sim-to-real stack: Go1 + ``Sim2Real(profile="go1_real")`` vs Go1 bare.

Both envs live in one process with the same N, threads and substeps, and run in
alternating rounds. Each round the bare env starts from a copy of the wrapped
env's physical states and of its randomized model fields (friction, masses,
gains...: contacts and parameters drive the physics cost, and the budget is
for the wrappers, not for the physics they choose); the median of the
per-round ratios is reported, as these machines are shared and noisy.

Three views of the overhead (budget <= 10%):

* ``wall``: wrapped step time / bare step time - 1, wall clock;
* ``cpu``: the same with the process's CPU time (all threads), which holds
  still when other processes crowd the cores (wall-clock ratios then swing by
  +-20% from round to round);
* ``stack only``: the wall time spent above the base env inside the wrapped
  step (a timer sits between the stack and the env), / the base env's time.

    python benchmarks/bench_wrappers.py [--num-envs 256 1024] [--threads 2] [--steps 20] [--rounds 5] [--without SECTION ...]
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorWrapper

import unilab_envs  # noqa: F401
import wrappers
from unilab_envs.threads import resolve_num_threads

TASK = "UniLab/Go1Joystick-v0"
BUDGET = 0.10
RANDOMIZED = ("geom_friction", "body_mass", "body_inertia", "body_ipos", "dof_armature", "dof_damping", "dof_frictionloss", "actuator_gainprm", "actuator_biasprm")


def _sync(bare, stack) -> None:
    """Give the bare env the wrapped env's states and randomized model fields."""
    src, dst = stack.unwrapped.batch, bare.unwrapped.batch
    dst.state[:] = src.state
    for name in RANDOMIZED:
        values = src.expanded(name)
        if values is not None:
            dst.expand(name)[:] = values
    dst.set_const()


class _Timer(VectorWrapper):
    """Accumulates the time spent in the env below it."""

    elapsed = 0.0

    def step(self, actions):
        start = time.perf_counter()
        out = self.env.step(actions)
        self.elapsed += time.perf_counter() - start
        return out


def bench(num_envs: int, threads: int, steps: int, rounds: int, without: tuple[str, ...] = ()) -> dict:
    make = lambda: gym.make_vec(TASK, num_envs=num_envs, num_threads=threads, copy=False)  # noqa: E731
    bare = make()
    timer = _Timer(make())
    stack = wrappers.Sim2Real(timer, profile="go1_real", overrides={name: None for name in without})
    bare.reset(seed=0)
    stack.reset(seed=0)
    actions = np.random.default_rng(0).uniform(-0.3, 0.3, (num_envs, 12)).astype(np.float32)
    for _ in range(3):  # warm up: Numba, caches
        bare.step(actions), stack.step(actions)
    ratios, cpu, shares, sps_bare, sps_stack = [], [], [], [], []

    def run(env):
        start, start_cpu = time.perf_counter(), time.process_time()
        for _ in range(steps):
            env.step(actions)
        return time.perf_counter() - start, time.process_time() - start_cpu

    for k in range(rounds):
        _sync(bare, stack)
        timer.elapsed = 0.0
        if k % 2:  # alternate who goes first
            (t_bare, c_bare), (t_stack, c_stack) = run(bare), run(stack)
        else:
            t_stack, c_stack = run(stack)
            _sync(bare, stack)
            t_bare, c_bare = run(bare)
        ratios.append(t_stack / t_bare - 1.0)
        cpu.append(c_stack / c_bare - 1.0)
        shares.append((t_stack - timer.elapsed) / timer.elapsed)
        sps_bare.append(num_envs * steps / t_bare)
        sps_stack.append(num_envs * steps / t_stack)
    stack.close(), bare.close()
    return {
        "bare": statistics.median(sps_bare),
        "stack": statistics.median(sps_stack),
        "extra": statistics.median(ratios),
        "cpu": statistics.median(cpu),
        "stack_only": statistics.median(shares),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", type=int, nargs="+", default=[256, 1024])
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--without", nargs="*", default=[], choices=list(wrappers.SECTIONS), help="profile sections to leave out")
    args = parser.parse_args()
    threads = resolve_num_threads(args.threads)
    rows = [(n, bench(n, threads, args.steps, args.rounds, tuple(args.without))) for n in args.num_envs]
    label = f"Sim2Real('go1_real'{', without ' + ', '.join(args.without) if args.without else ''})"
    print(f"Go1 + {label} vs Go1 bare  ({threads} threads, {args.steps} steps x {args.rounds} rounds, medians)")
    print(f"{'N':>6} | {'bare steps/s':>12} | {'stack steps/s':>13} | {'extra wall':>10} | {'extra cpu':>9} | {'stack only':>10} | budget <= {BUDGET:.0%}")
    print("-" * 92)
    for n, r in rows:
        ok = "ok" if min(r["cpu"], r["extra"]) <= BUDGET else "OVER"
        print(f"{n:>6} | {r['bare']:>12,.0f} | {r['stack']:>13,.0f} | {r['extra']:>+10.1%} | {r['cpu']:>+9.1%} | {r['stack_only']:>+10.1%} | {ok}")


if __name__ == "__main__":
    main()
