"""Go1 on rough terrain outside training: the NumPy height scan, the spec's terrain section, play on the terrain.

The reference observation (``PolicyIO`` on a plain ``MjData`` of the terrain model, ground read
from its heightfield) equals the env's, height scan included, on rollout states and on poses
placed over every tile type; the ``terrain`` section round-trips and refuses what does not fit;
``unilab play`` runs the shipped rough-terrain policy on the rebuilt terrain.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import mujoco
import numpy as np
import pytest

import unilab_envs  # noqa: F401  (registers UniLab/*)
from unilab_robot.deploy import ControllerState, PolicyIO, SpecError, load_spec, spec_from_dict, spec_from_json
from unilab_robot.deploy.episodes import fell, reset_episode
from unilab_envs.deploy_spec import deploy_spec_for, spec_from_env
from unilab_robot.deploy.height_scan import HeightMap, grid_points, play_model, tile_centers

from tests.deploy.conftest import one_error_line, run

TASK = "UniLab/Go1JoystickRough-v0"
N = 8
ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "policies" / "go1_rough"


def _state(task, i: int) -> ControllerState:
    return ControllerState(last_action=np.array(task.last_action[i]), command=np.array(task.command[i]),
                           phase=float(task.phase[i]))


def _quat(roll: float, pitch: float, yaw: float) -> np.ndarray:
    q = np.zeros(4)
    mujoco.mju_euler2Quat(q, np.array([roll, pitch, yaw]), "xyz")
    return q


@pytest.fixture(scope="module")
def rough():
    env = gym.make_vec(TASK, num_envs=N, num_threads=1)
    yield env, spec_from_env(env, TASK)
    env.close()


def _assert_reference_equals_env(env, spec, obs: np.ndarray) -> None:
    base = env.unwrapped
    model = base.batch.get_model(0)
    io = PolicyIO(spec, model)
    assert io.height_map is not None
    data = mujoco.MjData(model)
    scan = spec.observation.group("height_scan")
    for i in range(N):
        base.batch.get_data(i, data)
        ref = io.observe(data, _state(base.task, i))
        assert ref.dtype == np.float32 and ref.shape == obs[i].shape == (237,)
        np.testing.assert_allclose(ref[scan.start:scan.stop], obs[i, scan.start:scan.stop], rtol=0, atol=2e-6,
                                   err_msg=f"height scan, env {i}")
        np.testing.assert_allclose(ref, obs[i], rtol=1e-6, atol=2e-6, err_msg=f"env {i}")


def test_reference_observation_equals_env_observation_on_rollouts(rough):
    env, spec = rough
    rng = np.random.default_rng(0)
    for seed in (1, 2):
        obs, _ = env.reset(seed=seed)
        for _ in range(20):
            obs, *_ = env.step(rng.uniform(-1, 1, (N, 12)).astype(np.float32))
        _assert_reference_equals_env(env, spec, obs)


def test_reference_height_scan_equals_env_at_poses_over_every_tile_type(rough):
    """Bases put across the terrain (slopes, rough, blocks, stairs up and down, the border, off the grid),
    turned and tilted, including pitched straight up (no heading): the scan agrees with the env's."""
    env, spec = rough
    task = env.unwrapped.task
    centers = task.terrain.tile_centers
    qpos, qvel = env.unwrapped.batch.bind("qpos"), env.unwrapped.batch.bind("qvel")
    rng = np.random.default_rng(3)
    env.reset(seed=0)
    obs = np.zeros((N, task.obs_size), np.float32)
    priv = np.zeros((N, env.unwrapped.privileged_observation_space.shape[-1]), np.float32)
    for trial in range(6):
        for i in range(N):
            if i == N - 1 and trial == 0:
                xy = np.array([-1.3, 2.0])  # off the heightfield: both clamp to its edge
            else:
                level, column = rng.integers(centers.shape[0]), rng.integers(centers.shape[1])
                xy = centers[level, column] + rng.uniform(-2.4, 2.4, 2)
            pitch = math.pi / 2 if (i == 0 and trial == 1) else rng.uniform(-0.4, 0.4)
            qpos[i, :2] = xy
            qpos[i, 2] = rng.uniform(0.2, 0.6) + task.terrain.map.heights.max() * rng.uniform()
            qpos[i, 3:7] = _quat(rng.uniform(-0.4, 0.4), pitch, rng.uniform(-math.pi, math.pi))
            qpos[i, 7:] = rng.uniform(-0.3, 0.3, 12) + np.asarray(spec.action.home)
            qvel[i] = rng.uniform(-1, 1, qvel.shape[1])
        task.observe(np.arange(N), obs, priv)
        _assert_reference_equals_env(env, spec, obs)


