"""``UniLab/G1Track-v0``: the resampling by hand, reference-state initialization, PD tracking of a standing clip,
reward terms, batched == single, adaptive sampling, the clip's end."""

from __future__ import annotations

import math

import gymnasium as gym
import mujoco
import numpy as np
import pytest

from unilab_envs.motion import load_motion
from unilab_envs.motion.clips import clip_path
from unilab_envs.motion.reference import lerp_frames, resample_times, slerp, slerp_frames

ENV_ID = "UniLab/G1Track-v0"
STANDING = "CMU_077_02"  # 15.5 s of a person standing and shifting (0.03 m/s mean pelvis speed)
WALK = "CMU_016_22"


# --- resampling, by hand ---------------------------------------------------------------------------


def test_resample_times_by_hand():
    # 3 frames at 2 fps (1 s) to 3 Hz: times 0, 1/3, 2/3, 1 -> source frames 0, 2/3, 4/3, 2
    i0, i1, a = resample_times(3, 2.0, 3.0)
    assert list(i0) == [0, 0, 1, 2] and list(i1) == [1, 1, 2, 2]
    assert np.allclose(a, [0.0, 2 / 3, 1 / 3, 0.0])
    # the shipped rate: 33.3 fps to 50 Hz; every third new frame is a source frame (0, 3, 6 <- 0, 2, 4)
    i0, _, a = resample_times(7, 100 / 3, 50.0)
    assert len(i0) == 10 and list(i0[[0, 3, 6, 9]]) == [0, 2, 4, 6] and np.allclose(a[[0, 3, 6, 9]], 0.0)


def test_lerp_frames_by_hand():
    x = np.array([[0.0, 1.0], [10.0, 1.0], [20.0, 4.0]])
    out = lerp_frames(x, 2.0, 3.0)
    assert np.allclose(out, [[0.0, 1.0], [20 / 3, 1.0], [40 / 3, 2.0], [20.0, 4.0]])
    assert np.allclose(lerp_frames(np.array([[5.0]]), 30.0, 50.0), [[5.0]])  # one frame stays one frame


def test_slerp_by_hand():
    identity = np.array([1.0, 0.0, 0.0, 0.0])
    quarter_z = np.array([math.cos(math.pi / 4), 0.0, 0.0, math.sin(math.pi / 4)])  # 90 deg about z
    eighth_z = np.array([math.cos(math.pi / 8), 0.0, 0.0, math.sin(math.pi / 8)])  # 45 deg
    assert np.allclose(slerp(identity, quarter_z, 0.5), eighth_z)
    assert np.allclose(slerp(identity, -quarter_z, 0.5), eighth_z)  # the short way, whatever the sign
    assert np.allclose(slerp(identity, identity, 0.3), identity)
    # 1 fps to 2 Hz: the frame between is the half rotation; shape (T, B, 4) keeps its body axis
    q = np.stack([np.stack([identity, quarter_z]), np.stack([quarter_z, identity])])  # (2 frames, 2 bodies, 4)
    out = slerp_frames(q, 1.0, 2.0)
    assert out.shape == (3, 2, 4)
    assert np.allclose(out[1, 0], eighth_z) and np.allclose(out[1, 1], eighth_z)
    assert np.allclose(out[0], q[0]) and np.allclose(out[2], q[1])


# --- the env -------------------------------------------------------------------------------------------


def make(num_envs=1, **kwargs):
    kwargs.setdefault("reset_joint_noise", 0.0)
    return gym.make_vec(ENV_ID, num_envs=num_envs, spread_episode_starts=False, **kwargs)


def reference_actions(env, obs):
    """The PD targets that hold the next reference frame's joints: ref_joint_pos (minus home) / action_scale."""
    sl = env.obs_groups["ref_joint_pos"]
    return np.clip(obs[:, sl][:, :29] / env.task.config.action_scale, -1.0, 1.0).astype(np.float32)


def test_reset_at_a_frame_puts_the_robot_on_the_reference():
    env = make(2, clips=[WALK, STANDING])
    task = env.task
    for clip, frame in ((0, 3), (0, 40), (1, 300)):
        task.force_start = (clip, frame)
        env.reset(seed=0)
        g = task.reference.frame(clip, frame)
        xpos = env.batch.bind("xpos")  # after the reset's forward
        ids = task.reference.body_ids
        assert np.abs(xpos[:, ids] - task.reference.body_pos[g]).max() < 1e-6
        assert (task.clip == clip).all() and (task.frame == frame).all()
    # a 50 Hz frame that falls on a source frame is the clip file's own pose (frame 3 <- source frame 2)
    task.force_start = (0, 3)
    env.reset(seed=0)
    source = load_motion(clip_path(WALK))
    xpos = env.batch.bind("xpos")
    assert np.abs(xpos[0, task.reference.body_ids] - source.body_pos_w[2]).max() < 1e-5
    env.close()


def test_holding_the_reference_joints_tracks_a_standing_clip():
    env = make(1, clips=[STANDING])
    env.task.force_start = (0, 100)
    obs, _ = env.reset(seed=0)
    errors = []
    for _ in range(25):  # 0.5 s: the PD alone holds the pose, nothing balances it (it drifts off over seconds)
        obs, _, terminated, truncated, info = env.step(reference_actions(env, obs))
        assert not terminated[0] and not truncated[0]
        errors.append(info["tracking_error_cm"][0])
    assert max(errors) < 3.0 and np.mean(errors) < 2.0, (max(errors), np.mean(errors))
    assert info["joint_error"][0] < 0.05
    env.close()


