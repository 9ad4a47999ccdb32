"""Observation groups are declared once: docs/adding_a_task.md's ``my_groups.py`` (a Go1 whose policy also
sees its height), as pasted, gets its group written by its own writer, rebuilt by its builder on the robot
side, noised by its declared scale and described in the deploy spec; the bundled tasks' slices, spec
groups and default noise come from their declarations; bad declarations are refused with the list."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

import gymnasium as gym
import mujoco
import numba as nb
import numpy as np
import pytest

import unilab_envs
from unilab_envs.core.obs_groups import ObsGroup, resolve_groups
from unilab_robot.deploy import PolicyIO, SpecError
from unilab_envs.deploy_spec import spec_from_env
from unilab_robot.deploy.reference import GROUP_BUILDERS
from unilab_envs.deploy_spec import task_group_builders
from unilab_envs.tasks.go1_joystick import CRITIC_GROUPS, GO1, POLICY_GROUPS, Go1Joystick, Go1JoystickConfig
from wrappers import ObservationHistory, ObservationNoise
from wrappers.noise import declared_noise_scales

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "adding_a_task.md").read_text()
SECTION = PAGE[PAGE.index("## Add an observation group"):PAGE.index("## On terrain")]
TASK_ID = "MyLab/TallGo1-v0"
N = 6


@pytest.fixture(scope="module")
def my_groups():
    """The page's ``my_groups.py`` block, run as written (its id unregistered afterwards)."""
    namespace: dict = {"__name__": "my_groups"}
    exec(re.search(r"```python\n(# my_groups\.py\n.*?)```", SECTION, re.S).group(1), namespace)
    yield namespace
    gym.registry.pop(TASK_ID, None)


def _module(namespace: dict) -> ModuleType:
    """The exec'd page block as a module (what ``task_group_builders`` reads)."""
    module = ModuleType("my_groups")
    module.__dict__.update(namespace)
    return module


def _rollout(env_id: str, steps: int = 15):
    env = gym.make_vec(env_id, num_envs=N, num_threads=1)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=4)
    for _ in range(steps):
        obs, *_ = env.step(rng.uniform(-1, 1, (N, 12)).astype(np.float32))
    return env, obs


def test_your_group_is_written_by_its_writer_after_the_layers_groups_unchanged(my_groups):
    assert my_groups["TallGo1"].obs_groups["base_height"] == slice(50, 51)
    tall, tall_obs = _rollout(TASK_ID)
    plain, plain_obs = _rollout("UniLab/Go1Joystick-v0")
    try:
        np.testing.assert_array_equal(tall_obs[:, :50], plain_obs)  # the same physics and groups, bit for bit
        qpos = tall.unwrapped.batch.bind("qpos")
        np.testing.assert_allclose(tall_obs[:, 50], qpos[:, 2], rtol=1e-6)  # flat ground: height above z = 0
        assert tall.single_observation_space.shape == (51,)
    finally:
        tall.close()
        plain.close()


def test_your_group_goes_into_the_deploy_spec_and_the_robot_side_rebuilds_it(my_groups):
    env, obs = _rollout(TASK_ID)
    try:
        spec = spec_from_env(env, TASK_ID)
        group = {g.name: g for g in spec.observation.groups}["base_height"]
        assert (group.start, group.stop, group.unit, group.meaning) == (50, 51, "m", "trunk height above the ground")
        assert "base_height" not in GROUP_BUILDERS  # the robot side's table is its own: no class fills it
        builders = task_group_builders(_module(my_groups))
        assert builders == {"base_height": my_groups["build_base_height"]}  # read from the declaration when asked
        base = env.unwrapped
        with pytest.raises(SpecError, match=r"\['base_height'\] have no reference builder.*builders="):
            PolicyIO(spec, base.batch.get_model(0))
        io, data = PolicyIO(spec, base.batch.get_model(0), builders=builders), mujoco.MjData(base.batch.get_model(0))
        for i in range(N):
            base.batch.get_data(i, data)
            state = io.initial_state(data, command=base.task.command[i], phase=float(base.task.phase[i]))
            state.last_action = np.array(base.task.last_action[i])
            np.testing.assert_allclose(io.observe(data, state), obs[i], rtol=1e-6, atol=1e-6, err_msg=f"env {i}")
    finally:
        env.close()


def test_noise_without_scales_uses_the_declared_ones_and_history_stacks_your_group(my_groups):
    env = gym.make_vec(TASK_ID, num_envs=2000, num_threads=1)
    try:
        noisy = ObservationNoise(env, distribution="uniform")
        assert dict(noisy.config.scales) == {"linvel": 0.1, "gyro": 0.2, "gravity": 0.05, "joint_pos": 0.03,
                                             "joint_vel": 1.5, "base_height": 0.02}
        clean, _ = env.reset(seed=1)
        noisy_obs, _ = noisy.reset(seed=1)
        error = noisy_obs[:, 50] - clean[:, 50]
        assert np.abs(error).max() <= 0.02 + 1e-6 and abs(error.std() - 0.02 / np.sqrt(3)) < 0.0015  # uniform on +-0.02
        history = ObservationHistory(env, groups=["base_height"], length=3)
        assert history.obs_groups["base_height"] == slice(50, 51) and history.single_observation_space.shape == (51 + 2,)
    finally:
        env.close()


