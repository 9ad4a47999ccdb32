"""Row 6 (opt-in): collection in two halves, physics of half A overlapping the policy on half B.

``mujoco.batch.Batch.step`` releases the GIL, so while a worker thread steps half A's
envs, the main thread can run the policy (GPU kernels, or CPU torch) on half B, then
swap. This module is a measurement, not a trainer feature: :func:`collect_halves` is a
lean collection loop (normalize, act, env step, write obs / actions / log-probs /
values / rewards / flags into a :class:`RolloutStorage`) over two half-size envs, run
either sequentially or overlapped; the row reports overlapped vs sequential on the
same code, and the bundled :class:`~trainers.ppo.collector.Collector` on one full-size
env for reference (it also does episode bookkeeping and final-value bootstrap, which
the lean loop leaves out). Keep it only where this row shows a gain.
"""

from __future__ import annotations

import statistics
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from trainers.ppo.collector import HostToDevice, critic_input


class HalfCollector:
    """Lean rollout collection over two vector envs (rows ``[0, n_a)`` and ``[n_a, N)``)."""

    def __init__(self, envs, algo, storage, device: torch.device, generator: torch.Generator, overlap: bool):
        self.envs, self.algo, self.storage, self.device, self.gen = envs, algo, storage, device, generator
        self.overlap = overlap
        self.pool = ThreadPoolExecutor(1) if overlap else None
        self.h2d = [HostToDevice(device), HostToDevice(device)]
        self.rows, start = [], 0
        for e in envs:
            self.rows.append(slice(start, start + e.num_envs))
            start += e.num_envs
        space = envs[0].single_action_space
        self.low = torch.as_tensor(space.low, device=device)
        self.high = torch.as_tensor(space.high, device=device)
        self.obs = [None, None]
        self.crit = [None, None]
        self.priv = getattr(envs[0], "privileged_observation_space", None) is not None

    def reset(self, seed: int) -> None:
        for h, e in enumerate(self.envs):
            obs, info = e.reset(seed=seed + h)
            self._set_obs(h, obs, info)

    def _set_obs(self, h: int, obs, info) -> None:
        self.obs[h] = self.h2d[h]("obs", obs)
        self.crit[h] = self.h2d[h]("priv", critic_input(obs, info["privileged_obs"])) if self.priv else None

    def _act(self, h: int, t: int):
        s, r = self.storage, self.rows[h]
        obs_n, crit_n = self.algo.normalize(self.obs[h], self.crit[h])
        actions, means, logp, values = self.algo.act(obs_n, crit_n, self.gen)
        s.obs[t, r].copy_(obs_n)
        s.actions[t, r].copy_(actions)
        s.action_means[t, r].copy_(means)
        s.log_probs[t, r].copy_(logp)
        s.values[t, r].copy_(values)
        clipped = torch.clamp(actions, self.low, self.high)
        return clipped.cpu().numpy()  # synchronizes on CUDA

    def _store(self, h: int, t: int, result) -> None:
        obs, reward, term, trunc, info = result
        s, r, h2d = self.storage, self.rows[h], self.h2d[h]
        s.rewards[t, r].copy_(h2d("reward", reward))
        s.terminated[t, r].copy_(h2d("term", term, dtype=bool))
        s.truncated[t, r].copy_(h2d("trunc", trunc, dtype=bool))
        self._set_obs(h, obs, info)

    @torch.no_grad()
    def collect(self) -> None:
        T = self.storage.num_steps
        if not self.overlap:
            for t in range(T):
                for h in (0, 1):
                    self._store(h, t, self.envs[h].step(self._act(h, t)))
            return
        step = lambda h, a: self.envs[h].step(a)  # noqa: E731
        acts_a = self._act(0, 0)
        for t in range(T):
            fut_a = self.pool.submit(step, 0, acts_a)     # physics A ...
            acts_b = self._act(1, t)                       # ... while the policy runs on B
            self._store(0, t, fut_a.result())
            fut_b = self.pool.submit(step, 1, acts_b)     # physics B ...
            if t + 1 < T:
                acts_a = self._act(0, t + 1)               # ... while the policy runs on A
            self._store(1, t, fut_b.result())

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()


def bench_overlap(task: str, num_envs: int, num_steps: int, iterations: int, device: torch.device) -> list[dict]:
    from trainers.ppo.collector import Collector
    from trainers.ppo.config import AlgoConfig, TrainConfig
    from trainers.ppo.envs import env_dims, make_vec_env
    from trainers.ppo.runner import build_learner
    from trainers.ppo.storage import RolloutStorage

    half = num_envs // 2
    full = make_vec_env(task, 2 * half)
    halves = [make_vec_env(task, half), make_vec_env(task, half)]
    try:
        dims = env_dims(full)
        cfg = TrainConfig(task=task, num_envs=2 * half, device=str(device), algo=AlgoConfig(num_steps=num_steps))
        algo = build_learner(dims, cfg, device)
        gen = torch.Generator(device=device)
        gen.manual_seed(0)
        storage = RolloutStorage(num_steps, 2 * half, dims.obs, dims.privileged, dims.act, device)
        bundled = Collector(full, algo, device, gen, privileged=dims.privileged is not None)
        bundled.reset(seed=0)
        seq = HalfCollector(halves, algo, storage, device, gen, overlap=False)
        ovl = HalfCollector(halves, algo, storage, device, gen, overlap=True)
        seq.reset(seed=0)
        ovl.obs, ovl.crit = seq.obs, seq.crit  # same envs: share the carried observations
        runs = {"bundled": lambda: bundled.collect(storage), "seq": seq.collect,
                "ovl": lambda: (setattr(ovl, "obs", seq.obs), setattr(ovl, "crit", seq.crit), ovl.collect(),
                                setattr(seq, "obs", ovl.obs), setattr(seq, "crit", ovl.crit))}
        for fn in runs.values():
            fn()  # warm up
        sps = {k: [] for k in runs}
        spi = 2 * half * num_steps
        for _ in range(iterations):
            for k, fn in runs.items():
                t0 = time.perf_counter()
                fn()
                sps[k].append(spi / (time.perf_counter() - t0))
        ovl.close()
    finally:
        for e in (full, *halves):
            e.close()
    m = {k: float(statistics.median(v)) for k, v in sps.items()}
    shape = f"{task.split('/')[-1]}, N={2 * half} as 2x{half}, T={num_steps}, {device.type}"
    common = {"section": "overlap", "unit": "steps/s", "higher_is_better": True, "budget": None,
              "ours_label": "two halves overlapped", "ours": m["ovl"]}
    return [
        {**common, "name": f"collection two halves overlapped vs sequential, same lean loop ({shape})",
         "baseline_label": "two halves sequential", "baseline": m["seq"], "ratio": m["ovl"] / m["seq"]},
        {**common, "name": f"collection two halves overlapped vs bundled Collector ({shape})",
         "baseline_label": "bundled Collector", "baseline": m["bundled"], "ratio": m["ovl"] / m["bundled"]},
    ]
