"""Row 1: the G1 task's own post-processing kernel against NumPy doing the same computation.

On a live ``UniLab/G1Joystick-v0`` batch (8192 envs mid-episode: observation 101,
privileged observation 45, 29 joints, 17 reward terms), one step's post-processing
(everything ``task.compute`` does after physics: observations, reward terms, reward,
terminations, gait phase, foot contacts and air times, command resampling) runs as:

- ``numpy``: :func:`.g1_numpy.g1_compute_numpy`, vectorized NumPy over the whole batch
  on one thread (the baseline, the 12x budget's denominator). Same inputs (the batch's
  own qpos / qvel / site / actuator-force arrays), same outputs, same precision as the
  kernel (float64 arithmetic; exponentials and the phase's sine / cosine in float32).
- ``numpy threads``: the same function on row shards in a pool of as many threads as
  the kernel uses. NumPy's elementwise operations run on the calling thread only
  (threadpoolctl limits BLAS pools, which this computation does not use), so sharding
  rows over threads (the ufuncs release the GIL) is how NumPy gets the same cores.
- ``kernel``: the task's fused Numba ``prange`` kernel, called as the env calls it.
- ``floor``: :func:`.floor.stream_floor`, the kernel's bytes moved with no math.

Before anything is timed, both NumPy paths and the kernel start from the same state
and must agree on every output and state update within float32 tolerance (bit-exact
for flags, counters and random streams), with some rows made to resample commands.
Each path then runs on its own copy of the outputs and state.

Timing, as the env sees it: in ``env.step`` the kernel runs right after ``Batch.step``,
so every timed call here follows its own physics substep of the live batch (caches as
the physics left them, MuJoCo's pool just run). Repetitions alternate the four paths
(the order rotating), and each row is the median of the per-repetition ratios, with
their interquartile range and min-max. Calls timed back to back instead (earlier
versions: 50 kernel calls in a row, median of 3 rounds) find the kernel's data hot in
cache: 2-2.5x faster than after physics, and that hot speed swung 3x between runs.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .floor import stream_floor
from .g1_numpy import KERNEL_ARGS, OUTPUTS, STATE, g1_compute_numpy
from .stats import measured, paired_ratios, summary

G1_TASK = "UniLab/G1Joystick-v0"
BUDGET = 12.0  # the kernel vs single-thread NumPy


def kernel_args(env) -> dict:
    """What the G1 task's kernel reads, by name (:data:`.g1_numpy.KERNEL_ARGS`): the very arrays and records ``task.compute`` passes."""
    t = env.task
    robot, physics = t.robot, t.physics
    args = {
        "obs": env._obs, "privileged_obs": env._privileged_obs, "reward_terms": env._reward_terms,
        "reward": env._reward, "terminated": env._terminated, "episode_step": env._episode_step, "rng": env._rng,
        "qpos": physics.qpos, "qvel": physics.qvel, "site_xpos": physics.foot_xpos, "actuator_force": physics.actuator_force,
        "root_q": robot.root_q, "root_d": robot.root_d, "joint_q": robot.joint_q, "joint_d": robot.joint_d,
        "actuator_ids": robot.actuator_ids, "foot_sites": robot.foot_ids, "stand": robot.home,
        "joint_low": robot.soft_low, "joint_high": robot.soft_high, "pose_weights": robot.pose_weights,
        "last_action": t.last_action, "previous_action": t._previous_action, "command": t.command,
        "phase": t.phase, "contact": t._contact, "air_time": t._air_time, "foot_height": t._foot_height,
        "previous_foot_pos": t._previous_foot_pos, "weights": t._weights, "params": t.params, "commands": t.commands,
        "phase_offsets": robot.phase_offsets_cos_sin,
    }  # fmt: skip
    assert tuple(args) == KERNEL_ARGS
    return args


def g1_batch(num_envs: int, threads: int, steps: int = 5, seed: int = 0):
    """A live G1 batch a few random-action steps into its episodes: ``(vector env, kernel arguments)``.

    Raises if the G1 task cannot be built (it is registered by importing ``unilab_envs``).
    """
    import gymnasium as gym

    import unilab_envs

    if G1_TASK not in unilab_envs.TASKS:
        raise RuntimeError(f"{G1_TASK} is not among unilab_envs.TASKS: row 1 measures its kernel")
    env = gym.make_vec(G1_TASK, num_envs=num_envs, num_threads=threads, copy=False)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        env.step((0.5 * rng.uniform(-1.0, 1.0, (num_envs,) + env.single_action_space.shape)).astype(np.float32))
    return env, kernel_args(env.unwrapped)


def kernel_call(env):
    """``task.compute`` on the env's own arrays, exactly as the env's step calls it."""

    def call() -> None:
        env.task.compute(env._obs, env._privileged_obs, env._reward_terms, env._reward, env._terminated,
                         env._episode_step, env._rng)

    return call


def private_copy(args: dict) -> dict:
    """``args`` with its outputs and step-updated state copied: another path runs on it without touching the env."""
    return {**args, **{k: args[k].copy() for k in OUTPUTS + STATE}}


