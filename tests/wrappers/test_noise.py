"""Observation noise, IMU bias drift and action noise: measured statistics match the config."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.wrappers.conftest import Tap, columns, make_go1
from wrappers import ActionNoise, ImuBiasDrift, ObservationNoise


def _noise_samples(wrapper_kwargs, steps=60, num_envs=16):
    tap = Tap(make_go1(num_envs))
    env = ObservationNoise(tap, **wrapper_kwargs)
    obs, _ = env.reset(seed=1)
    out, true = [obs - tap.obs], [tap.obs]
    zero = np.zeros((num_envs, 12), np.float32)
    for _ in range(steps):
        obs, *_ = env.step(zero)
        out.append(obs - tap.obs)
        true.append(tap.obs)
    return env, np.stack(out), np.stack(true)


@pytest.mark.parametrize("distribution", ["gaussian", "uniform"])
def test_additive_noise_std_per_group_and_exact_elsewhere(distribution):
    scales = {"gyro": 0.2, "joint_vel": 1.5, "gravity": 0.05}
    env, noise, _ = _noise_samples({"scales": scales, "distribution": distribution})
    factor = 1.0 if distribution == "gaussian" else 1.0 / math.sqrt(3.0)  # std of U(-s, s) is s / sqrt(3)
    for group, scale in scales.items():
        x = noise[..., columns(env, group)].ravel()
        assert abs(x.std() / (scale * factor) - 1.0) < 0.05, (group, x.std())
        assert abs(x.mean()) < 0.05 * scale
        if distribution == "uniform":
            assert np.abs(x).max() <= scale * (1 + 1e-6)
    untouched = np.setdiff1d(np.arange(noise.shape[-1]), columns(env, *scales))
    assert np.all(noise[..., untouched] == 0.0)


def test_multiplicative_noise_is_relative():
    env, noise, true = _noise_samples({"scales": {"joint_pos": 0.1}, "mode": "multiplicative"})
    cols = columns(env, "joint_pos")
    x, t = noise[..., cols].ravel(), true[..., cols].ravel()
    keep = np.abs(t) > 1e-3
    relative = x[keep] / t[keep]
    assert abs(relative.std() / 0.1 - 1.0) < 0.06


def test_final_obs_is_perturbed_in_same_step_mode():
    tap = Tap(make_go1(8, max_episode_steps=5))
    env = ObservationNoise(tap, scales={"gyro": 0.5})
    env.reset(seed=0)
    for _ in range(5):
        obs, _, terminated, truncated, info = env.step(np.zeros((8, 12), np.float32))
    done = terminated | truncated
    assert done.all() and info["_final_obs"].all()
    diff = info["final_obs"] - tap.final_obs
    assert np.all(diff[:, columns(env, "gyro")] != 0) and np.all(diff[:, columns(env, "joint_pos")] == 0)
    assert not np.array_equal(info["final_obs"], obs)


def test_a_level_range_scales_each_episode_by_its_own_draw():
    """level=(low, high): per env and episode a multiplier from the range; each env's noise std is
    its multiplier times the scale, and a fixed level draws no multiplier (env_level stays 1)."""
    env, noise, _ = _noise_samples({"scales": {"joint_vel": 1.0}, "level": (0.0, 1.0)}, steps=400, num_envs=32)
    level = env.env_level.copy()  # max_episode_steps 1000: every env is still in its first episode
    assert level.min() >= 0.0 and level.max() <= 1.0 and level.std() > 0.1
    measured = noise[..., columns(env, "joint_vel")].std(axis=(0, 2))
    np.testing.assert_allclose(measured, level, rtol=0.08, atol=0.01)
    assert env.critic_groups()["obs_noise_level"].shape == (32, 1)
    fixed, _, _ = _noise_samples({"scales": {"joint_vel": 1.0}, "level": 0.5}, steps=1)
    assert np.all(fixed.env_level == 1.0) and fixed.critic_groups() == {}


def test_a_level_range_is_redrawn_at_every_episode_start():
    tap = Tap(make_go1(64, max_episode_steps=3))
    env = ObservationNoise(tap, scales={"gyro": 0.2}, level=(0.0, 1.0))
    env.reset(seed=0)
    first = env.env_level.copy()
    for _ in range(3):
        env.step(np.zeros((64, 12), np.float32))
    assert not np.any(env.env_level == first)  # every env timed out and drew again


@pytest.mark.parametrize("level", [(-0.1, 1.0), (1.0, 0.5), (0.0, float("nan"))])
def test_a_bad_level_range_is_refused(level):
    with pytest.raises(ValueError, match="level"):
        ObservationNoise(make_go1(2), scales={"gyro": 0.2}, level=level)


def test_imu_bias_variance_grows_linearly_at_the_configured_rate():
    """Var(bias) = bias_std**2 + drift_std**2 * t, measured over envs x gyro axes."""
    n, steps, bias_std, drift_std = 128, 150, 0.1, 0.3
    tap = Tap(make_go1(n))
    env = ImuBiasDrift(tap, bias_std={"gyro": bias_std}, drift_std={"gyro": drift_std})
    cols = columns(env, "gyro")
    obs, _ = env.reset(seed=3)
    zero = np.zeros((n, 12), np.float32)
    var, times = [], []
    for k in range(steps):
        obs, _, terminated, truncated, _ = env.step(zero)
        assert not (terminated | truncated).any()
        bias = (obs - tap.obs)[:, cols]
        np.testing.assert_allclose(bias, env.bias, atol=1e-5)  # the observed offset is the bias
        times.append((k + 1) * env.dt)
        var.append(bias.var())
    slope, intercept = np.polyfit(times, var, 1)
    assert abs(slope / drift_std**2 - 1.0) < 0.15, slope
    assert abs(intercept - bias_std**2) < 0.5 * bias_std**2 + 0.1 * drift_std**2, intercept
    # linear, not faster or slower: the second half grows as fast as the first
    half = steps // 2
    early = np.polyfit(times[:half], var[:half], 1)[0]
    late = np.polyfit(times[half:], var[half:], 1)[0]
    assert 0.6 < late / early < 1.6


def test_imu_bias_is_redrawn_each_episode_and_gravity_untouched():
    tap = Tap(make_go1(64, max_episode_steps=3))
    env = ImuBiasDrift(tap, bias_std={"gyro": 0.1}, drift_std={})
    env.reset(seed=0)
    zero = np.zeros((64, 12), np.float32)
    first = env.bias.copy()
    for _ in range(2):
        obs, *_ = env.step(zero)
        np.testing.assert_array_equal(env.bias, first)  # no drift configured
    obs, _, _, truncated, info = env.step(zero)
    assert truncated.all()
    np.testing.assert_allclose((info["final_obs"] - tap.final_obs)[:, columns(env, "gyro")], first, atol=1e-6)
    assert not np.allclose(env.bias, first)
    assert abs(env.bias.std() / 0.1 - 1) < 0.15
    assert np.all((obs - tap.obs)[:, columns(env, "gravity")] == 0)


def test_action_noise_std():
    n = 16
    tap = Tap(make_go1(n))
    env = ActionNoise(tap, std=0.05, clip=False)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    diffs = []
    for _ in range(60):
        a = rng.uniform(-0.5, 0.5, (n, 12)).astype(np.float32)
        env.step(a)
        diffs.append(tap.actions - a)
    d = np.stack(diffs)
    assert abs(d.std() / 0.05 - 1) < 0.05 and abs(d.mean()) < 0.005
