"""Tiny hand-made records for the locomotion layer's tests: 2 joints, 2 feet, N envs."""

from __future__ import annotations

import numpy as np

from unilab_envs.locomotion.records import Commands, Legs, Params, Physics, Reset, Robot


def robot(foot_offset: float = 0.0) -> Robot:
    offsets = np.array([0.0, np.pi])
    return Robot(
        root_q=0, root_d=0, joint_q=np.array([7, 8]), joint_d=np.array([6, 7]), actuator_ids=np.array([1, 0]),
        foot_ids=np.array([0, 1]), foot_offset=foot_offset, home=np.array([0.1, -0.2]), pose_weights=np.array([1.0, 0.5]),
        soft_low=np.array([-1.0, -1.0]), soft_high=np.array([1.0, 0.5]), hard_low=np.array([-2.0, -0.25]),
        hard_high=np.array([2.0, 2.0]), phase_offsets=offsets, phase_offsets_cos_sin=np.stack([np.cos(offsets), np.sin(offsets)], 1),
    )  # fmt: skip


def physics(n: int = 1) -> Physics:
    """qpos: free joint (7) + 2 joints; qvel: 6 + 2; 2 foot positions; 2 actuators."""
    qpos = np.zeros((n, 9))
    qpos[:, 3] = 1.0  # identity quaternion
    return Physics(qpos, np.zeros((n, 8)), np.zeros((n, 2, 3)), np.zeros((n, 2)))


def legs(n: int = 1) -> Legs:
    return Legs(np.zeros((n, 2)), np.zeros((n, 2)), np.zeros((n, 3)), np.zeros(n), np.ones((n, 2), bool), np.zeros((n, 2)),
                np.zeros((n, 2)), np.zeros((n, 2, 3)))  # fmt: skip


def params(**changes) -> Params:
    base = Params(dt=0.02, inv_dt=50.0, tracking_sigma=0.25, inv_tracking_sigma=4.0, yaw_tracking_sigma=0.25,
                  inv_yaw_tracking_sigma=4.0, base_height_target=0.3, air_time_target=0.1,
                  gait_step=0.25, swing_height=0.08, contact_height=0.01, feet_phase_width=0.01, inv_feet_phase_width=100.0,
                  cos_max_tilt=0.5, min_base_height=0.1, clip_air_time=False, clip_termination=True, float32_math=False)  # fmt: skip
    return base._replace(**changes)


def commands(zero_probability: float = 0.0, resample_steps: int = 250, straight_probability: float = 0.0) -> Commands:
    return Commands(np.array([[-1.0, 1.0], [-0.5, 0.5], [0.0, 2.0]]), zero_probability, resample_steps, straight_probability)


def reset(xy: float = 0.0, joint: float = 0.0, velocity: float = 0.0) -> Reset:
    return Reset(xy, joint, velocity)
