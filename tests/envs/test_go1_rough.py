"""Go1 on rough terrain: the height scan is the MuJoCo surface, heights are terrain-relative, the curriculum moves envs.

The registry-wide tests (smoke, checkers, batched == single, reward == sum of terms, autoreset)
run this task too; these are what only a terrain task has.
"""

from __future__ import annotations

import math

import gymnasium as gym
import mujoco
import numpy as np
import pytest

import unilab_envs  # noqa: F401  (registers the tasks)
from tests.envs import locomotion_records as rec
from unilab_envs.core.rng import seed_streams
from unilab_envs.locomotion.curriculum import reset_on_terrain, start_curriculum
from unilab_envs.locomotion.ground import terrain_ground, track_walk
from unilab_envs.tasks.go1_rough import OBS_GROUPS, PRIVILEGED_GROUPS
from unilab_envs.terrain import TerrainMap

TASK = "UniLab/Go1JoystickRough-v0"
SMALL = {"terrain": {"num_levels": 3, "tile_size": 4.0, "border": 1.0}}  # a small terrain: fast to build


def surface_heights(model: mujoco.MjModel, xy: np.ndarray) -> np.ndarray:
    """The MuJoCo surface's height under each world point, by ``mj_ray`` straight down (robot moved out of the way)."""
    data = mujoco.MjData(model)
    data.qpos[2] = 100.0  # the robot far above the terrain: rays from z = 10 meet only the ground
    mujoco.mj_forward(model, data)
    geom = np.zeros(1, np.int32)
    out = np.empty(len(xy))
    for k, (x, y) in enumerate(xy):
        dist = mujoco.mj_ray(model, data, np.array([x, y, 10.0]), np.array([0.0, 0.0, -1.0]), None, 1, -1, geom)
        assert dist > 0, f"the ray at ({x}, {y}) missed the terrain"
        out[k] = 10.0 - dist
    return out


def heading(q: np.ndarray) -> tuple[float, float]:
    """cos, sin of the yaw of the base's x axis, from its rotation matrix."""
    m = np.zeros(9)
    mujoco.mju_quat2Mat(m, q)
    fx, fy = m[0], m[3]
    n = math.hypot(fx, fy)
    return fx / n, fy / n


def test_sizes_and_groups():
    env = gym.make_vec(TASK, num_envs=2, **SMALL)
    assert env.single_observation_space.shape == (50 + 187,)
    assert env.privileged_observation_space.shape[-1] == 25 + 187
    assert env.obs_groups["height_scan"] == slice(50, 237) and env.obs_groups["phase"] == slice(48, 50)
    env.close()
    blind = gym.make_vec(TASK, num_envs=2, policy_height_scan=False, **SMALL)
    assert blind.single_observation_space.shape == (50,) and "height_scan" not in blind.obs_groups
    assert blind.privileged_observation_space.shape[-1] == 212  # the critic still sees the scan
    blind.close()


def test_height_scan_and_foot_heights_are_measured_from_the_mujoco_surface():
    env = gym.make_vec(TASK, num_envs=6, **SMALL)
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(15):
        obs, _, _, _, info = env.step(rng.uniform(-0.5, 0.5, (6, 12)).astype(np.float32))
    qpos = env.batch.bind("qpos").copy()
    feet = env.task.physics.foot_xpos[:, env.task.robot.foot_ids].copy()
    priv = info["privileged_obs"]
    points = env.task.ground.scan_points
    for i in range(6):
        c, s = heading(qpos[i, 3:7])
        world = qpos[i, :2] + points @ np.array([[c, s], [-s, c]])
        expected = qpos[i, 2] - surface_heights(env.model, world)
        np.testing.assert_allclose(obs[i, OBS_GROUPS["height_scan"]], expected, atol=2e-5)
        np.testing.assert_allclose(priv[i, PRIVILEGED_GROUPS["height_scan"]], expected, atol=2e-5)
        ground = surface_heights(env.model, feet[i, :, :2])
        radius = env.task.robot.foot_offset
        np.testing.assert_allclose(priv[i, PRIVILEGED_GROUPS["foot_height"]], feet[i, :, 2] - radius - ground, atol=2e-5)
        base_ground = surface_heights(env.model, qpos[i : i + 1, :2])[0]
        assert priv[i, PRIVILEGED_GROUPS["height"]][0] == pytest.approx(qpos[i, 2] - base_ground, abs=2e-5)
    env.close()


