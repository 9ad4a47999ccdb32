"""SB3 PPO / SAC / TD3 run through the adapter on Go1, with VecMonitor + VecNormalize on top."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3 import PPO, SAC, TD3
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

import unilab_envs  # noqa: F401
from trainers.sb3 import SB3VecEnv
from trainers.sb3.callbacks import RewardTermsCallback, find_adapter
from trainers.sb3.env import make_batched_env, make_sb3_env
from trainers.sb3.noise import BatchedNormalActionNoise

TASK = "UniLab/Go1Joystick-v0"
N, LIMIT, MAX_TILT = 8, 10, 0.3


def _small():
    return {"policy_kwargs": {"net_arch": [32, 32]}}  # fresh: SB3 mutates policy_kwargs


class FlagTap(gym.vector.VectorWrapper):
    """Keeps a copy of the env's own terminated / truncated flags at every step."""

    def __init__(self, env):
        super().__init__(env)
        self.flags = []

    def step(self, actions):
        obs, reward, terminated, truncated, info = self.env.step(actions)
        self.flags.append((terminated.copy(), truncated.copy()))
        return obs, reward, terminated, truncated, info


class InfoTap(BaseCallback):
    """Keeps what SB3 saw at every step: ``dones`` and the list of info dicts."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def _on_step(self) -> bool:
        self.seen.append((self.locals["dones"].copy(), self.locals["infos"]))
        return True


def _go1(seed=0):
    """Batched Go1 with both kinds of episode end: its first reset spreads episode counters
    over the limit, so rows time out one by one, and a tight tilt limit makes rows "fall"."""
    return make_batched_env(TASK, N, seed=seed, max_episode_steps=LIMIT, num_threads=1, max_tilt=MAX_TILT)


def _env(venv):
    return VecNormalize(VecMonitor(SB3VecEnv(venv, episode_stats=False)), gamma=0.99)


def _check_time_outs(flags, seen, model):
    """At every step ``TimeLimit.truncated`` is True for exactly the rows the env truncated
    (and did not terminate), which are the rows whose episode reached ``LIMIT`` steps; every
    done row carries its ``terminal_observation``; an off-policy replay buffer's
    ``timeouts`` are those same rows."""
    assert len(flags) == len(seen) > 0
    expected, counted = [], 0
    length = np.full(N, -1)  # steps into the row's episode; unknown (-1) until its first episode ends
    for t, ((terminated, truncated), (dones, infos)) in enumerate(zip(flags, seen)):
        timeout = truncated & ~terminated
        known = length >= 0
        length[known] += 1
        np.testing.assert_array_equal(timeout[known], ((length == LIMIT) & ~terminated)[known], err_msg=f"step {t}")
        counted += int(timeout[known].sum())
        length[dones] = 0
        np.testing.assert_array_equal(dones, terminated | truncated, err_msg=f"step {t}")
        flagged = np.array([info.get("TimeLimit.truncated", False) is True for info in infos])
        np.testing.assert_array_equal(flagged, timeout, err_msg=f"step {t}")
        for i in np.flatnonzero(dones):
            assert infos[i]["terminal_observation"].shape == model.observation_space.shape, (t, i)
        expected.append(timeout)
    expected = np.array(expected)
    terminated = np.array([term for term, _ in flags])
    assert terminated.any(), "no falls: time-outs are not told apart from terminations"
    assert counted > 0, "no time-out of an episode whose length the test counted"
    assert any(row.any() and not row.all() for row in expected), "rows timed out together: 'exactly' says nothing"
    if hasattr(model, "replay_buffer"):
        np.testing.assert_array_equal(model.replay_buffer.timeouts[:len(expected)], expected.astype(np.float32))


ALGOS = {
    "ppo": (PPO, {"n_steps": 16, "batch_size": 32, "n_epochs": 1}),
    "sac": (SAC, {"learning_starts": 16 * N, "batch_size": 32, "buffer_size": 2000, "train_freq": 4, "gradient_steps": 1}),
    "td3": (TD3, {"learning_starts": 16 * N, "batch_size": 32, "buffer_size": 2000, "train_freq": 4, "gradient_steps": 1,
                  "action_noise": BatchedNormalActionNoise(N, 12, 0.1, seed=0)}),
}


@pytest.mark.parametrize("name", sorted(ALGOS))
def test_algo_runs_and_vecnormalize_roundtrips(name, tmp_path):
    cls, kwargs = ALGOS[name]
    tap = FlagTap(_go1())
    env = _env(tap)
    infos = InfoTap()
    model = cls("MlpPolicy", env, seed=0, device="cpu", verbose=0, **_small(), **kwargs)
    model.learn(total_timesteps=32 * N, callback=[RewardTermsCallback(), infos])
    assert model.num_timesteps >= 32 * N
    assert len(model.ep_info_buffer) > 0  # episodes ended (falls or the time limit) and were counted
    assert find_adapter(env) is not None
    _check_time_outs(tap.flags, infos.seen, model)  # time-outs (and the replay buffer's) from TimeLimit.truncated

    model.save(tmp_path / "model.zip")
    env.save(tmp_path / "vecnormalize.pkl")
    fresh = VecNormalize.load(tmp_path / "vecnormalize.pkl", _env(_go1(seed=1)))
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

    env = make_sb3_env(TASK, N, seed=0, normalize=True, num_threads=1)
    model = PPO("MlpPolicy", env, n_steps=8, batch_size=32, n_epochs=1, device="cpu", seed=0, **_small())
    model.set_logger(configure(str(tmp_path), ["csv"]))
    model.learn(total_timesteps=64, callback=RewardTermsCallback())
    header = (tmp_path / "progress.csv").read_text().splitlines()[0].split(",")
    terms = [h for h in header if h.startswith("reward/")]
    assert terms and all(t.split("/", 1)[1] for t in terms), header
    env.close()
