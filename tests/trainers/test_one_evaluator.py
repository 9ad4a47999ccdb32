"""One evaluation frame for both trainers (``trainers.common.evaluation``).

The same deterministic policy, saved once as a bundled-PPO checkpoint and once as an SB3 run
(with ``VecNormalize`` statistics), evaluates to identical numbers through ``unilab eval``'s
two paths; and the frame counts the same number of whole episodes from every env, so short
(failed) episodes are not over-weighted by finishing first.
"""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import imageio.v2 as imageio
import numpy as np
import pytest
import torch
import yaml
from gymnasium.vector import AutoresetMode
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import VecNormalize

from tests.trainers.standins import POINT_REACH_ID
from trainers.common.checkpoint import save_checkpoint
from trainers.common.evaluation import episodes_per_env, run_episodes
from trainers.ppo.config import TrainConfig, from_dict, to_dict
from trainers.ppo.envs import env_dims, make_vec_env
from trainers.ppo.evaluate import EvalResult, evaluate
from trainers.ppo.runner import CKPT_FORMAT, CKPT_VERSION, build_learner
from trainers.sb3.env import make_sb3_env
from trainers.sb3.evaluate import evaluate_sb3

GO1 = "UniLab/Go1Joystick-v0"


def _normalizer_stats(dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Non-trivial observation statistics both normalizers apply bit for bit alike: float32-exact
    means and ``var + 1e-8 == 4`` (so both divide by exactly 2)."""
    mean = np.resize([0.5, -0.25, 0.125, 0.0], dim).astype(np.float64)
    var = np.full(dim, 4.0 - 1e-8)
    assert np.all(var + 1e-8 == 4.0)
    return mean, var


def _sb3_run(folder, task: str, num_envs: int) -> PPO:
    """An SB3 PPO run folder (model.zip, VecNormalize statistics, config.yaml) with a
    deterministic policy whose actions reach the action bounds."""
    env = make_sb3_env(task, num_envs)
    model = PPO("MlpPolicy", env, policy_kwargs={"net_arch": [8]}, n_steps=16, batch_size=16, seed=0, device="cpu")
    with torch.no_grad():
        model.policy.action_net.weight.mul_(150.0)  # far from the near-zero initial mean: varied episodes
        model.policy.action_net.bias.copy_(torch.linspace(-0.3, 0.3, model.policy.action_net.bias.numel()))
    folder.mkdir()
    model.save(folder / "model.zip")
    norm = VecNormalize(env, norm_reward=False)
    norm.obs_rms.mean, norm.obs_rms.var = _normalizer_stats(env.observation_space.shape[0])
    norm.save(str(folder / "model_vecnormalize.pkl"))
    env.close()
    (folder / "config.yaml").write_text(yaml.safe_dump({"algo": "sb3-ppo", "task": task, "num_envs": num_envs,
                                                        "env": {}, "sim2real": None}))
    return model


def _ppo_checkpoint(path, task: str, num_envs: int, sb3: PPO):
    """A bundled-PPO checkpoint holding the same policy: SB3's actor weights, the same statistics."""
    cfg = from_dict(TrainConfig, {"task": task, "num_envs": num_envs,
                                  "policy": {"actor_hidden": [8], "critic_hidden": [8], "activation": "tanh"}})
    env = make_vec_env(task, 1)
    dims = env_dims(env)
    env.close()
    learner = build_learner(dims, cfg, torch.device("cpu"))
    hidden, head = sb3.policy.mlp_extractor.policy_net[0], sb3.policy.action_net
    actor, normalizer = learner.policy.actor, learner.obs_normalizer
    with torch.no_grad():
        for ours, theirs in ((actor[0], hidden), (actor[2], head)):
            ours.weight.copy_(theirs.weight)
            ours.bias.copy_(theirs.bias)
        mean, var = _normalizer_stats(dims.obs)
        normalizer.mean.copy_(torch.from_numpy(mean))
        normalizer.var.copy_(torch.from_numpy(var))
    save_checkpoint({"config": to_dict(cfg), "dims": dataclasses.asdict(dims),
                     "algo": {"policy": learner.policy.state_dict(), "obs_normalizer": normalizer.state_dict()}},
                    path, CKPT_FORMAT, CKPT_VERSION)
    return path


@pytest.mark.parametrize("task, env_kwargs", [
    (POINT_REACH_ID, {"max_episode_steps": 12, "arena": 1.2, "success_radius": 0.3}),
    (POINT_REACH_ID, {"max_episode_steps": 12, "arena": 1.2, "success_radius": 0.3,
                      "autoreset_mode": AutoresetMode.NEXT_STEP}),
    (GO1, {"max_episode_steps": 25}),  # spread episode starts, reward terms, the tracking share
], ids=["point-same-step", "point-next-step", "go1"])
def test_the_same_policy_evaluates_identically_as_ppo_and_sb3(tmp_path, task, env_kwargs):
    sb3 = _sb3_run(tmp_path / "sb3", task, num_envs=3)
    ckpt = _ppo_checkpoint(tmp_path / "checkpoint.pt", task, 3, sb3)
    kwargs = dict(episodes=7, num_envs=3, seed=5, env_kwargs=env_kwargs, progress=False)

    ours, theirs = evaluate(ckpt, **kwargs), evaluate_sb3(tmp_path / "sb3", **kwargs)

    assert dataclasses.asdict(ours) == dataclasses.asdict(theirs)
    assert ours.episodes == 3 * episodes_per_env(7, 3) == 9  # whole episodes, the same number from each env
    assert ours.reward_terms and ours.std_return > 0
    if task == GO1:
        assert ours.tracking_share is not None and ours.success_rate is None
    else:  # the policy meets all three endings: successes, falls out of the arena, time-outs
        assert 0 < ours.success_rate < ours.fall_rate < 1


def test_both_paths_film_the_same_episode(tmp_path):
    sb3 = _sb3_run(tmp_path / "sb3", POINT_REACH_ID, num_envs=2)
    ckpt = _ppo_checkpoint(tmp_path / "checkpoint.pt", POINT_REACH_ID, 2, sb3)
    kwargs = dict(episodes=2, num_envs=2, seed=1, env_kwargs={"max_episode_steps": 12}, progress=False)
    ours = evaluate(ckpt, video=tmp_path / "ppo.gif", **kwargs)
    theirs = evaluate_sb3(tmp_path / "sb3", video=tmp_path / "sb3.gif", **kwargs)
    assert (ours.video, theirs.video) == (tmp_path / "ppo.gif", tmp_path / "sb3.gif")
    frames = [np.stack(imageio.mimread(p)) for p in (ours.video, theirs.video)]
    assert len(frames[0]) > 1 and np.array_equal(*frames)


class Scripted(gym.vector.VectorEnv):
    """Env i's episodes last ``lengths[i]`` steps at reward 1 per step (reward term ``"alive"``), end
    terminated (and successful) for even i, truncated for odd i; the first is ``first[i]`` steps (a
    spread start). ``info["steps"]`` counts every env's steps, so tests see which steps count."""

    def __init__(self, lengths, first, autoreset_mode=AutoresetMode.SAME_STEP):
        self.num_envs = len(lengths)
        self.lengths, self.first = np.asarray(lengths), np.asarray(first)
        self.metadata = {"autoreset_mode": autoreset_mode}
        self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, (1,), np.float32)
        self.single_action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.actions: list[np.ndarray] = []

    def reset(self, *, seed=None, options=None):
        self.t = self.lengths - self.first
        self.restart = np.zeros(self.num_envs, bool)
        return np.zeros((self.num_envs, 1), np.float32), {}

    def step(self, actions):
        self.actions.append(actions)
        next_step = self.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
        reward = np.ones(self.num_envs)
        if next_step:  # rows done last step restart now: no reward, not done
            self.t[self.restart] = 0
            reward[self.restart] = 0.0
        self.t += ~self.restart if next_step else 1
        done = (self.t >= self.lengths) & ~(self.restart if next_step else np.zeros(self.num_envs, bool))
        even = np.arange(self.num_envs) % 2 == 0
        term, trunc = done & even, done & ~even
        if next_step:
            self.restart = done
        else:
            self.t[done] = 0
        info = {"is_success": term.copy(), "reward_terms": {"alive": reward.copy()}}
        return np.zeros((self.num_envs, 1), np.float32), reward, term, trunc, info


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP])
def test_each_env_contributes_the_same_number_of_whole_episodes(mode):
    # env 0 fails fast (2 steps, terminated), env 1 survives to its time limit (10 steps);
    # taking the first 4 episodes to finish would count env 0 three or four times
    env = Scripted(lengths=[2, 10], first=[1, 3], autoreset_mode=mode)
    res = run_episodes(env, lambda obs: np.full((2, 1), 5.0), episodes=4, seed=0)
    assert res == EvalResult(episodes=4, mean_return=6.0, std_return=4.0, mean_length=6.0, success_rate=0.5,
                             fall_rate=0.5, video=None, reward_terms={"alive": 1.0})
    assert all(a.dtype == np.float32 and np.all(a == 1.0) for a in env.actions)  # clipped to the action space


