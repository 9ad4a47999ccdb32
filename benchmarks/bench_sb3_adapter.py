"""SB3 adapter throughput: our batched env bare vs through ``SB3VecEnv``, vs SB3's own
``DummyVecEnv`` / ``SubprocVecEnv`` over our single env, side by side in one process.

Columns (env steps per second, summed over envs):

- ``bare``: ``venv.step`` of the batched env (``copy=False``: the fastest baseline);
- ``adapter``: ``SB3VecEnv(venv).step`` on the *same* env instance (SB3 API: obs copy,
  float32 rewards, dones, info list with terminal observations). Bare and adapter
  steps alternate one by one (these machines are shared and noisy, so load changes
  hit both alike); ``cost`` is the median over rounds of adapter/bare time - 1
  (budget: <= 10% at N = 1024), and ``own`` the time spent in the adapter outside
  the env's own step/reset calls (measured around them), relative and in us/step;
- ``+VecNorm``: the adapter under SB3's ``VecNormalize`` (for reference: SB3's own
  wrapper, with its per-env Python loop; timed in its own block, not interleaved);
- ``Dummy``: SB3 ``DummyVecEnv`` over N single envs (``gym.make``);
- ``Subproc``: SB3 ``SubprocVecEnv`` (one process per env), capped at
  ``--subproc-max`` envs because thousands of processes do not fit this machine;
  the column header says the N it ran at.

Actions are a fixed random batch (x 0.3), so robots fall and the autoreset /
terminal-observation path is exercised.

    python benchmarks/bench_sb3_adapter.py [--num-envs 256 1024] [--task UniLab/Go1Joystick-v0]
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecNormalize

import unilab_envs  # noqa: F401
from trainers.sb3 import SB3VecEnv


def _time(fn, steps: int) -> float:
    start = time.perf_counter()
    for _ in range(steps):
        fn()
    return time.perf_counter() - start


def _actions(n: int, space: gym.spaces.Box) -> np.ndarray:
    return (np.random.default_rng(0).uniform(-1, 1, (n, *space.shape)) * 0.3).astype(np.float32)


class _Timed(gym.vector.VectorWrapper):
    """Accumulates the time spent inside the wrapped env's step/reset."""

    elapsed = 0.0

    def step(self, actions):
        t = time.perf_counter()
        out = self.env.step(actions)
        self.elapsed += time.perf_counter() - t
        return out

    def reset(self, **kwargs):
        t = time.perf_counter()
        out = self.env.reset(**kwargs)
        self.elapsed += time.perf_counter() - t
        return out


def bench_adapter(task: str, n: int, steps: int, rounds: int, threads: int | None) -> dict:
    kwargs = {"copy": False} if task.startswith("UniLab/") else {}
    if threads is not None and task.startswith("UniLab/"):
        kwargs["num_threads"] = threads
    venv = gym.make_vec(task, num_envs=n, **kwargs)
    timed = _Timed(venv)
    adapter = SB3VecEnv(timed)
    norm = VecNormalize(SB3VecEnv(venv))
    adapter.seed(0)
    adapter.reset()
    norm.reset()
    actions = _actions(n, venv.single_action_space)
    dones = 0

    def bare():
        venv.step(actions)

    def sb3():
        nonlocal dones
        dones += int(adapter.step(actions)[2].sum())

    def sb3_norm():
        norm.step(actions)

    for fn in (bare, sb3, sb3_norm):
        fn()  # warm up (Numba, caches)
    t_bare = t_ad = t_norm = 0.0
    block_costs = []
    timed.elapsed = 0.0
    for _ in range(rounds):
        b0, a0 = t_bare, t_ad
        for _ in range(steps):  # alternate step by step: load changes hit both alike
            t_bare += _time(bare, 1)
            t_ad += _time(sb3, 1)
        t_norm += _time(sb3_norm, steps)
        block_costs.append((t_ad - a0) / (t_bare - b0) - 1.0)
    venv.close()
    total = n * steps * rounds
    return {"bare": total / t_bare, "adapter": total / t_ad, "vecnorm": total / t_norm,
            "cost": statistics.median(block_costs), "own": (t_ad - timed.elapsed) / timed.elapsed,
            "own_us": 1e6 * (t_ad - timed.elapsed) / (steps * rounds),
            "dones_per_step": dones / (rounds * steps + 1)}


def bench_sb3_vec(task: str, n: int, cls, steps: int) -> float:
    env = cls([lambda: gym.make(task)] * n)
    try:
        env.seed(0)
        env.reset()
        actions = _actions(n, env.action_space)
        env.step(actions)
        return n * steps / _time(lambda: env.step(actions), steps)
    finally:
        env.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--num-envs", type=int, nargs="+", default=[256, 1024])
    p.add_argument("--task", default="UniLab/Go1Joystick-v0")
    p.add_argument("--steps", type=int, default=20, help="env steps per timed round")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, default=None, help="physics/Numba threads (default: all CPUs)")
    p.add_argument("--subproc-max", type=int, default=16)
    p.add_argument("--no-single", action="store_true", help="skip DummyVecEnv / SubprocVecEnv")
    args = p.parse_args()

    head = f"{'N':>6} {'bare':>10} {'adapter':>10} {'cost':>7} {'own':>6} {'own us':>7} {'+VecNorm':>10} {'Dummy':>10} {'Subproc':>16} {'dones/step':>10}"
    print(f"SB3 adapter on {args.task} (env steps/s)\n{head}\n{'-' * len(head)}")
    for n in args.num_envs:
        r = bench_adapter(args.task, n, args.steps, args.rounds, args.threads)
        dummy = sub = float("nan")
        sub_n = min(n, args.subproc_max)
        if not args.no_single:
            dummy = bench_sb3_vec(args.task, n, DummyVecEnv, max(2, args.steps // 4))
            sub = bench_sb3_vec(args.task, sub_n, SubprocVecEnv, args.steps)
        print(f"{n:>6} {r['bare']:>10.0f} {r['adapter']:>10.0f} {100 * r['cost']:>6.1f}% "
              f"{100 * r['own']:>5.1f}% {r['own_us']:>7.0f} {r['vecnorm']:>10.0f} "
              f"{dummy:>10.0f} {f'{sub:.0f} (N={sub_n})':>16} {r['dones_per_step']:>10.1f}")
    print("cost = adapter / bare step time - 1 (steps alternate one by one; median over rounds)\n"
          "own  = time in the adapter outside the env's step/reset, relative to it (us per step)\n"
          "budget: cost <= 10% at N = 1024")


if __name__ == "__main__":
    main()
