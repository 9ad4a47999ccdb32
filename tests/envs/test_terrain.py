"""The heightfield terrain: generation, its MuJoCo hfield, and the Numba lookups that must agree with it."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from unilab_robot.assets import go1
from unilab_envs.config import ConfigError
from unilab_envs.terrain import (TerrainConfig, flat_terrain, generate_terrain, ground_height, scan_heights,
                                 scan_points, terrain_model)

CFG = TerrainConfig(tile_size=3.0, num_levels=4, border=1.0,
                    types=("flat", "slope", "rough", "steps", "stairs_up", "stairs_down"))
KIND = {name: t for t, name in enumerate(CFG.types)}


@pytest.fixture(scope="module")
def terrain():
    return generate_terrain(CFG, seed=3)


@pytest.fixture(scope="module")
def model(terrain):
    return terrain_model(str(go1.MJCF_PATH), terrain.map, sim_dt=0.004)


def tile_heights(terrain, level: int, kind: str, cfg: TerrainConfig = CFG) -> np.ndarray:
    """The samples owned by one tile (its low edge included, its high edge not)."""
    m = round(cfg.tile_size / cfg.resolution)
    nb = round(cfg.border / cfg.resolution)
    ix, iy = nb + level * m, nb + KIND[kind] * m
    return terrain.map.heights[ix:ix + m, iy:iy + m]


def test_same_seed_same_heights_and_other_seed_other_rough(terrain):
    again = generate_terrain(CFG, seed=3)
    np.testing.assert_array_equal(again.map.heights, terrain.map.heights)
    np.testing.assert_array_equal(again.tile_centers, terrain.tile_centers)
    other = generate_terrain(CFG, seed=4)
    assert not np.array_equal(tile_heights(other, 2, "rough"), tile_heights(terrain, 2, "rough"))
    assert not np.array_equal(tile_heights(other, 2, "steps"), tile_heights(terrain, 2, "steps"))
    np.testing.assert_array_equal(tile_heights(other, 2, "stairs_up"), tile_heights(terrain, 2, "stairs_up"))


def test_layout_and_tile_centres(terrain):
    heights = terrain.map.heights
    assert heights.dtype == np.float64
    assert heights.shape == (round((2 * 1.0 + 4 * 3.0) / 0.05) + 1, round((2 * 1.0 + 6 * 3.0) / 0.05) + 1)
    assert terrain.tile_centers.shape == (4, 6, 2) and (terrain.num_levels, terrain.num_types) == (4, 6)
    np.testing.assert_allclose(terrain.tile_centers[2, 5], (1.0 + 2.5 * 3.0, 1.0 + 5.5 * 3.0))
    nb = round(1.0 / 0.05)
    assert not heights[:nb].any() and not heights[-nb:].any()  # flat border
    assert not heights[:, :nb].any() and not heights[:, -nb:].any()


def test_platform_at_every_tile_centre_is_flat(terrain):
    half = 0.5 * CFG.platform
    offsets = np.linspace(-half, half, 21)
    for level in range(CFG.num_levels):
        for t in range(len(CFG.types)):
            cx, cy = terrain.tile_centers[level, t]
            z = [ground_height(terrain.map, cx + dx, cy + dy) for dx in offsets for dy in offsets]
            assert np.ptp(z) == 0.0, (level, CFG.types[t])


def test_stair_riser_at_each_level_is_the_configured_height(terrain):
    m = round(CFG.tile_size / CFG.resolution)
    for level in range(CFG.num_levels):
        riser = CFG.stair_height[0] + CFG.difficulty(level) * (CFG.stair_height[1] - CFG.stair_height[0])
        for kind, sign in (("stairs_up", 1.0), ("stairs_down", -1.0)):
            profile = tile_heights(terrain, level, kind)[:, m // 2]  # edge to edge through the centre
            jumps = np.diff(profile)
            jumps = jumps[jumps != 0]
            np.testing.assert_allclose(np.abs(jumps), riser, atol=1e-12)
            steps = math.floor((0.5 * CFG.tile_size - 0.5 * CFG.platform) / CFG.stair_width + 1e-9)
            assert profile[m // 2] == pytest.approx(sign * steps * riser)  # the platform is the top / bottom
            tread = np.diff(np.flatnonzero(np.diff(profile[: m // 2])))
            np.testing.assert_array_equal(tread, round(CFG.stair_width / CFG.resolution))


def test_difficulty_grows_with_level(terrain):
    slope_top = [tile_heights(terrain, lv, "slope")[round(1.5 / 0.05), round(1.5 / 0.05)] for lv in range(4)]
    for level, top in enumerate(slope_top):
        expected = math.tan(CFG.difficulty(level) * CFG.max_slope) * (0.5 * CFG.tile_size - 0.5 * CFG.platform)
        assert top == pytest.approx((1 if level % 2 == 0 else -1) * expected)  # hill on even levels, pit on odd
    assert np.all(np.diff(np.abs(slope_top)) > 0)
    ptp = [np.ptp(tile_heights(terrain, lv, "rough")) for lv in range(4)]
    assert np.all(np.diff(ptp) > 0)
    for level in range(4):
        d = CFG.difficulty(level)
        amplitude = CFG.rough_amplitude[0] + d * (CFG.rough_amplitude[1] - CFG.rough_amplitude[0])
        assert 0.5 * amplitude < ptp[level] <= amplitude
        h = CFG.step_height[0] + d * (CFG.step_height[1] - CFG.step_height[0])
        blocks = np.unique(np.abs(tile_heights(terrain, level, "steps")))
        assert set(np.round(blocks / h, 9)) <= {0.0, 0.5, 1.0} and blocks.max() > 0
    assert not tile_heights(terrain, 3, "flat").any()


def test_ground_height_agrees_with_mj_ray_on_every_tile(terrain, model):
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    rng = np.random.default_rng(0)
    geomid = np.zeros(1, np.int32)
    trunk = model.body("trunk").id
    top = terrain.map.heights.max() + 1.0
    worst = 0.0
    for level in range(CFG.num_levels):
        for t in range(len(CFG.types)):
            cx, cy = terrain.tile_centers[level, t]
            points = rng.uniform(-0.5 * CFG.tile_size, 0.5 * CFG.tile_size, size=(60, 2)) + (cx, cy)
            points[:4] = np.round(points[:4] / CFG.resolution) * CFG.resolution  # on samples
            points[4:8, 1] = points[4:8, 0] - cx + cy  # on cell diagonals
            for x, y in points:
                dist = mujoco.mj_ray(model, data, np.array([x, y, top]), np.array([0.0, 0.0, -1.0]), None, 1,
                                     trunk, geomid)
                assert geomid[0] == model.geom("floor").id
                worst = max(worst, abs((top - dist) - ground_height(terrain.map, x, y)))
    assert worst < 1e-6


def test_the_robot_stands_on_the_terrain_as_on_the_floor(terrain, model):
    """Contacts use the same surface as the rays: a Go1 dropped on a raised stairs platform rests on it
    exactly as on a flat tile, and within a few mm of the plane floor (MuJoCo makes one contact per
    hfield prism under a foot, two or so here against one on a plane, so each sinks a little less)."""
    flat = mujoco.MjModel.from_xml_path(str(go1.MJCF_PATH))
    rest = []
    for mdl, (cx, cy) in ((flat, (0.0, 0.0)), (model, terrain.tile_centers[3, KIND["flat"]]),
                          (model, terrain.tile_centers[3, KIND["stairs_up"]])):
        data = mujoco.MjData(mdl)
        mujoco.mj_resetDataKeyframe(mdl, data, mdl.key("home").id)
        ground = ground_height(terrain.map, cx, cy) if mdl is model else 0.0
        data.qpos[:3] += (cx, cy, ground)
        data.ctrl[:] = data.qpos[7:19]
        for _ in range(200):
            mujoco.mj_step(mdl, data)
        rest.append(data.qpos[2] - ground)
    assert ground_height(terrain.map, *terrain.tile_centers[3, KIND["stairs_up"]]) > 0.3
    assert rest[2] == pytest.approx(rest[1], abs=1e-6)
    assert rest[1] == pytest.approx(rest[0], abs=5e-3) and rest[0] > 0.2


def test_scan_heights_rotates_the_grid_by_yaw(terrain):
    points = scan_points()
    assert points.shape == (187, 2) and points.dtype == np.float64
    np.testing.assert_allclose(points[0], (-0.8, -0.5))
    np.testing.assert_allclose(points[1], (-0.8, -0.4))  # x-major: y varies fastest
    np.testing.assert_allclose(points.mean(axis=0), 0.0, atol=1e-12)
    cx, cy = terrain.tile_centers[2, KIND["rough"]]
    yaw = 0.7
    for dtype in (np.float32, np.float64):
        out = np.zeros((2, 187), dtype)
        scan_heights(out[1], terrain.map, cx, cy, 0.3, math.cos(yaw), math.sin(yaw), points)
        wx = cx + math.cos(yaw) * points[:, 0] - math.sin(yaw) * points[:, 1]
        wy = cy + math.sin(yaw) * points[:, 0] + math.cos(yaw) * points[:, 1]
        expected = [0.3 - ground_height(terrain.map, x, y) for x, y in zip(wx, wy)]
        np.testing.assert_allclose(out[1], expected, rtol=1e-6)
        assert not out[0].any()


def test_lookup_clamps_outside_the_grid_and_flat_terrain_is_zero(terrain):
    heights = terrain.map.heights
    assert ground_height(terrain.map, -50.0, -50.0) == heights[0, 0]
    assert ground_height(terrain.map, 1e3, 1e3) == heights[-1, -1]
    assert ground_height(terrain.map, 1e3, 5 * 0.05) == heights[-1, 5]
    flat = flat_terrain()
    for x, y in ((0.0, 0.0), (0.3, -0.7), (-1e4, 2e4), (123.4, 5.6)):
        assert ground_height(flat, x, y) == 0.0
    out = np.ones(187)
    scan_heights(out, flat, 0.0, 0.0, 0.25, 1.0, 0.0, scan_points())
    assert np.all(out == 0.25)


def test_terrain_model_keeps_the_floor_contact_settings(model):
    floor = mujoco.MjModel.from_xml_path(str(go1.MJCF_PATH)).geom("floor")
    ground = model.geom("floor")
    assert ground.type == mujoco.mjtGeom.mjGEOM_HFIELD
    np.testing.assert_array_equal(ground.friction, floor.friction)
    assert (ground.contype, ground.conaffinity, ground.matid) == (floor.contype, floor.conaffinity, floor.matid)
    assert model.opt.timestep == 0.004
    with pytest.raises(FileNotFoundError, match="does not exist"):
        terrain_model("no/such/robot.xml", flat_terrain(), 0.004)


def test_config_errors_say_what_is_wrong():
    with pytest.raises(ConfigError, match="unknown terrain type 'stair_up'. Did you mean 'stairs_up'"):
        TerrainConfig(types=("slope", "stair_up")).validate()
    with pytest.raises(ConfigError, match="tile_size must be > 0 and a whole multiple of resolution"):
        TerrainConfig(tile_size=5.02).validate()
    with pytest.raises(ConfigError, match="platform must be in"):
        TerrainConfig(platform=6.0).validate()
    with pytest.raises(ConfigError, match="num_levels must be an int >= 2"):
        TerrainConfig(num_levels=1).validate()
    with pytest.raises(ConfigError, match="stair_height must have low <= high"):
        TerrainConfig(stair_height=(0.1, 0.05)).validate()
    with pytest.raises(ConfigError, match="types must be a non-empty tuple"):
        generate_terrain(TerrainConfig(types=()), seed=0)
    TerrainConfig().validate()
