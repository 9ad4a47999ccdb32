"""``unilab eval`` per episode group: the task's ``episode_metrics`` averaged over each episode and its
``episode_group`` (G1Track's clips), by hand on a made-up result and on the G1Track env itself."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from trainers.common.evaluation import EvalResult, run_episodes
from trainers.common.task_eval import evaluation_kwargs, task_class

CLIPS = ("CMU_016_22", "CMU_016_23")


def test_group_lines_by_hand():
    result = EvalResult(episodes=4, mean_return=0.0, std_return=0.0, mean_length=1.0, success_rate=0.75, fall_rate=0.25,
                        video=None, episode_falls=(False, False, True, False), episode_success=(True, True, False, True),
                        episode_metrics={"err": (1.0, 3.0, 8.0, 4.0)}, episode_groups=("b", "a", "b", "a"))
    lines = result.group_lines()
    assert lines[0] == "  a: 2 episodes  success 100.0%  err 3.5"
    assert lines[1] == "  b: 2 episodes  success 50.0%  err 4.5"
    assert lines[2] == "2 groups: success 75.0% averaged over them, 1 with every episode a success, the worst 50.0%"
    assert "err 4" in result.summary()  # the mean over all episodes: 4.0
    assert EvalResult(episodes=1, mean_return=0.0, std_return=0.0, mean_length=1.0, success_rate=None, fall_rate=0.0,
                      video=None).group_lines() == []


def test_g1track_asks_for_whole_clips():
    assert task_class("UniLab/G1Track-v0").__name__ == "G1Track"
    assert evaluation_kwargs("UniLab/G1Track-v0") == {"start": "clip_start"}
    assert evaluation_kwargs("UniLab/Go1Joystick-v0") == {}
    assert evaluation_kwargs("Pendulum-v1") == {}


def test_g1track_episodes_are_reported_per_clip():
    env = gym.make_vec("UniLab/G1Track-v0", num_envs=4, clips=CLIPS, start="clip_start", reset_joint_noise=0.0)
    def act(obs):  # hold the standing pose
        return np.zeros((4, 29), np.float32)

    try:
        result = run_episodes(env, act, episodes=8, seed=3)
    finally:
        env.close()
    assert result.episode_groups is not None and set(result.episode_groups) <= set(CLIPS)
    assert len(result.episode_groups) == result.episodes == len(result.episode_success)
    for name in ("tracking_error_cm", "joint_error"):
        values = np.asarray(result.episode_metrics[name])
        assert values.shape == (result.episodes,) and np.all(values > 0) and np.all(np.isfinite(values))
    assert len(result.group_lines()) == len(set(result.episode_groups)) + 1
    assert "tracking_error_cm" in result.summary()