def test_the_height_map_is_the_terrain_the_env_looks_up(rough):
    from unilab_envs.terrain import ground_height

    env, _ = rough
    task = env.unwrapped.task
    hm = HeightMap.from_model(env.unwrapped.batch.get_model(0), "floor")
    np.testing.assert_allclose(hm.heights, task.terrain.map.heights, rtol=0, atol=1e-6)
    rng = np.random.default_rng(0)
    xy = rng.uniform(-5.0, 100.0, (500, 2))
    expected = [ground_height(task.terrain.map, x, y) for x, y in xy]
    np.testing.assert_allclose(hm.at(xy[:, 0], xy[:, 1]), expected, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(grid_points((17, 11), 0.1), task.ground.scan_points)
    np.testing.assert_array_equal(tile_centers(spec_from_env(env, TASK).terrain), task.terrain.tile_centers)


def test_spec_round_trips_and_says_what_the_scan_is(rough):
    env, spec = rough
    assert spec_from_json(spec.to_json()) == spec
    data = json.loads(spec.to_json())
    t = data["terrain"]
    assert t["height_scan"] == {"grid": [17, 11], "spacing": 0.1, "frame": "heading"}
    assert t["ground_geom"] == "floor" and t["seed"] == 0 and t["start_levels"] == [0, 2]
    assert t["config"]["types"] == ["slope", "rough", "steps", "stairs_up", "stairs_down"]
    assert spec.observation.group("height_scan").size == 187 and spec.observation.size == 237
    assert spec.task.id == TASK and spec.command.ranges[0] == (-0.6, 1.0) and spec.episode.reset_xy_range == 0.25
    flat = json.loads(deploy_spec_for("UniLab/Go1Joystick-v0").to_json())
    assert "terrain" not in flat  # flat tasks' specs are as before


def test_task_keywords_reach_the_terrain_section():
    spec = deploy_spec_for(TASK, terrain_seed=3, init_levels=(1, 1), policy_height_scan=False,
                           terrain={"num_levels": 3, "tile_size": 4.0, "border": 1.0})
    assert spec.observation.size == 50 and "height_scan" not in [g.name for g in spec.observation.groups]
    assert spec.terrain.seed == 3 and spec.terrain.start_levels == (1, 1) and spec.terrain.config["num_levels"] == 3
    assert spec_from_json(spec.to_json()) == spec


def _mutate(spec, path, value):
    data = json.loads(spec.to_json())
    node = data
    for key in path[:-1]:
        node = node[key]
    if value is None:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return data


@pytest.mark.parametrize("path, value, message", [
    (("terrain",), None, "observation group 'height_scan' needs the spec's terrain section"),
    (("terrain", "height_scan", "grid"), [17, 10], "has 187 entries, but the terrain's scan grid (17, 10) has 170"),
    (("terrain", "height_scan", "frame"), "world", "frame must be one of ('heading',)"),
    (("terrain", "height_scan", "spacing"), 0, "spacing must be a number > 0"),
    (("terrain", "lidar"), True, "spec.terrain has unknown keys ['lidar']"),
    (("terrain", "seed"), None, "spec.terrain lacks keys ['seed']"),
    (("terrain", "start_levels"), [2, 1], "start_levels must be (low, high)"),
])
def test_bad_terrain_sections_are_refused(rough, path, value, message):
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                       .replace("]", r"\]")):
        spec_from_dict(_mutate(rough[1], path, value))


