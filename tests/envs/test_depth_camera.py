"""The depth camera: its ray casting equals MuJoCo's, the env's frames equal the robot side's, its clock and state."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import mujoco
import numba as nb
import numpy as np
import pytest

import unilab_envs  # noqa: F401  (registers the tasks)
from unilab_robot.deploy.camera import depth_frame
from unilab_envs.deploy_spec import spec_from_env
from unilab_robot.deploy.spec import SpecError, spec_from_json, validate
from unilab_envs.sensors import DepthCameraConfig
from unilab_envs.sensors.static_scene import cast_ray, static_scene

TASK = "UniLab/Go1JoystickDepth-v0"

SCENE = """
<mujoco>
  <asset><hfield name="hf" nrow="30" ncol="40" size="3 2 0.5 0.2"/></asset>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1" pos="0 0 -0.3"/>
    <geom type="hfield" hfield="hf" pos="1 0.5 0" euler="0 0 20"/>
    <geom type="box" size="0.2 0.3 0.4" pos="-1 1 0.4" euler="10 20 30"/>
    <geom type="sphere" size="0.25" pos="0.5 -1.2 0.6"/>
    <geom type="capsule" size="0.1 0.3" pos="-0.6 -0.8 0.5" euler="40 0 10"/>
    <geom type="plane" size="0.5 0.4 1" pos="-2 -2 0.7" euler="0 15 0"/>
    <body pos="0 0 2"><freejoint/><geom type="sphere" size="0.1"/></body>
  </worldbody>