def test_without_skip_first_the_first_episodes_count():
    env = Scripted(lengths=[2, 10], first=[1, 3])
    res = run_episodes(env, lambda obs: np.zeros((2, 1)), episodes=2, seed=0, skip_first=False)
    assert (res.episodes, res.mean_length, res.fall_rate) == (2, 2.0, 0.5)  # the partial first ones: 1 and 3 steps


class _Countdown(gym.Env):
    """A single env whose episodes last ``length`` steps; a success (terminated) when ``succeeds``."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)

    def __init__(self, length: int, succeeds: bool):
        self.length, self.succeeds = length, succeeds

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.t += 1
        success = self.t >= self.length and self.succeeds
        timeout = self.t >= self.length and not self.succeeds
        return np.zeros(1, np.float32), 1.0, success, timeout, {"is_success": success}


def test_success_is_read_from_the_final_info_of_a_gymnasium_sync_env():
    # SAME_STEP SyncVectorEnv: a done row's step info is in info["final_info"], info holds the reset's
    env = gym.vector.SyncVectorEnv([lambda: _Countdown(2, True), lambda: _Countdown(3, False)],
                                   autoreset_mode=AutoresetMode.SAME_STEP)
    res = run_episodes(env, lambda obs: np.zeros((2, 1), np.float32), episodes=4, seed=0)
    assert (res.episodes, res.success_rate, res.fall_rate, res.mean_length) == (4, 0.5, 0.5, 2.5)