def test_robots_start_standing_on_a_tile_centre_above_the_ground():
    env = gym.make_vec(TASK, num_envs=16, **SMALL)
    obs, info = env.reset(seed=0)
    task = env.task
    centers = task.terrain.tile_centers[task.course.level, task.course.column]
    qpos = env.batch.bind("qpos")
    assert np.all(np.abs(qpos[:, :2] - centers) <= task.config.reset_xy_range + 1e-9)
    np.testing.assert_array_equal(task.ground.spawn_xy, qpos[:, :2])
    clearance = info["privileged_obs"][:, PRIVILEGED_GROUPS["height"]][:, 0]
    assert np.all(clearance > 0.25) and np.all(clearance < 0.5)  # the keyframe's 0.287 m, on the highest ground near
    assert set(task.course.level) <= {0, 1, 2} and set(task.course.column) <= set(range(5))
    for _ in range(50):  # standing still on the spawn tile: nobody falls
        _, _, terminated, _, _ = env.step(np.zeros((16, 12), np.float32))
        assert not terminated.any()
    env.close()


def test_a_chosen_level_and_type_place_every_env_there():
    env = gym.make_vec(TASK, num_envs=8, init_levels=(2, 2), terrain={**SMALL["terrain"], "types": ["stairs_up"]})
    env.reset(seed=0)
    assert set(env.task.course.level) == {2} and set(env.task.course.column) == {0}
    env.close()
    with pytest.raises(ValueError, match="init_levels"):
        gym.make_vec(TASK, num_envs=1, init_levels=(1, 3), **SMALL)  # only 3 levels


def test_the_terrain_is_the_seeds_and_a_flat_terrain_is_flat():
    a = gym.make_vec(TASK, num_envs=1, terrain_seed=1, **SMALL)
    b = gym.make_vec(TASK, num_envs=1, terrain_seed=1, **SMALL)
    c = gym.make_vec(TASK, num_envs=1, terrain_seed=2, **SMALL)
    np.testing.assert_array_equal(a.model.hfield_data, b.model.hfield_data)
    assert not np.array_equal(a.task.terrain.map.heights, c.task.terrain.map.heights)
    flat = gym.make_vec(TASK, num_envs=4, terrain={**SMALL["terrain"], "types": ["flat"]})
    obs, info = flat.reset(seed=0)
    scan = obs[:, OBS_GROUPS["height_scan"]]
    np.testing.assert_allclose(scan, np.broadcast_to(flat.batch.bind("qpos")[:, 2:3], scan.shape), atol=1e-6)
    for env in (a, b, c, flat):
        env.close()


def curriculum_case(level: int, walked: float, commanded: float, init_levels: tuple[int, int] = (0, 1)):
    """One env on a 4-level x 2-type grid of 4 m tiles over a ground rising 0.1 m per metre in x."""
    xs = np.arange(0.0, 20.0, 0.5)
    heights = np.repeat((0.1 * xs)[:, None], 40, axis=1)
    ground = terrain_ground(TerrainMap(heights, 0.0, 0.0, 0.5, 2.0), np.zeros((0, 2)), 1)
    centers = np.array([[[2.0 + 4 * lv, 2.0 + 4 * t] for t in range(2)] for lv in range(4)])
    course = start_curriculum(1, centers, 2.0, 0.5, init_levels, 0.3)
    course.level[0], course.column[0] = level, 1
    ground.walked[0], ground.commanded_xy[0] = walked, (0.6 * commanded, -0.8 * commanded)  # |commanded_xy| = commanded
    physics, robot = rec.physics(), rec.robot()
    physics.qpos[0, :3] = (0.1, -0.2, 0.3)  # the randomized start around the keyframe
    reset_on_terrain(np.array([0]), seed_streams(np.array([7], np.uint64)), physics, robot, ground, course)
    return course, ground, physics


