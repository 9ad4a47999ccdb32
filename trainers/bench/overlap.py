"""Row 6 (opt-in): collection in two halves, physics of half A overlapping the policy on half B.

``mujoco.batch.Batch.step`` releases the GIL, so while a worker thread steps half A's
envs, the main thread can run the policy (GPU kernels, or CPU torch) on half B, then
swap. This is the bundled :class:`~trainers.ppo.collector.Collector` with
``overlap=True`` (``unilab train ... overlap=true``); the row times it against the same
collector stepping the two halves one after the other, and against one full-size env.
Keep it on only where this row shows a gain.
"""

from __future__ import annotations

import time

import torch

from .stats import measured


def bench_overlap(task: str, num_envs: int, num_steps: int, iterations: int, device: torch.device) -> list[dict]:
    from trainers.ppo.collector import Collector
    from trainers.ppo.config import AlgoConfig, TrainConfig
    from trainers.ppo.envs import env_dims, make_vec_env
    from trainers.ppo.runner import build_learner
    from trainers.ppo.storage import RolloutStorage

    half = num_envs // 2
    envs = {"bundled": [make_vec_env(task, 2 * half)], "seq": [make_vec_env(task, half), make_vec_env(task, half)],
            "ovl": [make_vec_env(task, half), make_vec_env(task, half)]}
    runs = {}  # name -> Collector
    try:
        dims = env_dims(envs["bundled"][0])
        cfg = TrainConfig(task=task, num_envs=2 * half, device=str(device), algo=AlgoConfig(num_steps=num_steps))
        algo = build_learner(dims, cfg, device)
        storage = RolloutStorage(num_steps, 2 * half, dims.obs, dims.privileged, dims.act, device)
        for name, pair in envs.items():
            gen = torch.Generator(device=device)
            gen.manual_seed(0)
            coll = Collector(pair, algo, device, gen, privileged=dims.privileged is not None, overlap=name == "ovl")
            runs[name] = coll
            coll.reset(seed=0)
        for coll in runs.values():
            coll.collect(storage)  # warm up
        sps = {k: [] for k in runs}
        spi = 2 * half * num_steps
        for _ in range(iterations):
            for k, coll in runs.items():
                t0 = time.perf_counter()
                coll.collect(storage)
                sps[k].append(spi / (time.perf_counter() - t0))
    finally:
        for coll in runs.values():
            coll.close()
        for pair in envs.values():
            for e in pair:
                e.close()
    shape = f"{task.split('/')[-1]}, N={2 * half} as 2x{half}, T={num_steps}, {device.type}"
    common = {"section": "overlap", "unit": "steps/s", "higher_is_better": True, "budget": None,
              "ours_label": "two halves overlapped"}
    return [
        {**common, "name": f"collection two halves overlapped vs sequential, same Collector ({shape})",
         "baseline_label": "two halves sequential", **measured(sps["seq"], sps["ovl"], higher_is_better=True)},
        {**common, "name": f"collection two halves overlapped vs one full-size env ({shape})",
         "baseline_label": "one env", **measured(sps["bundled"], sps["ovl"], higher_is_better=True)},
    ]
