"""Row 2 (env step vs the ``mujoco.batch`` floor) and row 5 (training vs env-only steps/s).

Row 2 is :func:`.env_speed.bench_ours_vs_floor` per task (``benchmarks/bench_envs.py``
prints the same measurement with Gymnasium's vector envs beside it). Row 5 runs the bundled PPO on a task for a few
iterations and alternates, iteration by iteration, a full training iteration (collect +
update) with the same number of env-only steps (a fixed action batch) on the same env,
so both see the same machine load; the ratio is the median over iterations.
"""

from __future__ import annotations

import tempfile
import time

import numpy as np
import torch

from .env_speed import bench_ours_vs_floor
from .stats import measured


def bench_env_vs_floor(tasks: list[str], num_envs: int, threads: int, steps: int, rounds: int) -> list[dict]:
    """Row 2: each task's env step against the ``mujoco.batch`` floor (budget 0.9)."""
    rows = []
    for task in tasks:
        r = bench_ours_vs_floor(task, num_envs, threads, steps, rounds)
        rows.append({"section": "env", "unit": "steps/s", "higher_is_better": True,
                     "name": f"env step {task.split('/')[-1]} vs mujoco.batch floor (N={num_envs}, {threads} threads)",
                     "baseline_label": "Batch.step alone", "ours_label": "our env.step",
                     **measured(r["floor_rounds"], r["ours_rounds"], higher_is_better=True), "budget": 0.9})
    return rows


def prime(runner) -> None:
    """Reset a fresh runner's envs (seed 0) and seed its normalizers, as ``Runner.learn`` does first."""
    runner.collector.reset(seed=0)
    runner.algo.update_normalizers(*runner.collector.initial_moments())


def timed_iteration(runner) -> tuple[float, float]:
    """(collection, update) seconds of one training iteration of a primed runner."""
    t0 = time.perf_counter()
    runner.collector.collect(runner.storage)
    t1 = time.perf_counter()
    runner.algo.update(runner.storage, runner.generator)
    return t1 - t0, time.perf_counter() - t1


def bench_end_to_end(task: str, num_envs: int, num_steps: int, iterations: int, device: torch.device,
                     amp: bool = False) -> list[dict]:
    """Training (collect + update) and collection alone vs env-only steps/s, alternating in one
    process; ``amp``: the learner under bf16 autocast (``algo.amp``)."""
    from trainers.ppo.config import AlgoConfig, LogConfig, TrainConfig
    from trainers.ppo.runner import Runner

    with tempfile.TemporaryDirectory() as tmp:
        cfg = TrainConfig(task=task, num_envs=num_envs, total_steps=num_envs * num_steps * (iterations + 1),
                          device=str(device), out=tmp, algo=AlgoConfig(num_steps=num_steps, amp=amp),
                          log=LogConfig(tensorboard=False, csv=False, progress=False, plot=False))
        runner = Runner(cfg)
        try:
            env = runner.env
            prime(runner)
            space = env.single_action_space
            actions = np.random.default_rng(0).uniform(space.low, space.high, (num_envs,) + space.shape)
            actions = (0.3 * actions).astype(space.dtype)

            def env_only() -> float:
                t0 = time.perf_counter()
                for _ in range(num_steps):
                    env.step(actions)
                return time.perf_counter() - t0

            timed_iteration(runner), env_only()  # warm up (Numba, allocator, kernels)
            spi = num_envs * num_steps
            train, collect, envs = [], [], []
            for _ in range(iterations):
                tc, tu = timed_iteration(runner)
                te = env_only()
                train.append(spi / (tc + tu))
                collect.append(spi / tc)
                envs.append(spi / te)
        finally:
            runner.close()
    shape = f"{task.split('/')[-1]}, N={num_envs}, T={num_steps}, {device.type}{', bf16' if amp else ''}"
    common = {"section": "end_to_end", "unit": "steps/s", "higher_is_better": True, "baseline_label": "env-only"}
    return [
        {**common, "name": f"training (collect+update) vs env-only steps/s ({shape})", "ours_label": "training",
         **measured(envs, train, higher_is_better=True), "budget": 0.8},
        {**common, "name": f"collection (env+policy) vs env-only steps/s ({shape})", "ours_label": "collect",
         **measured(envs, collect, higher_is_better=True), "budget": None},
    ]