def test_a_model_without_the_terrain_needs_a_height_map(rough):
    """On a robot the model has no heightfield: the scan asks for the robot's map, then uses it."""
    from unilab_robot.assets import go1

    _, spec = rough
    model = mujoco.MjModel.from_xml_path(str(go1.MJCF_PATH))
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    io = PolicyIO(spec, model)
    state = io.initial_state(data)
    with pytest.raises(SpecError, match="set PolicyIO.height_map"):
        io.observe(data, state)
    io.height_map = HeightMap(np.full((4, 4), 0.05), -1.0, -1.0, 1.0)  # a flat map 5 cm up
    scan = io.observe(data, state)[50:]
    np.testing.assert_allclose(scan, data.qpos[2] - 0.05, atol=1e-6)


def test_play_episodes_start_on_the_start_tiles_and_fall_from_the_ground(rough):
    env, spec = rough
    model = play_model(spec, str(__import__("unilab_robot.assets.go1", fromlist=["x"]).MJCF_PATH))
    model.opt.timestep = spec.timing.physics_dt
    data, io = mujoco.MjData(model), PolicyIO(spec, model)
    centers = tile_centers(spec.terrain)
    rng = np.random.default_rng(0)
    for _ in range(20):
        reset_episode(io, model, data, rng)
        xy = data.qpos[:2]
        d = np.abs(centers[:3] - xy).max(axis=-1)  # start levels 0..2
        assert d.min() <= spec.episode.reset_xy_range + 1e-9
        clearance = data.qpos[2] - io.height_map.height(*xy)
        assert 0.25 < clearance < 0.5 and not fell(io, data)
    data.qpos[2] = io.height_map.height(*data.qpos[:2]) + spec.episode.min_base_height - 0.01
    assert fell(io, data)


@pytest.fixture(scope="module")
def rough_run(tmp_path_factory) -> str:
    """The shipped rough-terrain policy, exported afresh into a temporary folder."""
    folder = tmp_path_factory.mktemp("rough") / "go1_rough"
    folder.mkdir()
    for name in ("checkpoint.pt", "config.yaml"):
        shutil.copy(SHIPPED / name, folder / name)
    assert run(["export", str(folder)]) == 0
    return str(folder)


def test_export_writes_the_rough_spec_and_play_walks_on_the_terrain(rough_run, capsys):
    from trainers.play import Player, find_policy, run_headless

    spec = load_spec(Path(rough_run) / "deploy_spec.json")
    assert spec == load_spec(Path(rough_run) / "policy.onnx") and spec.terrain is not None
    player = Player(find_policy(rough_run), seed=0)
    assert mujoco.mj_name2id(player.model, mujoco.mjtObj.mjOBJ_HFIELD, "terrain") >= 0
    res = run_headless(player, 3, progress=False)
    assert np.isfinite(player.data.qpos).all() and res.episodes == 3
    assert res.fall_rate <= 1 / 3 and res.tracking_lin_vel > 0.6, res.summary()
    capsys.readouterr()
    assert run(["play", rough_run, "--headless", "--episodes", "1", "--no-progress"]) == 0
    assert "UniLab/Go1JoystickRough-v0: episodes 1" in capsys.readouterr().out


def test_play_on_a_model_without_a_floor_plane_ends_in_one_line(rough_run, tmp_path, capsys):
    from unilab_robot.assets import go1

    xml = tmp_path / "no_floor.xml"
    xml.write_text(go1.MJCF_PATH.read_text().replace('name="floor"', 'name="ground"'))
    assert run(["play", rough_run, "--headless", "--model-path", str(xml)]) == 2
    assert "no plane geom named 'floor'" in one_error_line(capsys)


def test_play_on_the_terrain_imports_no_numba(rough_run):
    code = ("import sys\n"
            "from trainers.play import Player, find_policy\n"
            f"Player(find_policy({rough_run!r}))\n"
            "print(sorted(m for m in ('torch', 'numba', 'mujoco.batch') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
