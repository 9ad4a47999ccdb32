"""Motion blur (the sensor's average over the exposure, by hand; the wrapper's per-episode exposures) and camera
pose jitter (offset statistics, the mount by hand, the episode's first frame rendered again at the new mount)."""

from __future__ import annotations

import gymnasium as gym
import mujoco
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import unilab_envs  # noqa: F401  (registers UniLab/*)
from tests.wrappers.conftest import MODES, Tap
from unilab_envs.sensors import DepthCamera, DepthCameraConfig
from unilab_envs.sensors.camera_config import mount_quaternion, quat_multiply
from unilab_envs.sensors.depth_camera import render_rows
from wrappers import CameraPose, MotionBlur

DEPTH = "UniLab/Go1JoystickDepth-v0"
SCENE = """<mujoco><worldbody><geom type="plane" size="5 5 0.1"/>
<body name="base" pos="0 0 1"><freejoint/><geom type="sphere" size="0.05"/></body></worldbody></mujoco>"""
DT = 0.02


def make_depth(num_envs=8, *, mode=AutoresetMode.SAME_STEP, max_episode_steps=1000, **kwargs):
    kwargs.setdefault("num_threads", 1)
    kwargs.setdefault("spread_episode_starts", False)
    return gym.make_vec(DEPTH, num_envs=num_envs, autoreset_mode=mode, max_episode_steps=max_episode_steps, **kwargs)


def _down_camera(num_envs=1, samples=4):
    """A camera on a free body, looking straight down at a plane: every pixel's depth is the camera's height."""
    cfg = DepthCameraConfig(width=4, height=3, pos=(0.0, 0.0, -0.1), pitch=90.0, near=0.05, far=5.0, blur_samples=samples)
    return DepthCamera(cfg, mujoco.MjModel.from_xml_string(SCENE), num_envs, root_q=0, control_dt=DT)


def _pose(z, x=0.0, yaw_deg=0.0):
    half = np.radians(yaw_deg) / 2
    return np.array([x, 0.0, z, np.cos(half), 0.0, 0.0, np.sin(half)])


def test_blur_of_a_static_scene_is_the_identity():
    cam = _down_camera()
    qpos = _pose(0.8, x=0.3, yaw_deg=30.0)[None]
    cam.render(qpos)
    sharp = cam.images.copy()
    np.testing.assert_allclose(sharp, 0.7, rtol=1e-6)  # 0.8 m up, camera 0.1 m below the base
    cam.previous_pose[:] = qpos  # no motion during the exposure
    cam.exposure[:] = DT
    cam.render(qpos)
    np.testing.assert_allclose(cam.images, sharp, rtol=1e-6)


@pytest.mark.parametrize("exposure", [DT, DT / 2, DT / 4])
def test_blur_of_a_known_motion_is_the_average_of_the_sub_poses(exposure):
    cam, samples = _down_camera(samples=4), 4
    before, now = _pose(1.0), _pose(0.6, x=0.2, yaw_deg=20.0)  # a drop of 0.4 m during the control step
    cam.previous_pose[:] = before
    cam.exposure[:] = exposure
    cam.render(now[None])
    share = exposure / DT  # the exposure's part of the step, ending now
    heights = [0.6 + (1.0 - 0.6) * share * s / (samples - 1) for s in range(samples)]  # base z of each sub-pose
    expected = np.mean(heights) - 0.1  # a camera looking down at a plane reads its height, whatever x and yaw
    np.testing.assert_allclose(cam.images, expected, rtol=1e-5)
    if exposure == DT:
        np.testing.assert_allclose(expected, 0.8 - 0.1)  # the whole step: the mean of 1.0 and 0.6


def test_motion_blur_draws_each_episodes_exposure_in_its_range():
    env = MotionBlur(make_depth(256, max_episode_steps=3), exposure=(0.004, 0.012))
    cam = env.unwrapped.task.camera
    env.reset(seed=0)
    first = cam.exposure.copy()
    assert first.min() >= 0.004 and first.max() < 0.012
    assert abs(first.mean() - 0.008) < 0.0006 and abs(first.std() - 0.008 / np.sqrt(12)) < 0.0005
    env.step(np.zeros(env.action_space.shape, np.float32))
    np.testing.assert_array_equal(cam.exposure, first)  # fixed within an episode
    for _ in range(2):
        env.step(np.zeros(env.action_space.shape, np.float32))
    assert not np.intersect1d(cam.exposure, first).size  # every row started again: new draws
    np.testing.assert_array_equal(env.critic_groups()["camera_exposure"][:, 0], cam.exposure.astype(np.float32))
    env.set_profile_level(0.5)
    env.reset()
    assert cam.exposure.min() >= 0.002 and cam.exposure.max() < 0.006


