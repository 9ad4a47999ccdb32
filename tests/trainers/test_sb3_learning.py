"""SB3 PPO learns through the adapter: on our batched UniLab/UR5Reach-v0, and on
Gymnasium's CartPole as a SAME_STEP SyncVectorEnv (the Gymnasium path)."""

from __future__ import annotations

import numpy as np
import torch
from stable_baselines3 import PPO

import unilab_envs  # noqa: F401
from trainers.sb3.env import make_sb3_env


def test_ppo_learns_cartpole_through_adapter():
    """Mean training return of the stochastic policy: the first 2k steps vs the last."""
    torch.set_num_threads(1)
    env = make_sb3_env("CartPole-v1", 8, seed=0)
    model = PPO("MlpPolicy", env, n_steps=128, batch_size=256, n_epochs=4, learning_rate=1e-3, gae_lambda=0.9,
                gamma=0.98, ent_coef=0.0, seed=0, device="cpu", policy_kwargs={"net_arch": [64, 64]})
    model.learn(total_timesteps=2048)
    early = float(np.mean([ep["r"] for ep in model.ep_info_buffer]))
    model.learn(total_timesteps=25_000, reset_num_timesteps=False)
    late = float(np.mean([ep["r"] for ep in model.ep_info_buffer]))
    assert late >= max(4 * early, 120), (early, late)  # measured: 24 -> 171


UR5 = "UniLab/UR5Reach-v0"


def test_ppo_learns_ur5_reach_through_adapter():
    """SB3 PPO on our batched UR5Reach (64 envs, VecNormalize), ~60k env steps, ~20 s
    on 2 idle cores. Measured: mean training return -1.1 -> 2.2 (-> 3.6 at 90k)."""
    torch.set_num_threads(1)
    env = make_sb3_env(UR5, 64, seed=0, normalize={"gamma": 0.97})
    model = PPO("MlpPolicy", env, n_steps=32, batch_size=512, n_epochs=5, learning_rate=1e-3, gamma=0.97,
                seed=0, device="cpu", policy_kwargs={"net_arch": [128, 128]})
    model.learn(total_timesteps=64 * 32 * 2)
    early = float(np.mean([ep["r"] for ep in model.ep_info_buffer]))
    model.learn(total_timesteps=57_344, reset_num_timesteps=False)
    late = float(np.mean([ep["r"] for ep in model.ep_info_buffer]))
    assert late > early + 1.5, (early, late)
