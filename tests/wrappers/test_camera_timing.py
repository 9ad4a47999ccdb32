"""CameraLatency shifts the depth frames exactly (and nothing else); FrameDrop holds the last delivered frame at its
rate, draws only on new frames and always delivers an episode's first frame."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import unilab_envs  # noqa: F401  (registers UniLab/*)
from tests.wrappers.conftest import MODES, Tap
from wrappers import CameraLatency, FrameDrop

DEPTH = "UniLab/Go1JoystickDepth-v0"


def make_depth(num_envs=8, *, mode=AutoresetMode.SAME_STEP, max_episode_steps=1000, **kwargs):
    kwargs.setdefault("num_threads", 1)
    kwargs.setdefault("spread_episode_starts", False)
    return gym.make_vec(DEPTH, num_envs=num_envs, autoreset_mode=mode, max_episode_steps=max_episode_steps, **kwargs)


def _run(env, tap, steps, seed=0, record=None):
    obs, _ = env.reset(seed=seed)
    clean, out, infos = [tap.obs.copy()], [obs.copy()], [{}]
    rng = np.random.default_rng(1)
    for _ in range(steps):
        obs, _, _, _, info = env.step(rng.uniform(-0.5, 0.5, env.action_space.shape).astype(np.float32))
        clean.append(tap.obs.copy())
        out.append(obs.copy())
        infos.append(info)
    return np.stack(clean), np.stack(out), infos


def test_latency_shifts_the_depth_frames_exactly_and_nothing_else():
    tap = Tap(make_depth(6))
    env = CameraLatency(tap, delay=(0, 3))
    clean, out, _ = _run(env, tap, 12)
    depth = env.unwrapped.obs_groups["depth"]
    np.testing.assert_array_equal(out[:, :, : depth.start], clean[:, :, : depth.start])
    delays = env.delay
    assert len(set(delays.tolist())) > 1
    for i, k in enumerate(delays):
        for t in range(13):
            np.testing.assert_array_equal(out[t, i, depth], clean[max(t - k, 0), i, depth])
    assert not np.array_equal(clean[5, :, depth], clean[4, :, depth])  # the frames do move


@pytest.mark.parametrize("mode", MODES)
def test_latency_restarts_with_each_episode(mode):
    tap = Tap(make_depth(3, mode=mode, max_episode_steps=4))
    env = CameraLatency(tap, delay=2)
    clean, out, infos = _run(env, tap, 10)
    depth = env.unwrapped.obs_groups["depth"]
    start = 0
    for t in range(11):  # every episode begins by showing its own first frame for k steps
        if mode is AutoresetMode.SAME_STEP and t in (4, 8):  # final_obs: the old episode's last frame, delayed
            np.testing.assert_array_equal(infos[t]["final_obs"][:, depth], clean[t - 2, :, depth])
            start = t
        if mode is AutoresetMode.NEXT_STEP and t in (5, 10):
            start = t
        np.testing.assert_array_equal(out[t, :, depth], clean[max(t - 2, start), :, depth])


def test_frame_drops_hold_the_last_delivered_frame_at_their_rate():
    tap = Tap(make_depth(64))
    env = FrameDrop(tap, drop_rate=0.3)
    clean, out, infos = _run(env, tap, 40)
    depth = env.unwrapped.obs_groups["depth"]
    np.testing.assert_array_equal(out[0, :, depth], clean[0, :, depth])  # the first frame always arrives
    dropped = np.stack([info["frame_dropped"] for info in infos[1:]])
    assert abs(dropped.mean() - 0.3) < 0.03
    for t in range(1, 41):
        lost = dropped[t - 1]
        np.testing.assert_array_equal(out[t][lost][:, depth], out[t - 1][lost][:, depth])
        np.testing.assert_array_equal(out[t][~lost][:, depth], clean[t][~lost][:, depth])
        np.testing.assert_array_equal(out[t, :, : depth.start], clean[t, :, : depth.start])


def test_frame_drops_only_on_new_frames_and_never_an_episodes_first():
    tap = Tap(make_depth(32, camera={"update_every": 2}, max_episode_steps=7))
    env = FrameDrop(tap, drop_rate=0.5)
    clean, out, infos = _run(env, tap, 20)
    for t in range(1, 21):
        new_frame = (t - 1) % 2 == 0
        dropped = infos[t]["frame_dropped"]
        if not new_frame:
            assert not dropped.any()
        else:
            assert 0.25 < dropped.mean() < 0.75
    depth = env.unwrapped.obs_groups["depth"]
    for t in (7, 14):  # SAME_STEP: the new episodes' first observations, never dropped
        np.testing.assert_array_equal(out[t, :, depth], clean[t, :, depth])


def test_profile_level_and_errors():
    tap = Tap(make_depth(16))
    env = FrameDrop(tap, drop_rate=0.5)
    env.set_profile_level(0.0)
    clean, out, infos = _run(env, tap, 5)
    np.testing.assert_array_equal(out, clean)
    with pytest.raises(ValueError, match="drop_rate must be a probability"):
        FrameDrop(make_depth(1), drop_rate=-0.1)
    with pytest.raises(ValueError, match="delay must satisfy"):
        CameraLatency(make_depth(1), delay=(2, 1))
    with pytest.raises(ValueError, match="CameraLatency needs a task with a depth camera"):
        CameraLatency(gym.make_vec("UniLab/Go1Joystick-v0", num_envs=1))
