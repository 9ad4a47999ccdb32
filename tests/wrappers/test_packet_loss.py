"""Packet loss: loss rates and burst lengths match the channel; lost packets hold the last received value."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from tests.wrappers.conftest import MODES, Tap, make_go1
from wrappers import ChannelConfig, PacketLoss

N, A, T = 64, 12, 300


def _bursts(lost: np.ndarray) -> np.ndarray:
    """Lengths of the completed runs of True along axis 0, for every column."""
    lengths = []
    for column in lost.T:
        padded = np.concatenate([[False], column, [False]]).astype(np.int8)
        edges = np.diff(padded)
        starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
        keep = (starts > 0) & (ends < column.size)  # drop runs cut by the window
        lengths.append((ends - starts)[keep])
    return np.concatenate(lengths)


def _run(observations, actions, steps=T):
    tap = Tap(make_go1(N))
    env = PacketLoss(tap, observations=observations, actions=actions)
    obs, info = env.reset(seed=5)
    assert not info["obs_lost"].any() if observations else True
    rng = np.random.default_rng(0)
    obs_lost, act_lost = [], []
    prev_obs, held_action = obs, np.zeros((N, A), np.float32)
    for _ in range(steps):
        a = (0.1 * rng.standard_normal((N, A))).astype(np.float32)
        obs, _, terminated, truncated, info = env.step(a)
        assert not (terminated | truncated).any()
        if observations:
            lost = info["obs_lost"]
            np.testing.assert_array_equal(obs[lost], prev_obs[lost])  # held: the last received
            np.testing.assert_array_equal(obs[~lost], tap.obs[~lost])
            obs_lost.append(lost)
        if actions:
            lost = info["action_lost"]
            held_action = np.where(lost[:, None], held_action, a)
            np.testing.assert_array_equal(tap.actions, held_action)
            act_lost.append(lost)
        prev_obs = obs
    return np.array(obs_lost), np.array(act_lost)


def test_bernoulli_rate_and_bursts_obs_and_actions():
    p = 0.1
    obs_lost, act_lost = _run({"model": "bernoulli", "loss_rate": p}, {"model": "bernoulli", "loss_rate": 0.3})
    assert abs(obs_lost.mean() - p) < 0.01
    assert abs(act_lost.mean() - 0.3) < 0.015
    assert abs(_bursts(obs_lost).mean() - 1 / (1 - p)) < 0.05  # geometric runs
    assert abs(_bursts(act_lost).mean() - 1 / (1 - 0.3)) < 0.08
    # independent across envs and between the two directions
    assert abs(np.corrcoef(obs_lost.ravel(), act_lost.ravel())[0, 1]) < 0.03


def test_gilbert_elliott_rate_and_mean_burst_length():
    cfg = {"model": "gilbert_elliott", "p_good_to_bad": 0.05, "p_bad_to_good": 0.25, "loss_good": 0.0, "loss_bad": 1.0}
    expected_rate = ChannelConfig(**cfg).loss_probability
    assert expected_rate == pytest.approx(0.05 / 0.30)
    obs_lost, _ = _run(cfg, None)
    assert abs(obs_lost.mean() - expected_rate) < 0.02
    bursts = _bursts(obs_lost)
    assert bursts.size > 500
    assert abs(bursts.mean() / (1 / 0.25) - 1) < 0.1  # mean burst = 1 / p_bad_to_good
    # bursty, unlike Bernoulli at the same rate: lag-1 autocorrelation 1 - p_gb - p_bg
    x = obs_lost.astype(float)
    x -= x.mean()
    rho = (x[1:] * x[:-1]).mean() / x.var()
    assert abs(rho - 0.7) < 0.05


def test_gilbert_elliott_lossy_good_state():
    cfg = ChannelConfig(model="gilbert_elliott", p_good_to_bad=0.1, p_bad_to_good=0.3, loss_good=0.05, loss_bad=0.6)
    obs_lost, _ = _run(cfg, None, steps=200)
    assert abs(obs_lost.mean() - cfg.loss_probability) < 0.025


@pytest.mark.parametrize("mode", MODES)
def test_nothing_leaks_across_autoreset(mode):
    """Each episode sends its own action value: the executed action is that value or zeros
    (nothing received yet), never the previous episode's; first observations are delivered."""
    n = 8
    tap = Tap(make_go1(n, mode=mode, max_episode_steps=4))
    env = PacketLoss(tap, observations={"model": "bernoulli", "loss_rate": 0.7}, actions={"model": "bernoulli", "loss_rate": 0.7})
    env.reset(seed=0)
    same_step = mode is AutoresetMode.SAME_STEP
    episode = np.zeros(n, np.int64)
    reset_step = np.zeros(n, bool)  # NEXT_STEP: this step resets the row, its action is ignored
    pending = np.zeros(n, bool)
    zeros_seen = 0
    for _ in range(24):
        value = (0.1 * (episode % 9 + 1)).astype(np.float32)
        obs, _, terminated, truncated, info = env.step(np.repeat(value[:, None], A, axis=1))
        executed = tap.actions[:, 0]
        check = ~reset_step
        assert np.all((executed[check] == 0) | (executed[check] == value[check]))
        zeros_seen += int((executed[check] == 0).sum())
        done = terminated | truncated
        started = done if same_step else pending
        np.testing.assert_array_equal(obs[started], tap.obs[started])
        if not same_step:
            assert not info["obs_lost"][started].any()
        episode += done
        reset_step = done if not same_step else reset_step
        pending = done
    assert zeros_seen > 0 and episode.min() >= 4


def test_invalid_channels():
    env = make_go1(2)
    with pytest.raises(ValueError, match="loss_rate"):
        PacketLoss(env, observations={"model": "bernoulli", "loss_rate": 1.5})
    with pytest.raises(ValueError, match="p_good_to_bad"):
        PacketLoss(env, actions={"model": "gilbert_elliott", "p_good_to_bad": -0.1})
    with pytest.raises(ValueError, match="model"):
        PacketLoss(env, observations={"model": "burst"})
    with pytest.raises(TypeError, match="loss_rte"):
        PacketLoss(env, observations={"loss_rte": 0.1})
    with pytest.raises(ValueError, match="needs"):
        PacketLoss(env)
