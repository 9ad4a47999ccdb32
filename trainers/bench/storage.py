"""Row 3: rollout storage, SB3's CPU ``RolloutBuffer`` vs our device-resident storage.

Same shapes and the same work for both: ``T`` steps of ``N`` envs are written (obs,
reward, done flags arrive as NumPy arrays from the env; actions, values and log-probs
come from the policy as device tensors), returns and advantages are computed (GAE), then
``epochs x minibatches`` shuffled minibatches are read as device tensors, as one PPO
update would.
"""

from __future__ import annotations

import time

import gymnasium as gym
import numpy as np
import torch

from trainers.ppo.collector import HostToDevice
from trainers.ppo.storage import RolloutStorage

from .stats import measured


def _data(T: int, N: int, obs: int, act: int, device: torch.device, seed: int = 0):
    r = np.random.default_rng(seed)
    steps = []
    for _ in range(T):
        steps.append({
            "obs": r.normal(size=(N, obs)).astype(np.float32),
            "reward": r.normal(size=N).astype(np.float32),
            "term": r.uniform(size=N) < 0.01,
            "trunc": r.uniform(size=N) < 0.005,
            "actions": torch.as_tensor(r.normal(size=(N, act)), dtype=torch.float32, device=device),
            "values": torch.as_tensor(r.normal(size=N), dtype=torch.float32, device=device),
            "log_probs": torch.as_tensor(r.normal(size=N), dtype=torch.float32, device=device),
        })
    return steps


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def run_sb3(steps, T, N, obs, act, device, epochs, minibatches) -> float:
    from stable_baselines3.common.buffers import RolloutBuffer

    obs_space = gym.spaces.Box(-np.inf, np.inf, (obs,), np.float32)
    act_space = gym.spaces.Box(-1.0, 1.0, (act,), np.float32)
    buf = RolloutBuffer(T, obs_space, act_space, device=device, gae_lambda=0.95, gamma=0.99, n_envs=N)
    _sync(device)
    t0 = time.perf_counter()
    starts = np.ones(N, dtype=np.float32)
    for s in steps:
        buf.add(s["obs"], s["actions"].cpu().numpy(), s["reward"], starts, s["values"], s["log_probs"])
        starts = (s["term"] | s["trunc"]).astype(np.float32)
    buf.compute_returns_and_advantage(steps[-1]["values"], starts)
    acc = torch.zeros((), device=device)
    for _ in range(epochs):
        for mb in buf.get(T * N // minibatches):
            acc += mb.observations[0, 0]  # consume each minibatch on the device
    _sync(device)
    return time.perf_counter() - t0


def run_ours(steps, T, N, obs, act, device, epochs, minibatches) -> float:
    storage = RolloutStorage(T, N, obs, None, act, device)
    h2d = HostToDevice(device)
    gen = torch.Generator(device=device)
    gen.manual_seed(0)
    _sync(device)
    t0 = time.perf_counter()
    for t, s in enumerate(steps):
        storage.obs[t].copy_(h2d("obs", s["obs"]))
        storage.actions[t].copy_(s["actions"])
        storage.action_means[t].copy_(s["actions"])
        storage.values[t].copy_(s["values"])
        storage.log_probs[t].copy_(s["log_probs"])
        storage.rewards[t].copy_(h2d("reward", s["reward"]))
        storage.terminated[t].copy_(h2d("term", s["term"], dtype=bool))
        storage.truncated[t].copy_(h2d("trunc", s["trunc"], dtype=bool))
    storage.last_values.copy_(steps[-1]["values"])
    storage.compute_returns(0.99, 0.95)
    acc = torch.zeros((), device=device)
    for mb in storage.minibatches(minibatches, epochs, gen):
        acc += mb.obs[0, 0]
    _sync(device)
    return time.perf_counter() - t0


def bench_storage(num_envs: int, num_steps: int, obs: int, act: int, device: torch.device,
                  epochs: int = 5, minibatches: int = 4, rounds: int = 3) -> list[dict]:
    T, N = num_steps, num_envs
    steps = _data(T, N, obs, act, device)
    args = (steps, T, N, obs, act, device, epochs, minibatches)
    run_sb3(*args), run_ours(*args)  # warm up
    sb3, ours = [], []
    for _ in range(rounds):
        sb3.append(run_sb3(*args))
        ours.append(run_ours(*args))
    return [{"section": "storage", "unit": "ms/rollout",
             "name": f"rollout storage fill+GAE+{epochs}x{minibatches} minibatches (T={T}, N={N}, obs {obs}, "
                     f"act {act}, {device.type})",
             "baseline_label": "SB3 RolloutBuffer", "ours_label": "RolloutStorage",
             **measured([t * 1e3 for t in sb3], [t * 1e3 for t in ours]), "budget": None}]
