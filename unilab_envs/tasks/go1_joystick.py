"""``UniLab/Go1Joystick-v0``: a Go1-like quadruped follows a velocity joystick.

Commands (forward, sideways, yaw rate) are resampled every
``command_resample_time`` seconds; the policy runs at 50 Hz and sets PD
position targets around the home pose. A trot gait phase (two diagonal pairs)
is in the observation and drives the ``feet_phase`` term. Everything but the
robot, the observation layout and the defaults is the shared locomotion layer
(:mod:`unilab_envs.locomotion`: kernels, reward terms, config fields).

Observation (50 floats, SI units, body frame): the groups of :data:`POLICY_GROUPS`, in that
order; their sizes, units and meanings are their declarations' (:mod:`unilab_envs.locomotion.groups`;
``unilab tasks --groups``, docs/tasks.md). Privileged observation for the critic (25 floats): the groups
of :data:`CRITIC_GROUPS`. These are extras: a critic needs them together with the policy
observation (the bundled PPO's critic reads the policy observation followed by them).
"""

from __future__ import annotations

from typing import Any

from unilab_robot.assets import go1 as robot
from unilab_envs.core.single_env import UniLabEnv
from unilab_envs.core.vector_env import UniLabVectorEnv
from unilab_envs.locomotion import (
    LeggedRobot,
    LocomotionConfig,
    LocomotionTask,
    RewardScales,
    with_defaults,
)

POLICY_GROUPS = ("linvel", "gyro", "gravity", "joint_pos", "joint_vel", "last_action", "command", "phase")
CRITIC_GROUPS = ("height", "foot_contact", "foot_air_time", "foot_height", "actuator_force")
GO1 = LeggedRobot(
    root_body=robot.ROOT_BODY, keyframe=robot.HOME_KEYFRAME, joint_names=robot.JOINT_NAMES,
    foot_names=robot.FOOT_NAMES, foot_kind="geom",  # sphere feet: height = centre z - radius
    pose_weights=(1.0, 0.5, 0.5) * 4, phase_offsets=robot.TROT_PHASE_OFFSETS,
)  # fmt: skip


Go1RewardScales = with_defaults(
    RewardScales, "Go1RewardScales", "Go1's reward scales (weight = scale * control_dt); alive and positive_clip are off.",
    tracking_lin_vel=1.5, tracking_ang_vel=0.8, lin_vel_z=-2.0, ang_vel_xy=-0.05, orientation=-5.0, base_height=-10.0,
    torques=-2e-4, action_rate=-0.01, pose=-0.1, joint_limits=-1.0, stand_still=-0.5,
    feet_air_time=0.5, feet_phase=1.0, feet_slip=-0.1, termination=-20.0,
)  # fmt: skip
Go1JoystickConfig = with_defaults(
    LocomotionConfig, "Go1JoystickConfig", "Go1's defaults of the shared locomotion config; unknown keys are rejected.",
    model_path=str(robot.MJCF_PATH), pd_kp=robot.PD_KP, pd_kd=robot.PD_KD,
    command_vx=(-0.6, 1.0), command_vy=(-0.4, 0.4), zero_command_probability=0.1,
    gait_frequency=2.0, feet_phase_width=0.0025, air_time_target=0.1, contact_height=0.01,  # contact: sphere bottom < 1 cm
    base_height_target=0.27, max_tilt=1.0, min_base_height=0.12, reset_joint_range=0.1, reset_base_velocity=0.3,
    clip_air_time_reward=False, positive_clip_includes_termination=True, float32_math=False,
    reward_scales=Go1RewardScales(),
)  # fmt: skip


class Go1Joystick(LocomotionTask, config=Go1JoystickConfig, legged=GO1, obs_groups=POLICY_GROUPS, privileged_obs_groups=CRITIC_GROUPS):
    """The Go1 joystick task (see module docstring)."""


OBS_GROUPS, PRIVILEGED_GROUPS = Go1Joystick.obs_groups, Go1Joystick.privileged_obs_groups  # the slices of the groups


def make_env(**kwargs: Any) -> UniLabEnv:
    """Entry point of ``gym.make``: one Go1 joystick env."""
    return UniLabEnv(Go1Joystick, **kwargs)


def make_vector_env(num_envs: int, **kwargs: Any) -> UniLabVectorEnv:
    """Entry point of ``gym.make_vec``: ``num_envs`` Go1 joystick envs, batched."""
    return UniLabVectorEnv(Go1Joystick, num_envs, **kwargs)
