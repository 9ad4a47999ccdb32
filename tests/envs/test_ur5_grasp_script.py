"""The UR5Grasp scripted pick (unilab_envs/tasks/ur5_grasp_script.py): its rules by hand, and that it picks."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import unilab_envs  # noqa: F401  (registers the tasks)
from unilab_envs.tasks.ur5_grasp import OBS_GROUPS
from unilab_envs.tasks.ur5_grasp_script import scripted_grasp

SCALE, CUBE = 0.02, 0.05


def _obs(to_cube, pad_gap=0.09, lift_gap=0.12) -> np.ndarray:
    obs = np.zeros((1, 42), np.float32)
    obs[0, OBS_GROUPS["object_pos"]] = to_cube
    obs[0, OBS_GROUPS["gripper"]] = pad_gap
    obs[0, OBS_GROUPS["target_gap"]] = lift_gap
    return obs


def test_each_phase_by_hand():
    # approach: 3 cm away in x (clipped to 1), -0.5 cm in y (-0.25), the pinch 10 cm above the centre: go to
    # 4 cm above it, (-0.10 + 0.04) / 0.02 = -3 -> -1; open
    np.testing.assert_allclose(scripted_grasp(_obs([0.03, -0.005, -0.10]), OBS_GROUPS, SCALE, CUBE), [[1, -0.25, -1, -1]])
    # descend: aligned (0.5 cm), 1.2 cm above: -0.6; still open
    np.testing.assert_allclose(scripted_grasp(_obs([0.005, 0.0, -0.012]), OBS_GROUPS, SCALE, CUBE), [[0.25, 0, -0.6, -1]])
    # close: at the centre's height, pads still apart (0.09 m > 0.05 + 0.016): no vertical move yet
    np.testing.assert_allclose(scripted_grasp(_obs([0.0, 0.0, -0.004]), OBS_GROUPS, SCALE, CUBE), [[0, 0, 0, 1]])
    # lift: closed on the cube (0.06 m apart); the lift command 1.0 cm above the cube: +0.5
    np.testing.assert_allclose(scripted_grasp(_obs([0.0, 0.0, 0.0], pad_gap=0.06, lift_gap=0.01), OBS_GROUPS, SCALE, CUBE),
                               [[0, 0, 0.5, 1]])


def test_the_script_picks_nine_cubes_in_ten():
    """Each env's second episode (the first may start part-way) at seed 1: measured 124 of 128, none dropped."""
    num_envs = 64
    env = gym.make_vec("UniLab/UR5Grasp-v0", num_envs=num_envs)
    task = env.unwrapped.task
    try:
        obs, _ = env.reset(seed=1)
        phase, picked, dropped = np.zeros(num_envs, int), 0, 0
        while (phase < 2).any():
            obs, _, terminated, truncated, info = env.step(task.scripted_action(obs))
            counted = (phase == 1) & terminated
            picked += int(np.sum(counted & info["is_success"]))
            dropped += int(np.sum(counted & ~info["is_success"]))
            phase[terminated | truncated] += 1
    finally:
        env.close()
    assert picked >= 0.9 * num_envs and dropped == 0
