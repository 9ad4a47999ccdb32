"""SB3 PPO learns through the adapter.

UR5Reach is not registered yet and Go1 needs far more than a test budget on 2 cores,
so the fast test uses Gymnasium's CartPole as a batched SyncVectorEnv (SAME_STEP).
The ``slow`` test runs PPO on UniLab/Go1Joystick-v0 for a longer budget.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
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


UR5, GO1 = "UniLab/UR5Reach-v0", "UniLab/Go1Joystick-v0"


@pytest.mark.slow
@pytest.mark.skipif(GO1 not in gym.registry, reason="Go1 not registered")
def test_ppo_improves_go1_joystick():
    task = UR5 if UR5 in gym.registry else GO1
    env = make_sb3_env(task, 64, seed=0, normalize={"gamma": 0.97})
    model = PPO("MlpPolicy", env, n_steps=32, batch_size=512, n_epochs=5, learning_rate=3e-4, gamma=0.97,
                seed=0, device="cpu", policy_kwargs={"net_arch": [128, 128]})
    model.learn(total_timesteps=64 * 32)
    early = np.mean([ep["r"] for ep in model.ep_info_buffer])
    model.learn(total_timesteps=300_000, reset_num_timesteps=False)
    late = np.mean([ep["r"] for ep in model.ep_info_buffer])
    assert late > early + 0.5 * abs(early), (early, late)