</mujoco>"""


@nb.njit(cache=True)
def _cast_all(scene, origins, directions, t_max):
    out = np.empty(origins.shape[0])
    for k in range(origins.shape[0]):
        out[k] = cast_ray(scene, origins[k, 0], origins[k, 1], origins[k, 2], directions[k, 0], directions[k, 1],
                          directions[k, 2], t_max)
    return out


def test_ray_casting_equals_mujocos_on_boxes_spheres_capsules_planes_and_a_heightfield():
    model = mujoco.MjModel.from_xml_string(SCENE)
    rng = np.random.default_rng(0)
    model.hfield_data[:] = rng.uniform(0.0, 1.0, model.hfield_data.size)  # rough ground: every cell a different slope
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    n = 4000
    origins = np.column_stack([rng.uniform(-3, 3, n), rng.uniform(-3, 3, n), rng.uniform(0.8, 2.0, n)])
    directions = np.column_stack([rng.uniform(-1, 1, n), rng.uniform(-1, 1, n), rng.uniform(-1, 0.2, n)])
    directions *= rng.uniform(0.5, 2.0, (n, 1))  # not unit length: t is in units of the direction, as mj_ray's
    ours = _cast_all(static_scene(model), origins, directions, 1e9)
    geom = np.zeros(1, np.int32)
    free_body = model.nbody - 1  # the moving sphere is not static: MuJoCo leaves it out when told to
    theirs = np.array([mujoco.mj_ray(model, data, o, d, None, 1, free_body, geom) for o, d in zip(origins, directions)])
    hit = theirs >= 0
    assert hit.sum() > 0.8 * n and (~hit).sum() > 20  # both hits and misses (up into the sky) are compared
    np.testing.assert_array_equal(ours >= 0, hit)
    np.testing.assert_allclose(ours[hit], theirs[hit], rtol=0, atol=1e-9)
    kinds = set()
    for o, d in zip(origins[hit][:400], directions[hit][:400]):
        mujoco.mj_ray(model, data, o, d, None, 1, free_body, geom)
        kinds.add(int(model.geom_type[geom[0]]))
    assert {int(mujoco.mjtGeom.mjGEOM_HFIELD), int(mujoco.mjtGeom.mjGEOM_BOX), int(mujoco.mjtGeom.mjGEOM_PLANE)} <= kinds


def test_a_static_geom_the_camera_cannot_see_is_named():
    model = mujoco.MjModel.from_xml_string('<mujoco><worldbody><geom name="drum" type="cylinder" size="0.2 0.3"/>'
                                           '</worldbody></mujoco>')
    with pytest.raises(ValueError, match="'drum' \\(mjGEOM_CYLINDER\\).*geom_groups"):
        static_scene(model)
    assert static_scene(model, geom_groups=(1,)).kind.size == 0  # left out by its group


def test_camera_config_errors_say_what_is_allowed():
    with pytest.raises(ValueError, match="near < far"):
        DepthCameraConfig(near=2.0, far=1.0).validate()
    with pytest.raises(ValueError, match="update_every"):
        gym.make_vec(TASK, num_envs=1, camera={"update_every": 0})


@pytest.fixture(scope="module")
def depth_env():
    env = gym.make_vec(TASK, num_envs=4, camera={"update_every": 2})
    yield env
    env.close()


def _play_frame(spec, task, row):
    data = mujoco.MjData(task.model)
    data.qpos[:] = task.physics.qpos[row]
    mujoco.mj_kinematics(task.model, data)
    return depth_frame(spec.camera, task.model, data)


def test_the_envs_frames_are_the_robot_sides_and_a_slower_camera_holds_its_frame(depth_env):
    env, task = depth_env, depth_env.unwrapped.task
    columns = env.unwrapped.obs_groups["depth"]
    assert task.declared_groups["depth"].shape == (1, 12, 16) and columns.stop - columns.start == 192
    obs, _ = env.reset(seed=7)
    spec = spec_from_env(env.unwrapped, TASK)
    assert spec.camera.width == 16 and spec.camera.height == 12 and spec.camera.update_every == 2
    for row in range(4):  # the reset frame, from the reset pose
        np.testing.assert_array_equal(obs[row, columns], _play_frame(spec, task, row))
    rng = np.random.default_rng(0)
    frames = []
    for step in range(4):
        obs, *_ = env.step(rng.uniform(-0.5, 0.5, (4, 12)).astype(np.float32))
        frames.append(obs[:, columns].copy())
        if step % 2 == 0:  # the camera's clock: a frame on every other step (its first step renders)
            for row in range(4):
                np.testing.assert_array_equal(frames[-1][row], _play_frame(spec, task, row))
        else:
            np.testing.assert_array_equal(frames[-1], frames[-2])  # held
    assert 0.1 <= obs[:, columns].min() and obs[:, columns].max() <= 2.0
    assert np.ptp(obs[0, columns]) > 0.2  # rows nearer the feet are nearer: an image, not a constant


def test_play_renders_at_the_cameras_rate_and_afresh_each_episode(depth_env):
    from unilab_robot.deploy.reference import PolicyIO

    env, task = depth_env, depth_env.unwrapped.task
    spec = spec_from_env(env.unwrapped, TASK)  # update_every 2
    depth = next(g for g in spec.observation.groups if g.name == "depth")
    io, data = PolicyIO(spec, task.model), mujoco.MjData(task.model)
    rng = np.random.default_rng(2)
    env.reset(seed=5)

    def follow_env():  # play's model at env 0's state
        data.qpos[:], data.qvel[:] = task.physics.qpos[0], task.physics.qvel[0]
        mujoco.mj_forward(task.model, data)
        return depth_frame(spec.camera, task.model, data)

    ctl = io.initial_state(data)
    truth, seen = [], []
    for _ in range(5):
        truth.append(follow_env())
        seen.append(io.observe(data, ctl)[depth.start:depth.stop].copy())
        io.advance(ctl)
        env.step(rng.uniform(-0.5, 0.5, (4, 12)).astype(np.float32))
    assert not np.array_equal(truth[0], truth[1])  # the robot moved: a held frame is visible
    for k in range(5):  # a frame at the episode's start, then every other step, held between
        np.testing.assert_array_equal(seen[k], truth[k - k % 2])
    fresh = follow_env()
    ctl = io.initial_state(data)  # a new episode renders at once
    np.testing.assert_array_equal(io.observe(data, ctl)[depth.start:depth.stop], fresh)


def test_the_camera_state_resumes_exactly(depth_env):
    env = depth_env
    env.reset(seed=3)
    actions = np.random.default_rng(1).uniform(-0.5, 0.5, (6, 4, 12)).astype(np.float32)
    env.step(actions[0])
    state = env.unwrapped.get_state()
    first = [env.step(a)[0].copy() for a in actions[1:]]
    env.unwrapped.set_state(state)
    again = [env.step(a)[0].copy() for a in actions[1:]]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)


def test_the_spec_carries_the_camera_and_refuses_a_depth_group_without_one(depth_env):
    spec = spec_from_env(depth_env.unwrapped, TASK)
    assert spec_from_json(spec.to_json()).camera == spec.camera  # through the JSON the robot reads
    with pytest.raises(SpecError, match="camera section"):
        validate(dataclasses.replace(spec, camera=None))
    with pytest.raises(SpecError, match="has 192 entries"):
        validate(dataclasses.replace(spec, camera=dataclasses.replace(spec.camera, width=8)))
