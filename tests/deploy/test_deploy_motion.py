"""Motion tracking on the robot side: G1Track's deploy spec, and the robot-side observation (the reference groups
from the clip files beside the spec, NumPy) equal to the env's row, bit for bit, over whole episodes."""

from __future__ import annotations

import json
import shutil

import gymnasium as gym
import mujoco
import numpy as np
import pytest

import unilab_envs  # noqa: F401
from unilab_envs.deploy_spec import spec_from_env
from unilab_envs.motion.clips import clip_path
from unilab_robot.deploy import ControllerState, PolicyIO, SpecError, load_spec
from unilab_robot.deploy.motion import MotionState

ENV_ID = "UniLab/G1Track-v0"
CLIPS = ("CMU_016_22", "CMU_077_02", "CMU_069_05")
N = 6


@pytest.fixture(scope="module")
def env():
    env = gym.make_vec(ENV_ID, num_envs=N, num_threads=1, clips=CLIPS)
    yield env
    env.close()


@pytest.fixture(scope="module")
def spec(env):
    return spec_from_env(env, ENV_ID)


def _state(task, i: int) -> ControllerState:
    """Env ``i``'s controller state from the task's per-env arrays: last action, clip and frame (no heading turn)."""
    return ControllerState(last_action=np.array(task.last_action[i]), command=np.zeros(0),
                           motion=MotionState(int(task.clip[i]), int(task.frame[i])))


def test_the_spec_names_the_clips_by_file_and_says_the_task_rules(spec, env):
    m, task = spec.motion, env.unwrapped.task
    assert spec.command.kind == "motion" and spec.command.names == () and spec.gait is None
    assert m.clips == tuple(f"{c}.npz" for c in CLIPS) and m.names == CLIPS
    assert m.paths == tuple(str(clip_path(c).resolve()) for c in CLIPS)
    assert (m.anchor_body, m.future_frames, m.end_effectors) == ("pelvis", 1, task.config.end_effectors)
    assert (m.anchor_z_threshold, m.anchor_ori_threshold, m.ee_z_threshold) == (0.25, 0.8, 0.25)
    assert spec.action.mode == "home_offset" and spec.action.scale == task.config.action_scale
    written = json.loads(spec.to_json())
    assert "paths" not in written["motion"] and written["motion"]["clips"] == [f"{c}.npz" for c in CLIPS]
    assert [g.name for g in spec.observation.groups][:4] == ["ref_joint_pos", "ref_joint_vel", "ref_phase",
                                                             "ref_anchor_ori"]


def test_robot_side_observation_equals_the_envs_bit_for_bit_over_episodes(env, spec, tmp_path):
    """The spec written to a folder with its clips beside it (what ``unilab export`` does), loaded back; 150 steps
    (every row passes a reset: the clips' ends, falls under random actions, the adaptive draws), each row each step."""
    (tmp_path / "deploy_spec.json").write_text(spec.to_json())
    for c in CLIPS:
        shutil.copy(clip_path(c), tmp_path / f"{c}.npz")
    loaded = load_spec(tmp_path / "deploy_spec.json")
    assert loaded == spec and loaded.motion.paths == tuple(str(tmp_path / f"{c}.npz") for c in CLIPS)
    base = env.unwrapped
    model = base.batch.get_model(0)
    io, data = PolicyIO(loaded, model), mujoco.MjData(model)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=3)
    resets = 0
    for step in range(150):
        for i in range(N):
            base.batch.get_data(i, data)  # qpos / qvel: what the robot measures; no derived field is read
            got = io.observe(data, _state(base.task, i))
            np.testing.assert_array_equal(got, obs[i], err_msg=f"step {step} env {i}")
        actions = np.clip(rng.normal(0.0, 0.3, (N, spec.action.size)), -1, 1).astype(np.float32)
        obs, _, terminated, truncated, _ = env.step(actions)
        resets += int(np.sum(terminated | truncated))
    assert resets >= 2


def test_the_controller_follows_the_clip_as_the_env_does(env, spec):
    """``PolicyIO.advance`` moves the frame as an env step does, and holds the clip's last frame."""
    base = env.unwrapped
    io = PolicyIO(spec, base.batch.get_model(0))
    state = io.initial_state(mujoco.MjData(io.model))
    assert (state.motion.clip, state.motion.frame) == (0, 0)
    length = io.motion.length(0)
    for k in range(length + 5):
        assert state.motion.frame == min(k, length - 1)
        assert io.motion.at_end(state.motion) == (k >= length - 1)
        io.advance(state)
    assert io.motion.clip_index("CMU_077_02") == 1 and io.motion.clip_index("CMU_077_02.npz") == 1
    with pytest.raises(SpecError, match=r"no clip 'CMU_000_00' in the deploy spec; its clips: CMU_016_22, CMU_077_02"):
        io.motion.clip_index("CMU_000_00")


def test_heading_alignment_turns_the_reference_to_the_robots_heading(env, spec):
    """A robot whose IMU reads the clip's start turned by 1 rad of yaw sees, once aligned, the observation of a
    robot on the clip's own heading (to float32 rounding: the turn is a product of float64 quaternions)."""
    io = PolicyIO(spec, env.unwrapped.batch.get_model(0))
    data = mujoco.MjData(io.model)
    state = io.initial_state(data)
    state.motion = io.motion.start(0, 0)
    io.motion.place(data, state.motion, io.root_q, io.root_d, io.joint_q, io.joint_d, np.random.default_rng(0))
    plain = io.observe(data, state)
    turn = np.array([np.cos(0.5), 0.0, 0.0, np.sin(0.5)])
    quat = np.empty(4)
    mujoco.mju_mulQuat(quat, turn, data.qpos[io.root_q + 3:io.root_q + 7].copy())
    data.qpos[io.root_q + 3:io.root_q + 7] = quat
    turned = io.observe(data, state)
    group = spec.observation.group("ref_anchor_ori")
    assert np.abs(turned[group.start:group.stop] - plain[group.start:group.stop]).max() > 0.1  # not aligned: off
    io.motion.align(state.motion, io.base_quat(data))
    np.testing.assert_allclose(io.observe(data, state), plain, rtol=0, atol=2e-6)


def test_a_missing_clip_and_a_clip_of_other_joints_are_refused_in_one_line(spec, env, tmp_path):
    (tmp_path / "deploy_spec.json").write_text(spec.to_json())
    for c in CLIPS[1:]:
        shutil.copy(clip_path(c), tmp_path / f"{c}.npz")
    model = env.unwrapped.batch.get_model(0)
    with pytest.raises(SpecError, match=r"^the deploy spec names motion clip 'CMU_016_22.npz', which is not in .*"
                                        r"\(`unilab export` copies the clips beside policy.onnx; copy it there\)$"):
        PolicyIO(load_spec(tmp_path / "deploy_spec.json"), model)
    with np.load(clip_path(CLIPS[0])) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["joint_names"] = np.array([("left_knee" if n == "left_knee_joint" else str(n)) for n in arrays["joint_names"]])
    np.savez(tmp_path / f"{CLIPS[0]}.npz", **arrays)
    with pytest.raises(SpecError) as e:
        PolicyIO(load_spec(tmp_path / "deploy_spec.json"), model)
    assert "\n" not in str(e.value) and "joint 'left_knee' is not in the model" in str(e.value)
    with pytest.raises(SpecError, match=r"motion clips .* have no folder"):
        PolicyIO(spec.__class__(**{**spec.__dict__, "motion": spec.motion.__class__(
            **{**spec.motion.__dict__, "paths": ()})}), model)
