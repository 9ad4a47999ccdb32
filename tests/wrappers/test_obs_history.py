"""``ObservationHistory``: exact shifts, episode restarts in both autoreset modes, resume, mirror, runtime agreement."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import unilab_envs  # noqa: F401  (registers the tasks)
from tests.wrappers.conftest import MODES, Tap, make_go1
from trainers.common.envs import make_vec_env
from unilab_envs.config import ConfigError
from unilab_robot.deploy.history import HistoryConfig, HistoryStack, history_section
from wrappers import ObservationHistory, Sim2Real

GRASP = "UniLab/UR5Grasp-v0"
CAMERA = ("object_pos", "object_quat", "object_vel", "object_ang_vel", "target_gap")


def grasp_stack(num_envs=4, *, mode=AutoresetMode.SAME_STEP, steps=9, groups=CAMERA, length=4, tap=True):
    """UR5Grasp under ``ur5_grasp_real`` with short episodes, a Tap above the whole sim2real stack (unless
    ``tap=False``: a Tap cannot save its state), the history on top."""
    env = gym.make_vec(GRASP, num_envs=num_envs, autoreset_mode=mode, max_episode_steps=steps, num_threads=1)
    below = Sim2Real(env, "ur5_grasp_real")
    below = Tap(below) if tap else below
    return ObservationHistory(below, groups=groups, length=length), below


def actions(rng, env):
    return rng.uniform(-1, 1, (env.num_envs, *env.single_action_space.shape)).astype(np.float32)


def test_groups_and_space_name_the_new_columns():
    hist, tap = grasp_stack(groups=("object_pos", "target_gap"), length=3)
    base = tap.single_observation_space.shape[0]
    assert hist.single_observation_space.shape == (base + 2 * 4,)
    assert hist.observation_space.shape == (4, base + 8)
    names = list(hist.obs_groups)
    assert names[-4:] == ["object_pos@1", "target_gap@1", "object_pos@2", "target_gap@2"]
    assert hist.obs_groups["object_pos@1"] == slice(base, base + 3)
    assert hist.obs_groups["target_gap@2"] == slice(base + 7, base + 8)
    assert hist.env.unwrapped.obs_groups == tap.unwrapped.obs_groups  # the task's own layout is untouched
    one = ObservationHistory(tap, groups=("object_pos",), length=1)  # the current frame alone
    assert one.single_observation_space.shape == (base,)


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
def test_frame_k_back_is_the_observation_of_k_steps_ago_and_restarts_each_episode(mode, rng):
    length = 4
    hist, tap = grasp_stack(num_envs=5, mode=mode, steps=6, length=length)
    base = tap.single_observation_space.shape[0]
    cols = np.concatenate([np.arange(base)[tap.unwrapped.obs_groups[g]] for g in CAMERA])
    width = cols.size

    def expected(frames):  # the stacked observation of an episode's frames so far (the policy's view)
        past = [frames[max(len(frames) - 1 - k, 0)][cols] for k in range(1, length)]
        return np.concatenate([frames[-1], *past])

    obs, _ = hist.reset(seed=3)
    episodes = [[tap.obs[i]] for i in range(hist.num_envs)]  # frames the policy received, per env, this episode
    np.testing.assert_array_equal(obs, np.stack([expected(e) for e in episodes]))
    pending = np.zeros(hist.num_envs, bool)
    starts = finals = 0
    for _ in range(20):
        obs, _, term, trunc, info = hist.step(actions(rng, hist))
        done = term | trunc
        started = done if mode is AutoresetMode.SAME_STEP else pending
        for i in range(hist.num_envs):
            if mode is AutoresetMode.SAME_STEP and done[i]:  # the old episode's last frame with its own past
                assert info["_final_obs"][i]
                np.testing.assert_array_equal(info["final_obs"][i], expected(episodes[i] + [tap.final_obs[i]]))
                finals += 1
            if started[i]:
                episodes[i] = []
                starts += 1
            episodes[i].append(tap.obs[i])
            np.testing.assert_array_equal(obs[i], expected(episodes[i]))
        # the shift itself, in the obs the wrapper returned: block k is the current block k steps ago
        assert obs.shape[1] == base + (length - 1) * width
        pending = done
    assert starts >= hist.num_envs and (finals > 0) == (mode is AutoresetMode.SAME_STEP)


def test_the_history_holds_what_the_policy_received_not_the_clean_observation(rng):
    hist, tap = grasp_stack(num_envs=2, steps=50)
    clean = tap.unwrapped  # the env's own observation, before latency, noise and loss
    obs, _ = hist.reset(seed=0)
    before = obs.copy()
    obs, *_ = hist.step(actions(rng, hist))
    at = hist.obs_groups["object_pos@1"]
    np.testing.assert_array_equal(obs[:, at], before[:, clean.obs_groups["object_pos"]])
    assert not np.array_equal(tap.obs, clean._obs)  # the stack below did perturb it


def test_privileged_observation_passes_unchanged(rng):
    plain = Sim2Real(make_go1(3), {"extends": "go1_real", "privileged_critic": True})
    hist = ObservationHistory(Sim2Real(make_go1(3), {"extends": "go1_real", "privileged_critic": True}),
                              groups=("gyro", "joint_vel"), length=3)
    assert hist.privileged_observation_space == plain.privileged_observation_space
    (a, ia), (b, ib) = plain.reset(seed=1), hist.reset(seed=1)
    np.testing.assert_array_equal(ia["privileged_obs"], ib["privileged_obs"])
    for _ in range(4):
        act = actions(rng, plain)
        a, *_, ia = plain.step(act)
        b, *_, ib = hist.step(act)
        np.testing.assert_array_equal(ia["privileged_obs"], ib["privileged_obs"])
        np.testing.assert_array_equal(a, b[:, :a.shape[1]])


def test_state_round_trip_resumes_exactly(rng):
    hist, _ = grasp_stack(num_envs=3, steps=5, tap=False)
    hist.reset(seed=2)
    for _ in range(7):
        hist.step(actions(rng, hist))
    state = hist.get_state()
    script = [actions(rng, hist) for _ in range(9)]
    first = [hist.step(a)[0] for a in script]
    twin, _ = grasp_stack(num_envs=3, steps=5, tap=False)  # a fresh stack built the same way
    twin.reset(seed=99)
    twin.set_state(state)
    again = [twin.step(a)[0] for a in script]
    for x, y in zip(first, again):
        np.testing.assert_array_equal(x, y)
    other, _ = grasp_stack(num_envs=3, steps=5, length=2, tap=False)
    other.reset(seed=0)
    with pytest.raises(ValueError, match="ObservationHistory state"):
        other.set_state(state)


def test_bad_configs_say_what_is_wrong():
    env = gym.make_vec(GRASP, num_envs=1, num_threads=1)
    with pytest.raises(ConfigError, match=r"unknown observation group\(s\) \['object_position'\].*object_pos"):
        ObservationHistory(env, groups=("object_position",), length=3)
    with pytest.raises(ConfigError, match=r"obs_history.length must be a whole number of frames in \[1, 100\]"):
        ObservationHistory(env, groups=("object_pos",), length=0)
    with pytest.raises(ConfigError, match="obs_history.groups must name at least one"):
        ObservationHistory(env, groups=(), length=2)
    with pytest.raises(ConfigError, match=r"unknown obs_history key 'obs_history.lenght'. Did you mean 'obs_history.length'"):
        ObservationHistory(env, {"groups": ["object_pos"], "lenght": 2})
    with pytest.raises(ConfigError, match="unknown observation group"):
        make_vec_env(GRASP, 1, {"num_threads": 1}, obs_history={"groups": ["nope"], "length": 2})


def test_mirror_of_the_history_columns_is_the_mirror_of_their_frames(rng):
    hist = ObservationHistory(make_go1(4), groups=("gyro", "joint_pos", "last_action"), length=3)
    base_map = hist.unwrapped.task.mirror
    mirror = hist.extend_mirror(base_map)
    size = hist.single_observation_space.shape[0]
    assert mirror.obs_perm.shape == mirror.obs_sign.shape == (size,)
    assert np.array_equal(np.sort(mirror.obs_perm), np.arange(size))  # a permutation ...
    np.testing.assert_array_equal(mirror.observation(mirror.observation(np.arange(size, dtype=float) + 1.0)),
                                  np.arange(size) + 1.0)  # ... and its own inverse
    base = base_map.obs_perm.shape[0]
    frames = [hist.reset(seed=0)[0][:, :base]]
    for _ in range(4):
        obs, *_ = hist.step(actions(rng, hist))
        frames.append(obs[:, :base])
        mirrored = mirror.observation(obs)
        np.testing.assert_array_equal(mirrored[:, :base], base_map.observation(obs[:, :base]))
        for c in hist.history:  # each past column block is the mirror image of that past frame's group
            past = frames[max(len(frames) - 1 - c.lag, 0)]
            want = base_map.observation(past)[:, hist.env.unwrapped.obs_groups[c.group]]
            np.testing.assert_array_equal(mirrored[:, c.start:c.stop], want)
    # a map that sends a history group's entries into a group without a history is refused
    groups = hist.env.unwrapped.obs_groups
    perm = base_map.obs_perm.copy()
    gyro, gravity = np.arange(base)[groups["gyro"]], np.arange(base)[groups["gravity"]]
    perm[gyro], perm[gravity] = gravity, gyro
    crossed = dataclasses.replace(base_map, obs_perm=perm)
    with pytest.raises(ConfigError, match=r"group 'gyro' reads group\(s\) \['gravity'\], which have no history"):
        hist.extend_mirror(crossed)


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
def test_the_deploy_runtime_stacks_what_the_wrapper_stacks(mode, rng):
    config = HistoryConfig(groups=("object_pos", "object_vel", "target_gap"), length=3)
    hist, tap = grasp_stack(num_envs=3, mode=mode, steps=5, groups=config.groups, length=config.length)
    groups, size = tap.unwrapped.obs_groups, tap.single_observation_space.shape[0]
    robots = [HistoryStack(groups, size, config) for _ in range(hist.num_envs)]  # one runtime per robot
    assert robots[0].size == hist.single_observation_space.shape[0]
    assert [c.name for c in robots[0].columns] == [c.name for c in hist.history]
    obs, _ = hist.reset(seed=4)
    for i, robot in enumerate(robots):
        robot.reset()
        np.testing.assert_array_equal(robot(tap.obs[i]), obs[i])
    pending = np.zeros(hist.num_envs, bool)
    for _ in range(14):
        obs, _, term, trunc, _ = hist.step(actions(rng, hist))
        started = (term | trunc) if mode is AutoresetMode.SAME_STEP else pending
        for i, robot in enumerate(robots):
            if started[i]:
                robot.reset()
            np.testing.assert_array_equal(robot(tap.obs[i]), obs[i])
        pending = term | trunc


def test_the_spec_section_round_trips_and_is_checked():
    from unilab_robot.deploy import spec_from_json
    from unilab_envs.deploy_spec import deploy_spec_for
    from unilab_robot.deploy.spec import SpecError

    spec = deploy_spec_for("UniLab/UR5Reach-v0")
    groups = {g.name: (g.start, g.stop) for g in spec.observation.groups}
    section = history_section(groups, spec.observation.size, HistoryConfig(groups=("ee_to_target", "joint_vel"), length=3))
    with_history = dataclasses.replace(spec, history=section)
    assert with_history.input_size == spec.observation.size + 2 * 9
    back = spec_from_json(with_history.to_json())
    assert back == with_history and back.history.columns[0].name == "ee_to_target@1"
    assert "history" not in spec.to_dict()  # a spec without one reads as before
    stack = HistoryStack.from_spec(back)
    assert stack.size == back.input_size and HistoryStack.from_spec(spec) is None
    data = with_history.to_dict()
    data["history"]["columns"][0]["stop"] += 1
    with pytest.raises(SpecError, match="history: its columns or size do not match"):
        spec_from_json(__import__("json").dumps(data))
    data = with_history.to_dict()
    data["history"]["groups"] = ["nope"]
    with pytest.raises(SpecError, match=r"history: obs_history: unknown observation group"):
        spec_from_json(__import__("json").dumps(data))
