"""Latency: the executed action / seen observation is exactly the one of k steps earlier,
within the same episode, across autoresets, in both autoreset modes."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from tests.wrappers.conftest import MODES, Tap, make_go1
from wrappers import ActionLatency, ObservationLatency

N, A = 6, 12


def _episode_starts(mode, step, done_prev, done_prev2, starts):
    """Update each row's index of the first action of its current episode."""
    if mode is AutoresetMode.SAME_STEP:
        starts[done_prev] = step  # reset within the previous step: this action is the first
    else:
        starts[done_prev2] = step  # previous step was the reset step (its action ignored)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("delay", [0, 3, (0, 3)])
def test_action_latency_exact_across_autoresets(mode, delay):
    tap = Tap(make_go1(N, mode=mode, max_episode_steps=7))
    env = ActionLatency(tap, delay=delay)
    env.reset(seed=0)
    task, ctrl = env.unwrapped.task, env.unwrapped.batch.bind("ctrl")
    rng = np.random.default_rng(1)
    sent, starts = [], np.zeros(N, np.int64)
    done_prev, done_prev2 = np.zeros(N, bool), np.zeros(N, bool)
    delays, resets = env.delay.copy(), 0
    seen_delays = set()
    for step in range(40):
        _episode_starts(mode, step, done_prev, done_prev2, starts)
        k = env.delay.copy()
        seen_delays.update(k.tolist())
        a = rng.uniform(-1, 1, (N, A)).astype(np.float32)
        sent.append(a)
        _, _, terminated, truncated, _ = env.step(a)
        done = terminated | truncated
        for i in range(N):
            src = step - k[i]
            expected = sent[src][i] if src >= starts[i] else np.zeros(A, np.float32)
            np.testing.assert_array_equal(tap.actions[i], expected, err_msg=f"step {step} env {i} delay {k[i]}")
        # what the task executed: last_action and ctrl (rows that were not reset in this step)
        live = ~done if mode is AutoresetMode.SAME_STEP else ~(done | done_prev)
        np.testing.assert_array_equal(task.last_action[live], tap.actions[live].astype(np.float64))
        home, scale = task._home, task.config.action_scale
        np.testing.assert_allclose(ctrl[live][:, task.robot.actuator_ids], home + scale * tap.actions[live].astype(np.float64), rtol=0, atol=1e-12)
        resets += int(done.sum())
        done_prev2, done_prev = done_prev, done
    assert resets >= N * 4
    if isinstance(delay, tuple):
        assert seen_delays == {0, 1, 2, 3}  # drawn per env from the whole range
        assert not np.array_equal(env.delay, delays) or len(set(env.delay.tolist())) > 1
    else:
        assert seen_delays == {delay}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("delay", [2, (0, 3)])
def test_observation_latency_exact_across_autoresets(mode, delay):
    tap = Tap(make_go1(N, mode=mode, max_episode_steps=6))
    env = ObservationLatency(tap, delay=delay)
    obs, _ = env.reset(seed=0)
    history = [[tap.obs[i]] for i in range(N)]  # true observations of each row's current episode
    np.testing.assert_array_equal(obs, tap.obs)
    pending = np.zeros(N, bool)
    rng = np.random.default_rng(2)
    finals = 0
    for step in range(30):
        k = env.delay.copy()  # the delay of the episode in progress
        obs, _, terminated, truncated, info = env.step(rng.uniform(-1, 1, (N, A)).astype(np.float32))
        done = terminated | truncated
        for i in range(N):
            if mode is AutoresetMode.SAME_STEP and done[i]:
                history[i].append(tap.final_obs[i])
                np.testing.assert_array_equal(info["final_obs"][i], history[i][max(len(history[i]) - 1 - k[i], 0)])
                history[i] = [tap.obs[i]]
                finals += 1
            elif mode is AutoresetMode.NEXT_STEP and pending[i]:
                history[i] = [tap.obs[i]]
            else:
                history[i].append(tap.obs[i])
            expected = history[i][max(len(history[i]) - 1 - env.delay[i], 0)]
            np.testing.assert_array_equal(obs[i], expected, err_msg=f"step {step} env {i}")
        pending = done
    assert finals or mode is AutoresetMode.NEXT_STEP


def test_observation_latency_of_chosen_groups_only():
    tap = Tap(make_go1(4))
    env = ObservationLatency(tap, delay=1, groups=("gyro",))
    env.reset(seed=0)
    gyro = env.unwrapped.obs_groups["gyro"]
    previous = tap.obs.copy()
    for _ in range(5):
        obs, *_ = env.step(np.zeros((4, A), np.float32))
        np.testing.assert_array_equal(obs[:, gyro], previous[:, gyro])
        rest = np.ones(obs.shape[1], bool)
        rest[gyro] = False
        np.testing.assert_array_equal(obs[:, rest], tap.obs[:, rest])
        previous = tap.obs.copy()
