"""Bundled PPO update vs Stable-Baselines3 PPO ``train()`` on the same rollout and device.

Both learners get identical data (random observations, actions, log-probs, values,
returns and advantages of one rollout), the same network sizes, epochs, minibatch
size, clip ranges (policy and value), fixed learning rate and gradient clipping; the
time of one full update (all epochs) is measured, best of ``--repeats``. Ours also
computes GAE inside its update; SB3's ``train()`` does not (it runs in collection).

    python benchmarks/bench_ppo_update.py            # CPU (and CUDA when present)
    python benchmarks/bench_ppo_update.py --device cuda --repeats 5

Budget (docs/architecture.md): bundled update >= 5x SB3's on the same data and device.

Measured (best of 3, seconds per update, SB3 / ours):

==========================================  ===================  ===================  ======================
case                                        2-core CPU (dev box)  H200 box, CPU (16c)  H200, CUDA
==========================================  ===================  ===================  ======================
sb3-default (2048 x 10 ep, mb 64, 64x64)    0.509 / 0.382 1.3x   0.757 / 0.597 1.3x   1.307 / 0.135  9.7x
go1 (12288 x 5 ep, mb 3072, 256-128-64)     0.405 / 0.386 1.0x   0.193 / 0.135 1.4x   0.100 / 0.015  6.8x
mid (4096 x 5 ep, mb 512, 128x128)          0.121 / 0.101 1.2x   0.127 / 0.128 1.0x   0.163 / 0.021  7.9x
==========================================  ===================  ===================  ======================

On CUDA the whole minibatch step replays as one CUDA graph (``algo.cuda_graph``); on CPU
both are bound by eager PyTorch's per-op cost and the budget is not met.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np
import torch

CASES = {
    # name: (num_envs, num_steps, epochs, minibatch_size, hidden, activation, obs_dim, act_dim)
    "sb3-default (2048 x 10 ep, mb 64, 64x64)": (8, 256, 10, 64, (64, 64), "tanh", 17, 6),
    "go1 (12288 x 5 ep, mb 3072, 256-128-64)": (512, 24, 5, 3072, (256, 128, 64), "elu", 50, 12),
    "mid (4096 x 5 ep, mb 512, 128x128)": (128, 32, 5, 512, (128, 128), "elu", 33, 6),
}


class _SpacesOnly(gym.Env):
    def __init__(self, obs_dim, act_dim):
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (obs_dim,), np.float32)
        self.action_space = gym.spaces.Box(-1, 1, (act_dim,), np.float32)

    def reset(self, *, seed=None, options=None):
        return np.zeros(self.observation_space.shape, np.float32), {}

    def step(self, action):  # pragma: no cover - never stepped
        raise NotImplementedError


def _data(N, T, obs_dim, act_dim, seed=0):
    rng = np.random.default_rng(seed)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    return {"obs": f(T, N, obs_dim), "actions": f(T, N, act_dim), "log_probs": f(T, N) - 5.0,
            "values": f(T, N), "rewards": f(T, N), "advantages": f(T, N), "returns": f(T, N)}


def bench_sb3(case, device, repeats):
    from stable_baselines3 import PPO
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.vec_env import DummyVecEnv

    N, T, epochs, mb, hidden, act, obs_dim, act_dim = case
    env = DummyVecEnv([lambda: _SpacesOnly(obs_dim, act_dim)] * N)
    act_fn = {"tanh": torch.nn.Tanh, "elu": torch.nn.ELU}[act]
    model = PPO("MlpPolicy", env, n_steps=T, batch_size=mb, n_epochs=epochs, learning_rate=3e-4, clip_range=0.2,
                clip_range_vf=0.2, max_grad_norm=1.0, device=device, seed=0,
                policy_kwargs=dict(net_arch=dict(pi=list(hidden), vf=list(hidden)), activation_fn=act_fn))
    model.set_logger(configure(None, []))
    d = _data(N, T, obs_dim, act_dim)
    buf = model.rollout_buffer
    buf.reset()
    buf.observations[:] = d["obs"]
    buf.actions[:] = d["actions"]
    buf.log_probs[:] = d["log_probs"]
    buf.values[:] = d["values"]
    buf.rewards[:] = d["rewards"]
    buf.advantages[:] = d["advantages"]
    buf.returns[:] = d["returns"]
    buf.episode_starts[:] = 0
    buf.pos, buf.full = T, True
    times = []
    for _ in range(repeats):
        buf.generator_ready = False
        # train() reshapes the buffer in place on first get(); restore shapes each repeat
        for name in ("observations", "actions", "log_probs", "values", "rewards", "advantages", "returns"):
            arr = getattr(buf, name)
            if arr.shape[0] != T:
                setattr(buf, name, arr.reshape(N, T, *arr.shape[1:]).swapaxes(0, 1).copy()
                        if arr.ndim > 1 else arr)
        _sync(device)
        t = time.perf_counter()
        model.train()
        _sync(device)
        times.append(time.perf_counter() - t)
    env.close()
    return min(times)


def bench_ours(case, device, repeats):
    from trainers.ppo.algorithm import PPO
    from trainers.ppo.config import AlgoConfig, PolicyConfig
    from trainers.ppo.models import ActorCritic, EmpiricalNormalizer
    from trainers.ppo.storage import RolloutStorage

    N, T, epochs, mb, hidden, act, obs_dim, act_dim = case
    dev = torch.device(device)
    pcfg = PolicyConfig(actor_hidden=hidden, critic_hidden=hidden, activation=act)
    acfg = AlgoConfig(num_steps=T, num_epochs=epochs, num_minibatches=(N * T) // mb, learning_rate=3e-4,
                      schedule="fixed", max_grad_norm=1.0)
    torch.manual_seed(0)
    policy = ActorCritic(obs_dim, obs_dim, act_dim, pcfg).to(dev)
    algo = PPO(policy, EmpiricalNormalizer(obs_dim).to(dev), None, acfg, dev)
    st = RolloutStorage(T, N, obs_dim, None, act_dim, dev)
    d = _data(N, T, obs_dim, act_dim)
    st.obs.copy_(torch.from_numpy(d["obs"]))
    st.actions.copy_(torch.from_numpy(d["actions"]))
    st.action_means.copy_(torch.from_numpy(d["actions"]) * 0.5)
    st.log_probs.copy_(torch.from_numpy(d["log_probs"]))
    st.values.copy_(torch.from_numpy(d["values"]))
    st.rewards.copy_(torch.from_numpy(d["rewards"]))
    gen = torch.Generator(device=dev).manual_seed(0)
    times = []
    for _ in range(repeats):
        _sync(device)
        t = time.perf_counter()
        algo.update(st, gen)
        _sync(device)
        times.append(time.perf_counter() - t)
    return min(times)


def _sync(device):
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", action="append", help="cpu / cuda (repeatable; default cpu, plus cuda if present)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--case", action="append", choices=list(CASES), help="subset of cases")
    args = p.parse_args(argv)
    devices = args.device or (["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"])
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"{'case':<44} {'device':<6} {'SB3 s':>8} {'ours s':>8} {'speedup':>8}")
    rows = []
    for dev in devices:
        for name in args.case or CASES:
            sb3 = bench_sb3(CASES[name], dev, args.repeats)
            ours = bench_ours(CASES[name], dev, args.repeats)
            rows.append((name, dev, sb3, ours))
            print(f"{name:<44} {dev:<6} {sb3:8.3f} {ours:8.3f} {sb3 / ours:7.1f}x", flush=True)
    return rows


if __name__ == "__main__":
    main()
