"""Row 4: one PPO update, SB3 ``PPO.train()`` vs ours, on the same rollout.

Same data (``T x N`` transitions, obs / act sizes), same networks (separate actor and
critic MLPs, ELU, the bundled PPO's default hidden sizes), same hyper-parameters
(epochs, minibatch count, clipped value loss, grad-norm clip), same device. SB3 keeps
its rollout on the CPU and copies each minibatch to the device; ours lives there. Where
the device has bf16 (CUDA, or a CPU with AVX512-BF16/AMX: ``algo.amp``), ours is also
timed under bf16 autocast.
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
from trainers.common.mixed_precision import cpu_has_bf16
from trainers.ppo.runner import build_learner
from trainers.ppo.storage import RolloutStorage

from .stats import measured


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


@dataclasses.dataclass(frozen=True)
class LearnerSize:
    """A task's learner: observation, privileged (critic-only) and action sizes, and the MLPs."""
    name: str
    obs: int
    privileged: int | None
    act: int
    actor_hidden: tuple[int, ...]
    critic_hidden: tuple[int, ...]


#: the committed configs' learners (trainers/configs/go1_joystick.yaml, g1_joystick.yaml)
GO1_LEARNER = LearnerSize("Go1", 50, 25, 12, (256, 128, 64), (256, 128, 64))
G1_LEARNER = LearnerSize("G1", 101, 45, 29, (256, 128, 64), (512, 256, 128))


class OursUpdate:
    def __init__(self, ro: Rollout, hidden: tuple[int, ...], epochs: int, minibatches: int, device: torch.device,
                 amp: bool, critic_hidden: tuple[int, ...] | None = None, privileged: int | None = None):
        T, N, O = ro.obs.shape
        A = ro.actions.shape[2]
        algo_cfg = AlgoConfig(num_steps=T, num_epochs=epochs, num_minibatches=minibatches, amp=amp)
        cfg = TrainConfig(task="bench", num_envs=N, algo=algo_cfg)
        cfg = dataclasses.replace(cfg, policy=dataclasses.replace(cfg.policy, actor_hidden=hidden,
                                                                  critic_hidden=critic_hidden or hidden))
        critic_dim = O + privileged if privileged else None  # the critic reads obs + privileged obs
        self.algo = build_learner(EnvDims(O, A, critic_dim), cfg, device)
        self.storage = RolloutStorage(T, N, O, critic_dim, A, device)
        s, t = self.storage, lambda a: torch.as_tensor(a, device=device)  # noqa: E731
        if critic_dim:
            rng = np.random.default_rng(1)
            s.critic_obs.copy_(t(rng.normal(size=(T, N, critic_dim)).astype(np.float32)))
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
    if device.type == "cuda" or (device.type == "cpu" and cpu_has_bf16()):
        runs["bf16"] = OursUpdate(ro, hidden, epochs, minibatches, device, amp=True)
    for fn in runs.values():  # warm up (allocator, kernels)
        _time(fn, device)
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(rounds):
        for k, fn in runs.items():
            times[k].append(_time(fn, device))
    ms = {k: [t * 1e3 for t in v] for k, v in times.items()}
    shape = f"T={num_steps}, N={num_envs}, obs {obs}, act {act}, {epochs}x{minibatches} mb, {device.type}"
    common = {"section": "update", "unit": "ms/update"}
    rows = [{**common, "name": f"PPO update SB3 train() vs ours fp32 ({shape})", "baseline_label": "SB3 train()",
             "ours_label": "ours fp32", **measured(ms["sb3"], ms["fp32"]), "budget": 5.0}]
    if "bf16" in ms:
        rows.append({**common, "name": f"PPO update SB3 train() vs ours bf16 autocast ({shape})",
                     "baseline_label": "SB3 train()", "ours_label": "ours bf16", **measured(ms["sb3"], ms["bf16"]),
                     "budget": 5.0})
        rows.append({**common, "name": f"PPO update ours fp32 vs ours bf16 autocast ({shape})",
                     "baseline_label": "ours fp32", "ours_label": "ours bf16", **measured(ms["fp32"], ms["bf16"]),
                     "budget": None})
    return rows


def bench_update_precision(num_envs: int, num_steps: int, learner: LearnerSize, device: torch.device,
                           epochs: int = 5, minibatches: int = 4, rounds: int = 3) -> list[dict]:
    """Ours fp32 vs ours bf16 autocast (``algo.amp``) on one task's learner, the rollout of its
    training config; no row where the device has no bf16 (see ``trainers.common.mixed_precision``)."""
    if not (device.type == "cuda" or (device.type == "cpu" and cpu_has_bf16())):
        return []
    ro = make_rollout(num_steps, num_envs, learner.obs, learner.act)
    runs = {amp: OursUpdate(ro, learner.actor_hidden, epochs, minibatches, device, amp, learner.critic_hidden,
                            learner.privileged) for amp in (False, True)}
    for fn in runs.values():
        _time(fn, device)
    times: dict[bool, list[float]] = {amp: [] for amp in runs}
    for _ in range(rounds):  # alternating, so both see the same machine
        for amp, fn in runs.items():
            times[amp].append(_time(fn, device))
    fp32, bf16 = ([t * 1e3 for t in times[amp]] for amp in (False, True))
    shape = (f"{learner.name} learner, T={num_steps}, N={num_envs}, {epochs}x{minibatches} mb, "
             f"{device.type}, {torch.get_num_threads()} threads")
    return [{"section": "update", "unit": "ms/update", "name": f"PPO update ours fp32 vs bf16 autocast ({shape})",
             "baseline_label": "ours fp32", "ours_label": "ours bf16", **measured(fp32, bf16),
             "budget": 1.8 if device.type == "cpu" else None}]
