"""Collection: both autoreset modes, final-observation bootstrap, privileged critic, foreign envs."""

import copy

import gymnasium as gym
import numpy as np
import pytest
import torch
from tests.trainers.conftest import PointReach

from trainers.ppo.collector import Collector
from trainers.ppo.config import AlgoConfig, PolicyConfig, TrainConfig
from trainers.ppo.envs import env_dims
from trainers.ppo.runner import build_learner
from trainers.ppo.storage import RolloutStorage


def _setup(env, T=12, seed=0):
    cfg = TrainConfig(num_envs=env.num_envs, algo=AlgoConfig(num_steps=T, num_minibatches=1),
                      policy=PolicyConfig(actor_hidden=(8,), critic_hidden=(8,)))
    dims = env_dims(env)
    algo = build_learner(dims, cfg, torch.device("cpu"))
    gen = torch.Generator().manual_seed(seed)
    storage = RolloutStorage(T, env.num_envs, dims.obs, dims.privileged, dims.act, "cpu")
    col = Collector(env, algo, torch.device("cpu"), gen, privileged=dims.privileged is not None)
    col.reset(seed=seed)
    return col, storage, algo


class Recorder(gym.vector.VectorWrapper):
    """Keeps copies of every step's info (to check what the collector did with it)."""

    def __init__(self, env):
        super().__init__(env)
        self.infos = []

    def step(self, actions):
        out = self.env.step(actions)
        self.infos.append(copy.deepcopy(out[4]))
        return out

    @property
    def privileged_observation_space(self):
        return self.env.privileged_observation_space


def test_same_step_bootstraps_truncation_from_final_privileged_obs():
    env = Recorder(PointReach(4, max_episode_steps=5, seed=1))
    col, storage, algo = _setup(env)
    critic_norm = copy.deepcopy(algo.critic_normalizer)  # the stats in force during collection
    col.collect(storage)
    assert storage.mask.eq(1).all() and not storage.has_masked_rows
    trunc = storage.truncated & ~storage.terminated
    assert trunc.any()
    for t, i in trunc.nonzero().tolist():
        info = env.infos[t]  # the critic reads the final policy obs followed by the final privileged obs
        final = torch.as_tensor(np.concatenate([info["final_obs"][i:i + 1], info["final_privileged_obs"][i:i + 1]], axis=1))
        expected = algo.policy.value(critic_norm(final))
        assert storage.final_values[t, i].item() == pytest.approx(expected.item(), abs=1e-6)
    assert storage.final_values[~trunc].eq(0).all()
    assert storage.critic_obs is not None and storage.critic_obs.shape == (12, 4, 4 + 3)


def test_next_step_masks_reset_steps_and_bootstraps_from_returned_final_obs():
    env = PointReach(4, max_episode_steps=5, seed=1, autoreset_mode=gym.vector.AutoresetMode.NEXT_STEP)
    col, storage, _ = _setup(env)
    stats = col.collect(storage)
    done = storage.terminated | storage.truncated
    assert storage.has_masked_rows
    T = storage.num_steps
    for t, i in done.nonzero().tolist():
        if t + 1 < T:
            assert storage.mask[t + 1, i] == 0  # the reset step is not a transition
            if storage.truncated[t, i] and not storage.terminated[t, i]:
                # NEXT_STEP returns the final obs; its value is the next row's value
                assert storage.final_values[t, i] == storage.values[t + 1, i]
    assert storage.mask.sum() == T * 4 - sum(1 for t, i in done.nonzero().tolist() if t + 1 < T)
    # episode bookkeeping ignores reset steps: truncated episodes last exactly 5 steps
    lengths = np.array(col.episodes.lengths)
    term = np.array(col.episodes.terminated)
    assert (lengths[~term] == 5).all() and stats["episode/finished"] == len(lengths)