class ThreadedNumpy:
    """:func:`g1_compute_numpy` on ``workers`` row shards in a persistent thread pool."""

    def __init__(self, workers: int):
        self.workers = workers
        self.pool = ThreadPoolExecutor(workers)

    def __call__(self, a: dict) -> None:
        bounds = np.linspace(0, a["obs"].shape[0], self.workers + 1).astype(int)
        futs = [self.pool.submit(g1_compute_numpy, a, int(lo), int(hi)) for lo, hi in zip(bounds[:-1], bounds[1:])]
        for f in futs:
            f.result()

    def close(self) -> None:
        self.pool.shutdown()


def _agree(ref: np.ndarray, got: np.ndarray) -> bool:
    if np.issubdtype(ref.dtype, np.floating):
        return bool(np.allclose(ref, got, rtol=1e-5, atol=1e-6))  # float32 tolerance (float32 exp, sin, cos)
    return bool(np.array_equal(ref, got))


def disagreements(env, args: dict, threaded: ThreadedNumpy, resample_every: int = 7) -> list[str]:
    """``"<path>: <array>"`` for every output or state array where a NumPy path differs from the kernel.

    All start from the env's current state; every ``resample_every``-th row is made to
    resample its command this step (then the episode counters are put back).
    """
    step = args["episode_step"]
    saved = step.copy()
    step[::resample_every] = 0
    try:
        single, sharded = private_copy(args), private_copy(args)
        g1_compute_numpy(single)
        threaded(sharded)
        kernel_call(env)()
    finally:
        step[:] = saved
    return [f"{name}: {k}" for k in OUTPUTS + STATE for name, got in (("numpy", single), ("numpy threads", sharded))
            if not _agree(args[k], got[k])]


def physics_step(env) -> None:
    """One physics substep of the live batch (untimed): what the env runs right before the kernel.

    After it, the kernel's inputs come from wherever ``Batch.step`` left them and MuJoCo's
    thread pool has just run, exactly as in ``env.step``; a call timed straight after
    another call instead finds the 17.6 MB the kernel moves at 8192 envs hot in cache.
    """
    import mujoco

    try:
        env.batch.step(nstep=1, stage=env.task.step_stage)
    except mujoco.batch.SimulationError:  # a diverged row: the env would reset it; timing is unaffected
        pass


def time_after_physics(env, paths: dict, reps: int, warmup: int = 1) -> dict[str, list[float]]:
    """ms per call of each of ``paths`` (name -> callable), each call timed right after its own
    :func:`physics_step`; repetitions alternate the paths, and the order rotates every
    repetition, so drifting load hits all alike. ``warmup`` first repetitions are dropped."""
    names = list(paths)
    times: dict[str, list[float]] = {k: [] for k in names}
    for rep in range(warmup + reps):
        shift = rep % len(names)
        for k in names[shift:] + names[:shift]:
            physics_step(env)
            t0 = time.perf_counter()
            paths[k]()
            if rep >= warmup:
                times[k].append((time.perf_counter() - t0) * 1e3)
    return times


def bench_postprocess(num_envs: int = 8192, threads: int = 2, reps: int = 15) -> list[dict]:
    """Row 1's rows: the G1 kernel vs single-thread NumPy (budgeted), vs NumPy on ``threads``
    threads, NumPy's own thread scaling, and the memory floor. Every call is timed right after
    a physics step of the live batch (:func:`time_after_physics`), ``reps`` alternating
    repetitions per path; each row holds the median paired ratio and its spread (:mod:`.stats`)."""
    env, args = g1_batch(num_envs, threads)
    threaded = ThreadedNumpy(threads)
    try:
        bad = disagreements(env.unwrapped, args, threaded)  # also compiles and warms every path
        if bad:
            raise AssertionError(f"G1 post-processing: NumPy disagrees with the task's kernel on {bad}")
        single, sharded, moved = private_copy(args), private_copy(args), private_copy(args)
        stream_floor(moved)
        paths = {"numpy": lambda: g1_compute_numpy(single), "threads": lambda: threaded(sharded),
                 "kernel": kernel_call(env.unwrapped), "floor": lambda: stream_floor(moved)}
        times = time_after_physics(env.unwrapped, paths, reps)
    finally:
        threaded.close()
        env.close()
    b, t, k, m = (times[p] for p in ("numpy", "threads", "kernel", "floor"))
    floor_share = summary(paired_ratios(m, k))["median"]  # floor / kernel time: the kernel's share of its speed
    shape = f"N={num_envs}, obs 101 + privileged 45, act 29, 17 terms"
    common = {"section": "postprocess", "unit": "ms/call", "timing": "each call right after a physics step"}
    kernel = {"ours_label": f"G1 task.compute, {threads} threads"}
    return [
        {**common, **kernel, "name": f"post-process G1Joystick task kernel vs NumPy, same computation ({shape})",
         "baseline_label": "numpy 1 thread", **measured(b, k), "budget": BUDGET},
        {**common, **kernel, "baseline_label": f"numpy {threads} threads", **measured(t, k), "budget": None,
         "name": f"post-process G1Joystick task kernel vs NumPy on {threads} row-shard threads ({shape})"},
        {**common, "name": f"post-process NumPy on {threads} row-shard threads vs NumPy 1 thread ({shape})",
         "baseline_label": "numpy 1 thread", "ours_label": f"numpy {threads} threads", **measured(b, t), "budget": None},
        {**common, "name": f"memory floor: the kernel's reads and writes, no math (kernel at {floor_share:.0%} of it)",
         "baseline_label": "numpy 1 thread", "ours_label": "numba stream", **measured(b, m), "budget": None},
    ]
