"""Row 4: one PPO update, SB3 ``PPO.train()`` vs ours, on the same rollout.

Same data (``T x N`` transitions, obs / act sizes), same networks (separate actor and
critic MLPs, ELU, the bundled PPO's default hidden sizes), same hyper-parameters
(epochs, minibatch count, clipped value loss, grad-norm clip), same device. SB3 keeps
its rollout on the CPU and copies each minibatch to the device; ours lives there. On
CUDA ours is also timed under bf16 autocast.
"""

from __future__ import annotations

import dataclasses
import time

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from trainers.ppo.config import AlgoConfig, TrainConfig
from trainers.ppo.envs import EnvDims
from trainers.ppo.runner import build_learner
from trainers.ppo.storage import RolloutStorage


@dataclasses.dataclass
class Rollout:
    obs: np.ndarray       # [T, N, O]
    actions: np.ndarray   # [T, N, A]
    log_probs: np.ndarray  # [T, N]
    values: np.ndarray
    rewards: np.ndarray
    dones: np.ndarray     # [T, N] bool
    returns: np.ndarray
    advantages: np.ndarray


def make_rollout(T: int, N: int, obs: int, act: int, seed: int = 0) -> Rollout:
    r = np.random.default_rng(seed)
    f = lambda *s: r.normal(size=s).astype(np.float32)  # noqa: E731
    values = f(T, N)
    adv = f(T, N)
    return Rollout(f(T, N, obs), f(T, N, act) * 0.5, f(T, N) - 20.0, values, f(T, N), r.uniform(size=(T, N)) < 0.01,
                   values + adv, adv)


class _Spaces(gym.Env):
    def __init__(self, obs: int, act: int):
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (obs,), np.float32)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (act,), np.float32)

    def reset(self, *, seed=None, options=None):
        return np.zeros(self.observation_space.shape, np.float32), {}

    def step(self, action):
        return np.zeros(self.observation_space.shape, np.float32), 0.0, False, False, {}


class SB3Update:
    """SB3 PPO whose rollout buffer holds the whole ``T*N`` batch (one env, ``n_steps=T*N``)."""

    def __init__(self, ro: Rollout, hidden: tuple[int, ...], epochs: int, minibatches: int, device: torch.device):
        from stable_baselines3 import PPO as SB3PPO
        from stable_baselines3.common.logger import configure
        from stable_baselines3.common.vec_env import DummyVecEnv

        T, N, O = ro.obs.shape
        A = ro.actions.shape[2]
        self.B = B = T * N
        env = DummyVecEnv([lambda: _Spaces(O, A)])
        self.model = SB3PPO("MlpPolicy", env, n_steps=B, batch_size=B // minibatches, n_epochs=epochs,
                            learning_rate=1e-3, clip_range=0.2, clip_range_vf=0.2, vf_coef=1.0, ent_coef=0.0,
                            max_grad_norm=1.0, device=device, seed=0,
                            policy_kwargs=dict(net_arch=dict(pi=list(hidden), vf=list(hidden)),
                                               activation_fn=nn.ELU))
        self.model.set_logger(configure(None, [""]))
        self.ro = ro

    def fill(self) -> None:
        buf, ro, B = self.model.rollout_buffer, self.ro, self.B
        buf.reset()
        buf.observations[:] = ro.obs.reshape(B, 1, -1)
        buf.actions[:] = ro.actions.reshape(B, 1, -1)
        buf.log_probs[:] = ro.log_probs.reshape(B, 1)
        buf.values[:] = ro.values.reshape(B, 1)
        buf.rewards[:] = ro.rewards.reshape(B, 1)
        buf.returns[:] = ro.returns.reshape(B, 1)
        buf.advantages[:] = ro.advantages.reshape(B, 1)
        buf.episode_starts[:] = ro.dones.reshape(B, 1)
        buf.pos, buf.full = buf.buffer_size, True

    def __call__(self) -> None:
        self.model.train()


class OursUpdate:
    def __init__(self, ro: Rollout, hidden: tuple[int, ...], epochs: int, minibatches: int, device: torch.device,
                 amp: bool):
        T, N, O = ro.obs.shape
        A = ro.actions.shape[2]
        algo_cfg = AlgoConfig(num_steps=T, num_epochs=epochs, num_minibatches=minibatches, amp=amp)
        cfg = TrainConfig(task="bench", num_envs=N, algo=algo_cfg)
        cfg = dataclasses.replace(cfg, policy=dataclasses.replace(cfg.policy, actor_hidden=hidden,
                                                                  critic_hidden=hidden))
        self.algo = build_learner(EnvDims(O, A, None), cfg, device)
        self.storage = RolloutStorage(T, N, O, None, A, device)
        s, t = self.storage, lambda a: torch.as_tensor(a, device=device)  # noqa: E731
        s.obs.copy_(t(ro.obs)), s.actions.copy_(t(ro.actions)), s.action_means.copy_(t(ro.actions))
        s.log_probs.copy_(t(ro.log_probs)), s.values.copy_(t(ro.values)), s.rewards.copy_(t(ro.rewards))
        s.terminated.copy_(t(ro.dones)), s.last_values.copy_(t(ro.values[-1]))
        self.generator = torch.Generator(device=device)
        self.generator.manual_seed(0)

    def fill(self) -> None:
        pass

    def __call__(self) -> dict:
        return self.algo.update(self.storage, self.generator)  # .tolist() inside: synchronizes


def _time(fn, device: torch.device) -> float:
    fn.fill()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    t0 = time.perf_counter()
    fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() - t0


def bench_update(num_envs: int, num_steps: int, obs: int, act: int, device: torch.device,
                 hidden: tuple[int, ...] = (256, 128, 64), epochs: int = 5, minibatches: int = 4,
                 rounds: int = 3) -> list[dict]:
    ro = make_rollout(num_steps, num_envs, obs, act)
    runs = {"sb3": SB3Update(ro, hidden, epochs, minibatches, device),
            "fp32": OursUpdate(ro, hidden, epochs, minibatches, device, amp=False)}
    if device.type == "cuda":
        runs["bf16"] = OursUpdate(ro, hidden, epochs, minibatches, device, amp=True)
    for fn in runs.values():  # warm up (allocator, kernels)
        _time(fn, device)
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(rounds):
        for k, fn in runs.items():
            times[k].append(_time(fn, device))
    ms = {k: float(np.median(v)) * 1e3 for k, v in times.items()}
    shape = f"T={num_steps}, N={num_envs}, obs {obs}, act {act}, {epochs}x{minibatches} mb, {device.type}"
    common = {"section": "update", "unit": "ms/update"}
    rows = [{**common, "name": f"PPO update SB3 train() vs ours fp32 ({shape})", "baseline_label": "SB3 train()",
             "baseline": ms["sb3"], "ours_label": "ours fp32", "ours": ms["fp32"], "ratio": ms["sb3"] / ms["fp32"],
             "budget": 5.0}]
    if "bf16" in ms:
        rows.append({**common, "name": f"PPO update SB3 train() vs ours bf16 autocast ({shape})",
                     "baseline_label": "SB3 train()", "baseline": ms["sb3"], "ours_label": "ours bf16",
                     "ours": ms["bf16"], "ratio": ms["sb3"] / ms["bf16"], "budget": 5.0})
        rows.append({**common, "name": f"PPO update ours fp32 vs ours bf16 autocast ({shape})",
                     "baseline_label": "ours fp32", "baseline": ms["fp32"], "ours_label": "ours bf16",
                     "ours": ms["bf16"], "ratio": ms["fp32"] / ms["bf16"], "budget": None})
    return rows
