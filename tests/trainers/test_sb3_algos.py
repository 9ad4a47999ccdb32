"""SB3 PPO / SAC / TD3 run through the adapter with VecMonitor + VecNormalize on top."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3 import PPO, SAC, TD3
from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

import unilab_envs  # noqa: F401
from trainers.sb3 import SB3VecEnv
from trainers.sb3.callbacks import RewardTermsCallback, find_adapter
from trainers.sb3.env import make_batched_env, make_sb3_env
from trainers.sb3.noise import BatchedNormalActionNoise
from trainers.sb3.testing import register_toy

GO1 = "UniLab/Go1Joystick-v0"
TASK = GO1 if GO1 in gym.registry else register_toy()
N = 4


def _small():
    return {"policy_kwargs": {"net_arch": [32, 32]}}  # fresh: SB3 mutates policy_kwargs


def _env(seed=0):
    venv = make_batched_env(TASK, N, seed=seed, max_episode_steps=40, num_threads=1) if TASK == GO1 else \
        make_batched_env(TASK, N, seed=seed, max_episode_steps=40)
    return VecNormalize(VecMonitor(SB3VecEnv(venv, episode_stats=False)), gamma=0.99)


ALGOS = {
    "ppo": (PPO, {"n_steps": 16, "batch_size": 32, "n_epochs": 1}),
    "sac": (SAC, {"learning_starts": 32, "batch_size": 32, "buffer_size": 2000, "train_freq": 4, "gradient_steps": 1}),
    "td3": (TD3, {"learning_starts": 32, "batch_size": 32, "buffer_size": 2000, "train_freq": 4, "gradient_steps": 1,
                  "action_noise": BatchedNormalActionNoise(N, 12 if TASK == GO1 else 2, 0.1, seed=0)}),
}


@pytest.mark.parametrize("name", sorted(ALGOS))
def test_algo_runs_and_vecnormalize_roundtrips(name, tmp_path):
    cls, kwargs = ALGOS[name]
    env = _env()
    model = cls("MlpPolicy", env, seed=0, device="cpu", verbose=0, **_small(), **kwargs)
    model.learn(total_timesteps=160 if name == "ppo" else 128, callback=RewardTermsCallback())
    assert model.num_timesteps >= 128
    assert len(model.ep_info_buffer) > 0  # episodes ended (falls or the 40-step limit) and were counted
    assert find_adapter(env) is not None
    if name != "ppo":  # replay buffer timeouts come from TimeLimit.truncated
        assert model.replay_buffer.timeouts.dtype == np.float32

    model.save(tmp_path / "model.zip")
    env.save(tmp_path / "vecnormalize.pkl")
    fresh = VecNormalize.load(tmp_path / "vecnormalize.pkl", _env(seed=1))
    np.testing.assert_array_equal(fresh.obs_rms.mean, env.obs_rms.mean)
    np.testing.assert_array_equal(fresh.obs_rms.var, env.obs_rms.var)
    assert fresh.obs_rms.count == env.obs_rms.count and fresh.ret_rms.count == env.ret_rms.count
    fresh.training, fresh.norm_reward = False, False
    loaded = cls.load(tmp_path / "model.zip", env=fresh, device="cpu")
    obs = fresh.reset()
    np.testing.assert_allclose(loaded.predict(obs, deterministic=True)[0], model.predict(obs, deterministic=True)[0],
                               atol=1e-6)
    fresh.close()
    env.close()


def test_reward_terms_reach_the_logger(tmp_path):
    from stable_baselines3.common.logger import configure

    env = make_sb3_env(TASK, N, seed=0, normalize=True, **({"num_threads": 1} if TASK == GO1 else {}))
    model = PPO("MlpPolicy", env, n_steps=8, batch_size=32, n_epochs=1, device="cpu", seed=0, **_small())
    model.set_logger(configure(str(tmp_path), ["csv"]))
    model.learn(total_timesteps=64, callback=RewardTermsCallback())
    header = (tmp_path / "progress.csv").read_text().splitlines()[0].split(",")
    terms = [h for h in header if h.startswith("reward/")]
    assert terms and all(t.split("/", 1)[1] for t in terms), header
    env.close()