@pytest.mark.parametrize("level, walked, commanded, expected", [
    (1, 2.5, 4.0, 2),  # walked more than half a tile: up
    (1, 1.5, 4.0, 0),  # less than half of the commanded 4 m: down
    (0, 0.1, 4.0, 0),  # never below 0
    (1, 1.5, 2.0, 1),  # between the two: stays
    (2, 0.0, 0.0, 2),  # asked to stand and stood: stays
])  # fmt: skip
def test_curriculum_moves_one_level_by_the_walk(level, walked, commanded, expected):
    course, ground, physics = curriculum_case(level, walked, commanded)
    assert course.level[0] == expected and course.column[0] == 1
    cx, cy = 2.0 + 4 * expected + 0.1, 6.0 - 0.2  # the tile centre plus the random start's offset
    np.testing.assert_allclose(physics.qpos[0, :2], (cx, cy))
    assert physics.qpos[0, 2] == pytest.approx(0.3 + 0.1 * (cx + 0.3))  # lifted by the highest ground within 0.3 m
    np.testing.assert_allclose(ground.spawn_xy[0], (cx, cy))
    assert ground.walked[0] == 0.0 and ground.commanded_xy[0].tolist() == [0.0, 0.0]


def test_the_commanded_walk_follows_the_heading_so_exact_tracking_on_an_arc_is_not_demoted():
    """0.5 m/s forward at 0.5 rad/s for 20 s: a 10 m path along an arc of radius 1 m.

    A robot that tracks it exactly ends |2 sin 5| = 1.92 m from its spawn point (the chord
    of 10 rad of arc): the commanded walk ends there too, so the robot is not demoted (summing
    |v| dt would ask for 10 m and demote it), and not promoted (it stayed within half a tile).
    """
    ground = terrain_ground(TerrainMap(np.zeros((4, 4)), -1.0, -1.0, 1.0, 1.0), np.zeros((0, 2)), 1)
    physics, robot = rec.physics(), rec.robot()
    command = np.array([[0.5, 0.0, 0.5]])
    dt, radius, yaw = 0.02, 1.0, 0.0
    for _ in range(1000):
        yaw += 0.5 * dt  # the base where exact tracking puts it after this step
        physics.qpos[0, :2] = radius * math.sin(yaw), radius * (1.0 - math.cos(yaw))
        physics.qpos[0, 3:7] = math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)
        track_walk(0, physics, robot, ground, command, dt)
    chord = 2.0 * radius * abs(math.sin(5.0))
    assert ground.walked[0] == pytest.approx(chord, abs=1e-9)
    assert np.hypot(*ground.commanded_xy[0]) == pytest.approx(chord, rel=1e-3)  # one step's heading lag: O(dt)
    course, _, _ = curriculum_case(2, float(ground.walked[0]), float(np.hypot(*ground.commanded_xy[0])))
    assert course.level[0] == 2


def test_curriculum_past_the_top_goes_to_a_random_level_and_first_episodes_start_low():
    levels = {int(curriculum_case(3, 5.0, 1.0)[0].level[0])}
    assert levels <= set(range(4))
    course = curriculum_case(-1, 0.0, 0.0, init_levels=(0, 1))[0]
    assert course.level[0] in (0, 1) and course.column[0] in (0, 1)
    assert curriculum_case(-1, 0.0, 0.0, init_levels=(2, 2))[0].level[0] == 2


def test_noise_wrappers_address_the_height_scan_by_name():
    from wrappers import ObservationNoise

    make = lambda: gym.make_vec(TASK, num_envs=64, **SMALL)  # noqa: E731
    bare, noisy = make(), ObservationNoise(make(), scales={"height_scan": 0.05})
    clean, _ = bare.reset(seed=5)
    perturbed, _ = noisy.reset(seed=5)
    scan, rest = OBS_GROUPS["height_scan"], slice(0, 50)
    np.testing.assert_array_equal(perturbed[:, rest], clean[:, rest])
    noise = (perturbed[:, scan] - clean[:, scan]).ravel()  # 64 x 187 draws
    assert abs(noise.mean()) < 0.003 and noise.std() == pytest.approx(0.05, rel=0.05)
    bare.close(), noisy.close()
