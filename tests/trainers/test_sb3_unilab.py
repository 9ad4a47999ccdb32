"""SB3VecEnv on a real UniLab task: terminal data equals the single env's last step."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import unilab_envs  # noqa: F401  (registers UniLab/*)
from trainers.sb3 import SB3VecEnv

TASK = "UniLab/Go1Joystick-v0"
N, SEED = 3, 5


def _pair(mode, max_steps):
    venv = gym.make_vec(TASK, num_envs=N, max_episode_steps=max_steps, autoreset_mode=mode,
                        spread_episode_starts=False, num_threads=1)
    env = SB3VecEnv(venv)
    env.seed(SEED)
    singles = [gym.make(TASK, max_episode_steps=max_steps) for _ in range(N)]
    first = env.reset()
    for i, s in enumerate(singles):
        np.testing.assert_array_equal(s.reset(seed=SEED + i)[0], first[i])
    return env, singles


def _step_both(env, singles, actions):
    obs, rew, dones, infos = env.step(actions)
    ref = [s.step(actions[i]) for i, s in enumerate(singles)]
    return obs, rew, dones, infos, ref


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP])
def test_truncation_matches_single_env(mode):
    T = 12
    env, singles = _pair(mode, T)
    zero = np.zeros((N, env.action_space.shape[0]), np.float32)
    for t in range(T):
        obs, rew, dones, infos, ref = _step_both(env, singles, zero)
        for i in range(N):
            s_obs, s_rew, s_term, s_trunc, _ = ref[i]
            assert bool(dones[i]) == (s_term or s_trunc)
            assert rew[i] == pytest.approx(s_rew, abs=1e-6)
            if not dones[i]:
                np.testing.assert_array_equal(obs[i], s_obs)
    assert dones.all()
    for i in range(N):
        s_obs, _, s_term, s_trunc, _ = ref[i]
        assert s_trunc and not s_term
        np.testing.assert_array_equal(infos[i]["terminal_observation"], s_obs)
        assert infos[i]["TimeLimit.truncated"] is True
        assert infos[i]["episode"]["l"] == T


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP])
def test_fall_is_not_a_timeout(mode):
    env, singles = _pair(mode, 1000)
    rng = np.random.default_rng(0)
    for _ in range(200):
        actions = rng.uniform(-1, 1, (N, env.action_space.shape[0])).astype(np.float32)
        obs, _, dones, infos, ref = _step_both(env, singles, actions)
        if dones.any():
            break
    assert dones.any(), "random actions should make the robot fall within 200 steps"
    for i in np.flatnonzero(dones):
        s_obs, _, s_term, s_trunc, _ = ref[i]
        assert s_term and not s_trunc
        np.testing.assert_array_equal(infos[i]["terminal_observation"], s_obs)
        assert infos[i]["TimeLimit.truncated"] is False


UR5 = "UniLab/UR5Reach-v0"


def test_is_success_reaches_sb3_success_rate():
    """Done rows carry the env's is_success of the terminal step; SB3 turns it into
    rollout/success_rate (ep_success_buffer)."""
    from stable_baselines3 import PPO

    venv = gym.make_vec(UR5, num_envs=4, max_episode_steps=6, num_threads=1, spread_episode_starts=False)
    env = SB3VecEnv(venv)
    env.reset()
    zero = np.zeros((4, env.action_space.shape[0]), np.float32)
    for _ in range(6):
        _, _, dones, infos = env.step(zero)
    assert dones.all()
    assert all(isinstance(infos[i]["is_success"], bool) for i in range(4))
    model = PPO("MlpPolicy", env, n_steps=8, batch_size=32, n_epochs=1, device="cpu", seed=0)
    model.learn(total_timesteps=32)
    assert len(model.ep_success_buffer) > 0
