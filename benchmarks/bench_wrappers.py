"""Cost of the full sim-to-real stack: Go1 + ``Sim2Real(profile="go1_real")`` vs Go1 bare.

Both envs live in one process with the same N, threads and substeps, and run in
rounds of ``--steps`` steps (times are summed over all rounds). Each round:

1. the bare env is given the wrapped env's physical states and randomized model
   fields (friction, masses, gains...);
2. step by step, the wrapped env steps (a tap under the stack records the
   actions it really executed), then the bare env steps with those actions:
   the same physics, under the same load on this shared machine, so the
   difference is what the wrappers cost (``extra``, budget <= 10%);
3. a second bare env, from the same start, steps with the policy's raw
   actions (``free``): this adds what the perturbations themselves cost the
   physics (noisy actions and random parameters make the contact solver work
   harder; pushes make robots fall), which no wrapper implementation removes.

``stack only`` is the time spent above the base env inside the wrapped step,
over the base env's time. ``extra cpu`` is ``extra`` in process CPU time (all
threads), steadier when other processes crowd the cores.

    python benchmarks/bench_wrappers.py [--num-envs 256 1024] [--threads 2] [--steps 20] [--rounds 5] [--without SECTION ...]
"""

from __future__ import annotations

import argparse
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


class _Tap(VectorWrapper):
    """Times the env below it and records the actions it receives."""

    elapsed = 0.0

    def __init__(self, env):
        super().__init__(env)
        self.actions: list[np.ndarray] = []

    def step(self, actions):
        self.actions.append(np.array(actions, copy=True))
        start = time.perf_counter()
        out = self.env.step(actions)
        self.elapsed += time.perf_counter() - start
        return out


def _timed(fn) -> tuple[float, float]:
    start, start_cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - start, time.process_time() - start_cpu


def bench(num_envs: int, threads: int, steps: int, rounds: int, without: tuple[str, ...] = ()) -> dict:
    make = lambda: gym.make_vec(TASK, num_envs=num_envs, num_threads=threads, copy=False)  # noqa: E731
    bare, free = make(), make()
    tap = _Tap(make())
    stack = wrappers.Sim2Real(tap, profile="go1_real", overrides={name: None for name in without})
    bare.reset(seed=0), free.reset(seed=0)
    stack.reset(seed=0)
    policy = np.random.default_rng(0).uniform(-0.3, 0.3, (num_envs, 12)).astype(np.float32)
    for _ in range(3):  # warm up: Numba, caches
        bare.step(policy), free.step(policy), stack.step(policy)
    totals = dict.fromkeys(("stack", "stack_cpu", "same", "same_cpu", "inner", "free"), 0.0)
    for _ in range(rounds):
        _sync(bare, stack), _sync(free, stack)
        tap.actions, tap.elapsed = [], 0.0
        for _ in range(steps):  # step by step, so all see the same load on the machine
            t, c = _timed(lambda: stack.step(policy))
            totals["stack"] += t
            totals["stack_cpu"] += c
            t, c = _timed(lambda: bare.step(tap.actions[-1]))  # the same executed actions, the same physics
            totals["same"] += t
            totals["same_cpu"] += c
            totals["free"] += _timed(lambda: free.step(policy))[0]  # the policy's raw actions
        totals["inner"] += tap.elapsed
    stack.close(), bare.close(), free.close()
    frames = num_envs * steps * rounds
    return {
        "sps_bare": frames / totals["same"],
        "sps_stack": frames / totals["stack"],
        "extra": totals["stack"] / totals["same"] - 1.0,
        "extra_cpu": totals["stack_cpu"] / totals["same_cpu"] - 1.0,
        "stack_only": (totals["stack"] - totals["inner"]) / totals["inner"],
        "free": totals["stack"] / totals["free"] - 1.0,
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
    results = [(n, bench(n, threads, args.steps, args.rounds, tuple(args.without))) for n in args.num_envs]
    label = f"Sim2Real('go1_real'{', without ' + ', '.join(args.without) if args.without else ''})"
    print(f"Go1 + {label} vs Go1 bare  ({threads} threads, {args.steps} steps x {args.rounds} rounds)")
    header = f"{'N':>6} | {'bare steps/s':>12} | {'stack steps/s':>13} | {'extra':>7} | {'extra cpu':>9} | {'stack only':>10} | {'free':>7} | budget <= {BUDGET:.0%}"
    print(header)
    print("-" * len(header))
    for n, r in results:
        ok = "ok" if r["extra"] <= BUDGET else "OVER"
        print(
            f"{n:>6} | {r['sps_bare']:>12,.0f} | {r['sps_stack']:>13,.0f} | {r['extra']:>+7.1%} | {r['extra_cpu']:>+9.1%} | "
            f"{r['stack_only']:>+10.1%} | {r['free']:>+7.1%} | {ok}"
        )
    print("extra: same physics (bare replays the executed actions); free: bare runs the raw actions (adds the perturbations' physics cost)")


if __name__ == "__main__":
    main()
