"""DepthNoise: the noise std against distance by hand, hole and blob rates, edge dropout only at edges,
held frames keep their noise, final observations, errors."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import unilab_envs  # noqa: F401  (registers UniLab/*)
from tests.wrappers.conftest import Tap
from wrappers import DepthNoise
from wrappers.camera_noise import corrupt_frame

DEPTH = "UniLab/Go1JoystickDepth-v0"


def make_depth(num_envs=8, *, mode=AutoresetMode.SAME_STEP, max_episode_steps=1000, **kwargs):
    kwargs.setdefault("num_threads", 1)
    kwargs.setdefault("spread_episode_starts", False)
    return gym.make_vec(DEPTH, num_envs=num_envs, autoreset_mode=mode, max_episode_steps=max_episode_steps, **kwargs)


def _frames(env, tap, steps, seed=0):
    """(clean, out) depth frames of the reset and ``steps`` steps, ``(steps + 1, N, P)`` each."""
    cols = env.unwrapped.obs_groups["depth"]
    obs, _ = env.reset(seed=seed)
    clean, out = [tap.obs[:, cols]], [obs[:, cols]]
    rng = np.random.default_rng(1)
    for _ in range(steps):
        obs, *_ = env.step(rng.uniform(-0.5, 0.5, env.action_space.shape).astype(np.float32))
        clean.append(tap.obs[:, cols])
        out.append(obs[:, cols])
    return np.stack(clean), np.stack(out)


def test_noise_std_is_floor_plus_quadratic_in_distance():
    a, b = 0.01, 0.05
    tap = Tap(make_depth(32))
    env = DepthNoise(tap, std_floor=a, std_quadratic=b)
    cam = env.unwrapped.task.camera.config
    clean, out = _frames(env, tap, 12)
    clean, out = clean.ravel().astype(np.float64), out.ravel().astype(np.float64)
    assert out.min() >= cam.near and out.max() <= cam.far
    at_far = clean >= cam.far
    np.testing.assert_array_equal(out[at_far], cam.far)  # beyond the range stays beyond it
    std = a + b * clean**2
    inside = (clean - 5 * std > cam.near) & (clean + 5 * std < cam.far)  # never clipped
    z = (out[inside] - clean[inside]) / std[inside]
    assert z.size > 20000
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1.0) < 0.02
    # per distance band, the measured std against a + b d^2 at the band's depths (by hand)
    for low, high in ((0.2, 0.4), (0.4, 0.7), (0.7, 1.2)):
        band = inside & (clean >= low) & (clean < high)
        measured = np.sqrt(np.mean((out[band] - clean[band]) ** 2))
        expected = np.sqrt(np.mean((a + b * clean[band] ** 2) ** 2))
        assert band.sum() > 2000 and abs(measured / expected - 1.0) < 0.05, (low, high, measured, expected)


def test_hole_rate_and_blob_coverage():
    tap = Tap(make_depth(32))
    env = DepthNoise(tap, std_floor=0.0, std_quadratic=0.0, hole_rate=0.1, invalid_value=-1.0)
    clean, out = _frames(env, tap, 10)
    holes = out == -1.0
    assert abs(holes.mean() - 0.1) < 0.01
    np.testing.assert_array_equal(out[~holes], clean[~holes])  # no noise: everything else exact

    tap = Tap(make_depth(32))
    env = DepthNoise(tap, std_floor=0.0, std_quadratic=0.0, blob_rate=0.02, blob_size=3)
    _, out = _frames(env, tap, 10)
    cam = env.unwrapped.task.camera.config
    interior = out.reshape(*out.shape[:2], cam.height, cam.width)[:, :, 1:-1, 1:-1]
    expected = 1.0 - (1.0 - 0.02) ** 9  # a 3x3 blob covers an interior pixel from any of 9 seeds
    assert abs((interior == 0.0).mean() - expected) < 0.015


def _step_image(n, height, width, near_depth, far_depth):
    image = np.full((n, height, width), far_depth, np.float32)
    image[:, :, : width // 2] = near_depth
    return image.reshape(n, -1)


def _corrupt(src, width, height, *, edge_drop, threshold=0.1, seed=3):
    n, pixels = src.shape
    frame, drop = np.zeros((n, pixels), np.float32), np.zeros((n, pixels), bool)
    rng = np.arange(n, dtype=np.uint64) * np.uint64(7919) + np.uint64(seed)
    cols = np.arange(pixels, dtype=np.int64)
    params = np.array([0.0, 0.0, 0.0, 0.0, edge_drop])
    for i in range(n):
        corrupt_frame(src, i, cols, frame, drop, rng, width, height, params, threshold, 3, 0.1, 2.0, 0.0)
    return frame


def test_edge_dropout_only_at_a_step_and_never_on_a_plane():
    n, height, width = 400, 6, 8
    step = _step_image(n, height, width, 0.6, 0.9)  # a 0.56 1/m jump in inverse depth
    frame = _corrupt(step, width, height, edge_drop=1.0).reshape(n, height, width)
    edge_columns = np.zeros((height, width), bool)
    edge_columns[:, width // 2 - 1: width // 2 + 1] = True  # both sides of the step
    np.testing.assert_array_equal(frame == 0.0, np.broadcast_to(edge_columns, frame.shape))
    frame = _corrupt(step, width, height, edge_drop=0.3).reshape(n, height, width)
    assert abs((frame[:, edge_columns] == 0.0).mean() - 0.3) < 0.03 and not (frame[:, ~edge_columns] == 0.0).any()
    # a tilted plane seen at a grazing angle: neighbouring depths differ by up to ~0.6 m, its inverse depth is affine
    r, c = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    plane = np.broadcast_to((1.0 / (0.5 + 0.35 * r + 0.05 * c)).astype(np.float32).ravel(), (n, height * width)).copy()
    assert np.abs(np.diff(plane[0].reshape(height, width), axis=0)).max() > 0.5
    np.testing.assert_array_equal(_corrupt(plane, width, height, edge_drop=1.0), plane)
    # a step smaller than the threshold is no edge
    small = _step_image(n, height, width, 1.0, 1.05)  # 0.048 1/m
    np.testing.assert_array_equal(_corrupt(small, width, height, edge_drop=1.0), small)


def test_a_held_frame_keeps_its_noise():
    tap = Tap(make_depth(4, camera={"update_every": 3}))
    env = DepthNoise(tap)
    clean, out = _frames(env, tap, 9)
    for t in range(1, 10):  # frames at steps 1, 4, 7 (the clock's frame, then held twice)
        new = (t - 1) % 3 == 0
        assert np.array_equal(clean[t], clean[t - 1]) != new
        assert np.array_equal(out[t], out[t - 1]) != new


def test_final_obs_is_the_old_episodes_corrupted_frame():
    tap = Tap(make_depth(4, max_episode_steps=5))
    env = DepthNoise(tap, hole_rate=0.2, invalid_value=-1.0)
    cols = env.unwrapped.obs_groups["depth"]
    env.reset(seed=0)
    for _ in range(5):
        obs, _, terminated, truncated, info = env.step(np.zeros(env.action_space.shape, np.float32))
    assert truncated.all()
    final, clean_final = info["final_obs"], tap.final_obs
    np.testing.assert_array_equal(final[:, :cols.start], clean_final[:, :cols.start])
    holes = final[:, cols] == -1.0
    assert holes.any() and np.allclose(final[:, cols][~holes], clean_final[:, cols][~holes], atol=0.05)
    assert not np.array_equal(final[:, cols], obs[:, cols])  # the new episode's first frame is another one


def test_errors():
    with pytest.raises(ValueError, match="needs a task with a depth camera and UniLab/Go1Joystick-v0 has none; tasks with "
                                         "one: UniLab/Go1JoystickDepth-v0"):
        DepthNoise(gym.make_vec("UniLab/Go1Joystick-v0", num_envs=1))
    env = make_depth(1)
    with pytest.raises(ValueError, match="hole_rate must be a probability"):
        DepthNoise(env, hole_rate=1.5)
    with pytest.raises(ValueError, match="edge_threshold must be > 0"):
        DepthNoise(env, edge_threshold=0.0)
    with pytest.raises(TypeError, match="hole_rat"):
        DepthNoise(env, hole_rat=0.1)
    with pytest.raises(ValueError, match="group 'linvel' has 3 columns but the camera has 192 pixels"):
        DepthNoise(env, group="linvel")
