"""The go1_depth_real profile: what it extends, the camera sections' order, exact resume, env i of a batch seeded s
against a single env seeded s + i, and the critic's view of the camera's draws."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import unilab_envs  # noqa: F401  (registers UniLab/*)
from tests.wrappers.conftest import MODES
from wrappers import SECTIONS, Sim2Real, load_profile

DEPTH = "UniLab/Go1JoystickDepth-v0"
CAMERA_SECTIONS = ["camera_pose", "motion_blur", "depth_noise", "frame_drop", "camera_latency"]


def make_depth(num_envs=8, *, mode=AutoresetMode.SAME_STEP, max_episode_steps=1000, **kwargs):
    kwargs.setdefault("num_threads", 1)
    kwargs.setdefault("spread_episode_starts", False)
    return gym.make_vec(DEPTH, num_envs=num_envs, autoreset_mode=mode, max_episode_steps=max_episode_steps, **kwargs)


def _actions(env, steps, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (steps, *env.action_space.shape)).astype(np.float32)


def _roll(env, actions):
    out = []
    for a in actions:
        obs, reward, terminated, truncated, info = env.step(a)
        out.append((obs.copy(), reward.copy(), terminated.copy(), truncated.copy(), info["frame_dropped"].copy()))
    return out


def test_profile_extends_go1_real_and_orders_the_camera_sections():
    profile, parent = load_profile("go1_depth_real"), load_profile("go1_real")
    assert profile["env_id"] == DEPTH and parent["env_id"] != DEPTH
    assert set(parent) - {"description", "env_id", "sources"} <= set(profile)
    assert profile["observation_latency"]["groups"] == ["linvel", "gyro", "gravity", "joint_pos", "joint_vel"]
    order = list(SECTIONS)
    assert [s for s in order if s in CAMERA_SECTIONS] == CAMERA_SECTIONS  # the sensor, its matcher, then the link
    assert order.index("action_latency") < order.index("camera_pose") and order.index("camera_latency") < order.index("imu_bias_drift")
    env = Sim2Real(make_depth(2), profile="go1_depth_real")
    assert list(env.layers)[5:10] == CAMERA_SECTIONS
    with pytest.raises(ValueError, match="'go1_depth_real' is for UniLab/Go1JoystickDepth-v0"):
        Sim2Real(gym.make_vec("UniLab/Go1Joystick-v0", num_envs=1), profile="go1_depth_real")


@pytest.mark.parametrize("mode", MODES)
def test_exact_resume(mode):
    env = Sim2Real(make_depth(4, mode=mode, max_episode_steps=9, camera={"update_every": 2}), profile="go1_depth_real",
                   overrides={"frame_drop": {"drop_rate": 0.3}})
    actions = _actions(env, 30)
    env.reset(seed=3)
    _roll(env, actions[:12])
    state = env.get_state()
    first = _roll(env, actions[12:])
    env.set_state(state)
    second = _roll(env, actions[12:])
    for a, b in zip(first, second):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    assert np.concatenate([f[4] for f in first]).any()  # frames were dropped along the way


def test_env_i_of_a_batch_seeded_s_is_a_single_env_seeded_s_plus_i():
    batch = Sim2Real(make_depth(3, max_episode_steps=6), profile="go1_depth_real")
    actions = _actions(batch, 14)
    batch.reset(seed=10)
    together = _roll(batch, actions)
    for i in range(3):
        single = Sim2Real(make_depth(1, max_episode_steps=6), profile="go1_depth_real")
        single.reset(seed=10 + i)
        alone = _roll(single, actions[:, i : i + 1])
        for a, b in zip(together, alone):
            for x, y in zip(a, b):
                np.testing.assert_array_equal(x[i : i + 1], y)


def test_the_critic_sees_the_camera_draws():
    env = Sim2Real(make_depth(2), profile="go1_depth_real", overrides={"privileged_critic": True})
    env.reset(seed=0)
    groups = env.critic.groups
    for name in ("camera_pose_offset", "camera_exposure", "camera_delay", "observation_delay"):
        assert name in groups
    _, _, _, _, info = env.step(np.zeros(env.action_space.shape, np.float32))
    cam = env.unwrapped.task.camera
    np.testing.assert_allclose(info["privileged_obs"][:, groups["camera_exposure"]][:, 0], cam.exposure, rtol=1e-6)
    np.testing.assert_array_equal(info["privileged_obs"][:, groups["camera_delay"]][:, 0], env.layers["camera_latency"].delay)


def test_parallel_camera_kernels_match_serial(monkeypatch):
    """Large batches run the prange builds of the camera kernels; they draw exactly what the serial ones do."""
    import wrappers._base

    def run():
        env = Sim2Real(make_depth(4, max_episode_steps=6, num_threads=2), profile="go1_depth_real",
                       overrides={"frame_drop": {"drop_rate": 0.3}})
        env.reset(seed=3)
        return _roll(env, _actions(env, 10))

    serial = run()
    monkeypatch.setattr(wrappers._base, "PARALLEL_MIN_ENVS", 1)
    for a, b in zip(run(), serial):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