NO_DEPLOY_SPEC: set[str] = set()  # every bundled task has a deploy spec (G1Track since its motion section)


@pytest.mark.parametrize("task", sorted(unilab_envs.TASKS))
def test_bundled_tasks_groups_are_their_declarations_laid_end_to_end(task):
    env = gym.make_vec(task, num_envs=1, num_threads=1)
    try:
        base, declared = env.unwrapped, env.unwrapped.task.declared_groups
        at = 0
        for name, cols in base.obs_groups.items():  # end to end, each of its declared size
            size = {"joints": base.task.action_size}.get(declared[name].size, declared[name].size)
            assert cols.start == at and (cols.stop - cols.start == size or not isinstance(size, int)), name
            at = cols.stop
        assert at == env.single_observation_space.shape[0]
        privileged = getattr(base.task, "privileged_obs_groups", {})
        assert max((s.stop for s in privileged.values()), default=0) == base.task.privileged_obs_size
        assert declared_noise_scales(env) == {n: declared[n].noise for n in base.obs_groups if declared[n].noise is not None}
        if task in NO_DEPLOY_SPEC:
            return
        spec = spec_from_env(env, task)
        assert [(g.name, g.start, g.stop, g.unit, g.meaning) for g in spec.observation.groups] == [
            (n, s.start, s.stop, declared[n].units, declared[n].doc) for n, s in base.obs_groups.items()]
        assert all(declared[n].builder is GROUP_BUILDERS[n] for n in base.obs_groups)  # the robot side has each
        assert declared_noise_scales(env) == {n: declared[n].noise for n in base.obs_groups if declared[n].noise is not None}
    finally:
        env.close()


@nb.njit(inline="always")
def _write_spin(out, wz, yaw_rate_limit):
    out[0] = wz / yaw_rate_limit


def test_bad_declarations_are_refused_with_what_exists():
    with pytest.raises(ValueError, match=r"unknown policy observation group 'gyr'; the locomotion groups are \[.*'gyro'"):
        resolve_groups("locomotion", ("linvel", "gyr"), "policy")
    with pytest.raises(TypeError, match=r"writer argument 'yaw_rate_limit' is none of the quantities this task offers: i, physics"):
        class Spin(Go1Joystick, config=Go1JoystickConfig, legged=GO1,
                   obs_groups=(*POLICY_GROUPS, ObsGroup("spin", 1, "1", "yaw rate / limit", writer=_write_spin))):
            pass
    with pytest.raises(ValueError, match=r"'spin' has no writer"):
        class NoWriter(Go1Joystick, config=Go1JoystickConfig, legged=GO1, obs_groups=(*POLICY_GROUPS, ObsGroup("spin", 1, "1", "x"))):
            pass
    with pytest.raises(ValueError, match=r"'gyro' is given slice\(3, 7, None\), its place laid end to end with its size is "
                                         r"slice\(3, 6, None\)"):
        class Misplaced(Go1Joystick, config=Go1JoystickConfig, legged=GO1,
                        obs_groups={"linvel": slice(0, 3), "gyro": slice(3, 7)}, privileged_obs_groups=CRITIC_GROUPS):
            pass
    with pytest.raises(TypeError, match="first argument must be 'out'"):
        ObsGroup("spin", 1, "1", "x", writer=nb.njit(inline="always")(lambda wz: None))


def test_play_imports_the_module_a_specs_own_groups_come_from(my_groups, tmp_path, monkeypatch):
    """``unilab play`` on a spec of ``my_groups:MyLab/TallGo1-v0`` imports ``my_groups`` (from the working
    directory) when the robot side lacks a group's builder, and takes the builder its declaration gives."""
    from types import SimpleNamespace

    from trainers.play.policy import _task_group_builders

    (tmp_path / "my_groups.py").write_text(re.search(r"```python\n(# my_groups\.py\n.*?)```", SECTION, re.S).group(1))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_groups", raising=False)
    monkeypatch.setattr(gym, "registry", dict(gym.registry))  # the file registers the page's id again
    gym.registry.pop(TASK_ID, None)

    def spec(*names):
        return SimpleNamespace(task=SimpleNamespace(id=f"my_groups:{TASK_ID}"),
                               observation=SimpleNamespace(groups=[SimpleNamespace(name=n) for n in names]))

    assert _task_group_builders(spec("linvel", "gyro")) == {}  # the robot side builds them all: nothing imported
    assert "my_groups" not in sys.modules
    builders = _task_group_builders(spec("linvel", "base_height"))
    assert builders == {"base_height": sys.modules["my_groups"].build_base_height}
    assert "base_height" not in GROUP_BUILDERS
    monkeypatch.delitem(sys.modules, "my_groups")


def test_a_builder_for_a_group_the_robot_side_builds_is_refused():
    spec = SimpleNamespace(observation=SimpleNamespace(groups=[]))
    with pytest.raises(SpecError, match=r"\['gyro'\] already have a robot-side builder"):
        PolicyIO(spec, None, builders={"gyro": lambda io, data, state: 0.0})