def test_gymnasium_sync_env_object_final_obs_and_reward_terms_absent():
    env = gym.vector.SyncVectorEnv([lambda: gym.make("Pendulum-v1", max_episode_steps=5)] * 3,
                                   autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
    col, storage, algo = _setup(env)
    stats = col.collect(storage)
    assert storage.truncated.sum() == 2 * 3  # steps 5 and 10
    assert storage.final_values[storage.truncated].ne(0).all()
    assert storage.critic_obs is None
    assert stats["episode/length"] == 5 and "reward/total" in stats
    env.close()


def test_reward_terms_are_per_step_means_that_sum_to_total():
    env = PointReach(4, max_episode_steps=5, seed=1)
    col, storage, _ = _setup(env)
    stats = col.collect(storage)
    assert stats["reward/distance"] + stats["reward/action"] == pytest.approx(stats["reward/total"], rel=1e-5)
    assert stats["reward/total"] == pytest.approx(storage.rewards.mean().item(), rel=1e-5)


def test_actions_are_clipped_for_the_env_but_stored_unclipped():
    env = PointReach(64, seed=1)  # asserts |action| <= 1 inside step
    col, storage, algo = _setup(env)
    with torch.no_grad():
        algo.policy.log_std.fill_(1.0)  # std e: many samples outside [-1, 1]
    col.collect(storage)
    assert storage.actions.abs().max() > 1.0


def test_normalizer_tracks_observation_statistics():
    env = PointReach(64, seed=2)
    col, storage, algo = _setup(env, T=50)
    algo.update_normalizers(*col.initial_moments())
    col.collect(storage)
    norm = algo.obs_normalizer
    assert norm.count.item() == 64 * 51
    # positions and goals are roughly uniform in [-1, 1] (variance ~1/3)
    assert torch.allclose(norm.var[2:].float(), torch.full((2,), 1 / 3), atol=0.06)


def _two_half_rollout(make_half, n_half: int, overlap: bool, T: int = 12, seed: int = 4):
    envs = [make_half(), make_half()]
    try:
        dims = env_dims(envs[0])
        cfg = TrainConfig(num_envs=2 * n_half, algo=AlgoConfig(num_steps=T, num_minibatches=1),
                          policy=PolicyConfig(actor_hidden=(8,), critic_hidden=(8,)))
        algo = build_learner(dims, cfg, torch.device("cpu"))
        gen = torch.Generator().manual_seed(seed)
        storage = RolloutStorage(T, 2 * n_half, dims.obs, dims.privileged, dims.act, "cpu")
        col = Collector(envs, algo, torch.device("cpu"), gen, privileged=dims.privileged is not None, overlap=overlap)
        col.reset(seed=seed)
        stats = [col.collect(storage) for _ in range(2)][-1]
        col.close()
        fields = ("obs", "critic_obs", "actions", "log_probs", "values", "rewards", "terminated", "truncated",
                  "final_values", "mask", "last_values")
        return {k: getattr(storage, k).clone() for k in fields if getattr(storage, k) is not None}, stats, col
    finally:
        for e in envs:
            e.close()


@pytest.mark.parametrize("mode", [gym.vector.AutoresetMode.SAME_STEP, gym.vector.AutoresetMode.NEXT_STEP])
def test_overlapped_halves_collect_exactly_what_sequential_halves_collect(mode):
    make = lambda: PointReach(4, max_episode_steps=5, seed=1, autoreset_mode=mode)  # noqa: E731
    seq, seq_stats, _ = _two_half_rollout(make, 4, overlap=False)
    ovl, ovl_stats, col = _two_half_rollout(make, 4, overlap=True)
    for k in seq:
        assert torch.equal(seq[k], ovl[k]), k
    assert seq_stats == pytest.approx(ovl_stats, nan_ok=True)
    assert (seq["terminated"] | seq["truncated"]).any()  # episodes ended inside the rollout
    assert col.obs.shape == (8, 4) and col.pending.shape == (8,)


def test_overlapped_go1_halves_match_sequential():
    from trainers.ppo.envs import make_vec_env

    make = lambda: make_vec_env("UniLab/Go1Joystick-v0", 4)  # noqa: E731
    seq, _, _ = _two_half_rollout(make, 4, overlap=False, T=6)
    ovl, _, _ = _two_half_rollout(make, 4, overlap=True, T=6)
    for k in seq:
        assert torch.equal(seq[k], ovl[k]), k


def test_halves_keep_the_seeds_of_the_full_env():
    """Env rows of two halves get the seeds of the same rows of one full env: same first observations."""
    from trainers.ppo.envs import make_vec_env

    full = make_vec_env("UniLab/Go1Joystick-v0", 6)
    halves = [make_vec_env("UniLab/Go1Joystick-v0", 3), make_vec_env("UniLab/Go1Joystick-v0", 3)]
    try:
        full_col, _, algo = _setup(full, seed=9)
        col = Collector(halves, algo, torch.device("cpu"), torch.Generator(), privileged=True)
        col.reset(seed=9)
        assert torch.equal(full_col.obs, col.obs) and torch.equal(full_col.critic_obs, col.critic_obs)
    finally:
        for e in (full, *halves):
            e.close()


def test_overlap_needs_two_envs():
    env = PointReach(4)
    cfg = TrainConfig(num_envs=4, policy=PolicyConfig(actor_hidden=(8,), critic_hidden=(8,)))
    algo = build_learner(env_dims(env), cfg, torch.device("cpu"))
    with pytest.raises(ValueError, match="two envs"):
        Collector(env, algo, torch.device("cpu"), torch.Generator(), privileged=True, overlap=True)
