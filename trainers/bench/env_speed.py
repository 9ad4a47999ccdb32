"""Env steps/s, measured side by side: our vector env against the ``mujoco.batch`` floor
(row 2 of ``unilab bench``) and Gymnasium's Sync/Async vector envs over our single env
(``benchmarks/bench_envs.py``).

Ours and the floor alternate in rounds, the floor starting each round from a copy of our
batch's states (contacts drive the physics cost), and the median ratio is reported,
since these machines are shared and noisy.
"""

from __future__ import annotations

import statistics
import time

import gymnasium as gym
import mujoco.batch
import numpy as np

import unilab_envs  # noqa: F401  (registers UniLab/*)


def _time(fn, steps: int) -> float:
    start = time.perf_counter()
    for _ in range(steps):
        fn()
    return time.perf_counter() - start


def bench_ours_vs_floor(task_id: str, num_envs: int, threads: int, steps: int, rounds: int) -> dict:
    """Median steps/s of our env (``"ours"``, a fixed action batch), of ``mujoco.batch.Batch``
    alone on the same model, N, threads and substeps (``"floor"``), and of their ratio; the
    per-round values under ``"ours_rounds"`` and ``"floor_rounds"``."""
    env = gym.make_vec(task_id, num_envs=num_envs, num_threads=threads, copy=False)
    env.reset(seed=0)
    actions = np.random.default_rng(0).uniform(-1, 1, (num_envs,) + env.single_action_space.shape).astype(np.float32) * 0.3
    floor = mujoco.batch.Batch(env.model, num_envs, nthread=threads)
    frame_skip = env.frame_skip

    def ours():
        env.step(actions)

    def bare():
        floor.step(nstep=frame_skip)

    ours(), bare()  # warm up (Numba, caches)
    ratios, ours_sps, floor_sps = [], [], []
    for _ in range(rounds):
        floor.state[:] = env.batch.state  # same physical states (contacts cost), same controls
        t_ours = _time(ours, steps)
        t_floor = _time(bare, steps)
        ratios.append(t_floor / t_ours)
        ours_sps.append(num_envs * steps / t_ours)
        floor_sps.append(num_envs * steps / t_floor)
    env.close()
    return {
        "ours": statistics.median(ours_sps),
        "floor": statistics.median(floor_sps),
        "ratio": statistics.median(ratios),
        "ours_rounds": ours_sps,
        "floor_rounds": floor_sps,
    }


def bench_gymnasium_vector(task_id: str, num_envs: int, mode: str, steps: int) -> float:
    """Steps/s of Gymnasium's ``mode`` ("sync" or "async") vector env over ``num_envs`` single envs."""
    env = gym.make_vec(task_id, num_envs=num_envs, vectorization_mode=mode, vector_kwargs={})
    env.reset(seed=0)
    actions = np.zeros((num_envs,) + env.single_action_space.shape, np.float32)
    env.step(actions)
    elapsed = _time(lambda: env.step(actions), steps)
    env.close()
    return num_envs * steps / elapsed