def test_reward_is_the_sum_of_its_terms():
    env = make(8, reset_joint_noise=0.05)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(10):
        _, reward, _, _, info = env.step(rng.uniform(-0.3, 0.3, (8, 29)).astype(np.float32))
        total = sum(info["reward_terms"][n] for n in env.reward_names)
        assert np.allclose(reward, total, atol=1e-5)
        assert set(info["reward_terms"]) == set(env.reward_names)
        assert (info["reward_terms"]["body_pos"] > 0).all()  # exp kernels: positive
    env.close()


def test_the_last_action_is_observed_and_its_rate_penalized():
    """The policy sees its previous action (clipped) and ``action_rate`` is ``weight * sum((a - a_prev)^2)``, by hand
    (both were silently zero while the history was stored through the named tuple inside the parallel loop)."""
    env = make(4)
    env.reset(seed=5)
    where = env.obs_groups["last_action"]
    weight = env.task.reward_weights[env.reward_names.index("action_rate")]
    rng = np.random.default_rng(2)
    previous = np.zeros((4, 29))
    for _ in range(3):
        actions = rng.uniform(-1.5, 1.5, (4, 29)).astype(np.float32)  # some beyond the [-1, 1] clip
        obs, _, terminated, truncated, info = env.step(actions)
        clipped = np.clip(actions, -1.0, 1.0).astype(np.float64)
        live = ~(terminated | truncated)
        assert live.any()
        assert np.allclose(obs[live][:, where], clipped[live], atol=1e-6)
        expected = weight * ((clipped - previous) ** 2).sum(axis=1)
        assert np.allclose(info["reward_terms"]["action_rate"][live], expected[live], rtol=1e-5)
        assert (info["reward_terms"]["action_rate"][live] < 0).all()
        previous = clipped
    env.close()


def test_batched_equals_single():
    n, seed = 3, 11
    batched = gym.make_vec(ENV_ID, num_envs=n, spread_episode_starts=False)
    obs_b, _ = batched.reset(seed=seed)
    singles = [gym.make(ENV_ID) for _ in range(n)]
    obs_s = [s.reset(seed=seed + i)[0] for i, s in enumerate(singles)]
    assert np.array_equal(obs_b, np.stack(obs_s))
    rng = np.random.default_rng(1)
    for _ in range(5):
        actions = rng.uniform(-0.2, 0.2, (n, 29)).astype(np.float32)
        obs_b, rew_b, *_ = batched.step(actions)
        for i, s in enumerate(singles):
            o, r, *_ = s.step(actions[i])
            assert np.array_equal(obs_b[i], o) and rew_b[i] == np.float32(r)
    batched.close()
    for s in singles:
        s.close()


def test_adaptive_sampling_raises_a_failing_clips_weight():
    # every episode in clip 0 (the shortest: drawn least) fails at once (1 um anchor and end-effector height tolerances): its draw probability rises
    env = make(4, clips=[WALK, STANDING, "CMU_016_23"], anchor_z_threshold=1e-6, ee_z_threshold=1e-6)
    task = env.task
    before = task.sampling_probabilities()
    task.force_start = (0, 50)
    env.reset(seed=0)
    for _ in range(5):
        _, _, terminated, _, _ = env.step(np.zeros((4, 29), np.float32))
        assert terminated.all()
    after = task.sampling_probabilities()
    assert after[0] > 0.7 and before[0] < 0.2 and np.isclose(after.sum(), 1.0)
    # the failure counts are task state: a restored env draws as this one does
    state = env.get_state()
    other = make(4, clips=[WALK, STANDING, "CMU_016_23"], anchor_z_threshold=1e-6, ee_z_threshold=1e-6)
    other.set_state(state)
    assert np.allclose(other.task.sampling_probabilities(), after)
    task.force_start = None
    env.reset(seed=5)
    assert (task.clip == 0).sum() >= 2  # draws follow it (4 envs, p > 0.7: loose)
    env.close()
    other.close()


def test_the_clip_end_truncates_with_success():
    env = make(2, clips=[STANDING])
    length = int(env.task.reference.lengths[0])
    env.task.force_start = (0, length - 3)
    obs, _ = env.reset(seed=0)
    for step in range(2):
        obs, _, terminated, truncated, info = env.step(reference_actions(env, obs))
        assert not terminated.any()
        if step == 0:
            assert not truncated.any() and not info["is_success"].any()
    assert truncated.all() and info["is_success"].all() and info["_final_obs"].all()
    assert (info["clip"] == 0).all() and (info["tracking_error_cm"] < 5.0).all()
    assert (env.episode_step == 0).all()  # autoreset: a new episode
    env.close()


def test_termination_is_a_failure_not_a_success():
    env = make(2, clips=[WALK], anchor_z_threshold=1e-6, ee_z_threshold=1e-6)
    env.reset(seed=0)
    _, _, terminated, truncated, info = env.step(np.zeros((2, 29), np.float32))
    assert terminated.all() and not truncated.any() and not info["is_success"].any()
    env.close()


def test_config_is_checked():
    with pytest.raises(ValueError, match="start"):
        make(1, start="sometimes")
    with pytest.raises(FileNotFoundError, match="no motion file"):
        make(1, clips=["CMU_999_99"])
    with pytest.raises(ValueError, match="tracked_bodies"):
        make(1, tracked_bodies=["torso_link"])


def test_clip_start_starts_every_episode_at_a_clips_first_frame():
    env = make(16, start="clip_start", clips=[WALK, STANDING])
    env.reset(seed=0)
    assert (env.task.frame == 0).all() and set(env.task.clip) == {0, 1}
    env.close()


def test_future_frames_widen_the_reference_groups():
    env = make(1, future_frames=3)
    assert env.obs_groups["ref_joint_pos"] == slice(0, 87) and env.single_observation_space.shape == (158 + 4 * 29,)
    env.close()