def test_motion_blur_errors():
    with pytest.raises(ValueError, match="longer than one control step"):
        MotionBlur(make_depth(1), exposure=(0.0, 0.05))
    with pytest.raises(ValueError, match="blur_samples >= 2"):
        MotionBlur(make_depth(1, camera={"blur_samples": 1}), exposure=0.01)
    with pytest.raises(ValueError, match="exposure must satisfy"):
        MotionBlur(make_depth(1), exposure=(0.01, 0.0))


def _axis(deg, a):
    q = np.zeros(4)
    q[0], q[1 + a] = np.cos(np.radians(deg) / 2), np.sin(np.radians(deg) / 2)
    return q


def test_pose_jitter_statistics_and_the_mount_by_hand():
    position, rotation = (0.01, 0.02, 0.005), (1.0, 2.0, 3.0)
    env = CameraPose(make_depth(512), position=position, rotation=rotation)
    env.reset(seed=0)
    cam, off = env.unwrapped.task.camera, env.pose_offset
    half = np.array([*position, *rotation])
    assert (np.abs(off) <= half).all()
    np.testing.assert_allclose(off.mean(axis=0) / half, 0.0, atol=0.08)
    np.testing.assert_allclose(off.std(axis=0) / half, 1 / np.sqrt(3), rtol=0.08)
    nominal = cam.config
    np.testing.assert_allclose(cam.mount_pos, np.asarray(nominal.pos) + off[:, :3])
    for i in range(5):
        roll, pitch, yaw = off[i, 3:]
        q = quat_multiply(quat_multiply(quat_multiply(mount_quaternion(nominal), _axis(yaw, 2)), _axis(pitch, 1)), _axis(roll, 0))
        np.testing.assert_allclose(cam.mount_quat[i], q, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(cam.mount_quat, axis=1), 1.0)


def _render_by_hand(cam, qpos, rows):
    images = np.zeros_like(cam.images)
    render_rows(images, rows, qpos, cam.root_q, cam.previous_pose, np.zeros(len(images)), cam.control_dt, 1, cam.mount_pos,
                cam.mount_quat, cam.directions, cam.config.near, cam.config.far, cam.scene)
    return images[rows]


@pytest.mark.parametrize("mode", MODES)
def test_pose_jitter_renders_each_episodes_first_frame_at_its_mount(mode):
    tap = Tap(make_depth(4, mode=mode, max_episode_steps=3))
    env = CameraPose(tap, position=0.03, rotation=5.0)
    depth = env.unwrapped.obs_groups["depth"]
    cam, qpos = env.unwrapped.task.camera, env.unwrapped.task.physics.qpos
    obs, _ = env.reset(seed=1)
    rows = np.arange(4)
    np.testing.assert_array_equal(obs[:, depth], _render_by_hand(cam, qpos, rows))
    assert not np.allclose(obs[:, depth], tap.obs[:, depth], atol=1e-3)  # the frame at the nominal mount differs
    np.testing.assert_array_equal(obs[:, : depth.start], tap.obs[:, : depth.start])
    offsets = [env.pose_offset.copy()]
    for t in range(1, 9):
        obs, _, terminated, truncated, info = env.step(np.zeros(env.action_space.shape, np.float32))
        started = (t % 3 == 0) if mode is AutoresetMode.SAME_STEP else (t % 4 == 0)
        if started:
            assert not np.array_equal(env.pose_offset, offsets[-1])
            offsets.append(env.pose_offset.copy())
            np.testing.assert_array_equal(obs[:, depth], _render_by_hand(cam, qpos, rows))
            if mode is AutoresetMode.SAME_STEP:  # the old episode's last frame, from the old mount, untouched
                np.testing.assert_array_equal(info["final_obs"], tap.final_obs)
        else:
            np.testing.assert_array_equal(env.pose_offset, offsets[-1])
            np.testing.assert_array_equal(obs, tap.obs)  # the camera renders at the episode's mount by itself
    env.set_profile_level(0.0)
    env.reset()
    np.testing.assert_array_equal(env.pose_offset, 0.0)
    np.testing.assert_array_equal(env.step(np.zeros(env.action_space.shape, np.float32))[0], tap.obs)


def test_pose_jitter_errors():
    with pytest.raises(ValueError, match="position must be a number or 3 numbers"):
        CameraPose(make_depth(1), position=(0.01, 0.02))
    with pytest.raises(ValueError, match="rotation must be >= 0"):
        CameraPose(make_depth(1), rotation=-1.0)
    with pytest.raises(ValueError, match="CameraPose needs a task with a depth camera"):
        CameraPose(gym.make_vec("UniLab/Go1Joystick-v0", num_envs=1))
