"""``UniLab/G1Joystick-v0``: a G1-like humanoid walks after a velocity joystick.

Commands (forward, sideways, yaw rate) are resampled every
``command_resample_time`` seconds; the policy runs at 50 Hz and sets PD
position targets around the standing pose (29 joints: legs, waist, arms). A
two-beat walking phase (feet half a period apart) is in the observation and
drives the ``feet_phase`` term, as in MuJoCo Playground's G1 joystick.

Observation (101 floats, SI units, pelvis frame; what a real G1 senses or estimates):

==============  =====  =======  ===========================================
group           size   offset   content
==============  =====  =======  ===========================================
linvel          3      0        pelvis linear velocity (a state estimator's)
gyro            3      3        pelvis angular velocity (IMU)
gravity         3      6        unit gravity direction in the pelvis frame
joint_pos       29     9        joint angles minus the standing pose
joint_vel       29     38       joint velocities
last_action     29     67       previous action
command         3      96       (vx, vy, yaw rate) command
phase           2      99       sin, cos of the gait phase
==============  =====  =======  ===========================================

The base linear velocity is in the policy's observation as in MuJoCo Playground's and
mjlab's G1 tasks (and our Go1): without it an MLP policy must infer its speed from the
joints to track a velocity command.

Privileged observation for the critic (45 floats): base linear velocity (3,
pelvis frame), gyro (3), gravity (3), pelvis height (1), foot contacts (2),
foot heights (2), foot air times (2), actuator forces (29). Noise wrappers touch
only the policy observation, so the critic keeps the clean values.

Termination: pelvis tilt beyond ``max_tilt`` or pelvis below ``min_base_height``.

Everything but the robot, the observation layout and the defaults is the shared
locomotion layer (:mod:`unilab_envs.locomotion`). Where G1's numbers differ from Go1's
by design they are named options: the air-time reward is clipped to ``[0, target]``, the
positive clip leaves the termination penalty out, and the kernels use float32
transcendentals (the arithmetic the bench's NumPy twin mirrors).
"""

from __future__ import annotations

from typing import Any

from unilab_envs.assets import g1 as robot
from unilab_envs.core.single_env import UniLabEnv
from unilab_envs.core.vector_env import UniLabVectorEnv
from unilab_envs.locomotion import (
    REWARD_NAMES,
    LeggedRobot,
    LocomotionConfig,
    LocomotionTask,
    RewardScales,
    with_defaults,
)

__all__ = ["OBS_GROUPS", "PRIVILEGED_GROUPS", "REWARD_NAMES", "G1Joystick", "G1JoystickConfig", "make_env", "make_vector_env"]

OBS_GROUPS = {
    "linvel": slice(0, 3),
    "gyro": slice(3, 6),
    "gravity": slice(6, 9),
    "joint_pos": slice(9, 38),
    "joint_vel": slice(38, 67),
    "last_action": slice(67, 96),
    "command": slice(96, 99),
    "phase": slice(99, 101),
}
PRIVILEGED_GROUPS = {
    "linvel": slice(0, 3),
    "gyro": slice(3, 6),
    "gravity": slice(6, 9),
    "height": slice(9, 10),
    "foot_contact": slice(10, 12),
    "foot_height": slice(12, 14),
    "foot_air_time": slice(14, 16),
    "actuator_force": slice(16, 45),
}
G1 = LeggedRobot(
    root_body=robot.ROOT_BODY, keyframe=robot.STAND_KEYFRAME, joint_names=robot.JOINT_NAMES,
    foot_names=robot.FOOT_SITES, foot_kind="site", pose_weights=robot.POSE_WEIGHTS,
    phase_offsets=robot.WALK_PHASE_OFFSETS,  # two beats: feet half a period apart
)  # fmt: skip


# alive: surviving is worth more than falling early; positive_clip 1.0: the shaped reward is clipped
# at zero while a fall still costs its full penalty (legged_gym's only_positive_rewards)
G1RewardScales = with_defaults(
    RewardScales, "G1RewardScales", "G1's reward scales (weight = scale * control_dt).",
    tracking_lin_vel=2.0, tracking_ang_vel=1.0, alive=1.0, positive_clip=1.0, termination=-50.0,
    lin_vel_z=-1.0, ang_vel_xy=-0.05, orientation=-2.0, base_height=-10.0, stand_still=-1.0,
    torques=-1e-5, action_rate=-0.01, pose=-0.5, joint_limits=-1.0,
    feet_air_time=2.0, feet_phase=1.0, feet_slip=-0.25,
)  # fmt: skip
G1JoystickConfig = with_defaults(
    LocomotionConfig, "G1JoystickConfig", "G1's defaults of the shared locomotion config; unknown keys are rejected.",
    model_path=str(robot.MJCF_PATH), pd_kp=robot.PD_KP, pd_kd=robot.PD_KD,
    command_vx=(-0.5, 1.0), command_vy=(-0.3, 0.3), zero_command_probability=0.15,
    gait_frequency=1.25, feet_phase_width=0.01, air_time_target=0.2, contact_height=0.02,  # a sole below 2 cm
    base_height_target=0.78, max_tilt=0.8, min_base_height=0.45, reset_joint_range=0.05, reset_base_velocity=0.1,
    clip_air_time_reward=True,  # short steps are not punished
    positive_clip_includes_termination=False, float32_math=True,
    reward_scales=G1RewardScales(),
)  # fmt: skip


class G1Joystick(LocomotionTask, config=G1JoystickConfig, legged=G1, obs_groups=OBS_GROUPS, privileged_obs_groups=PRIVILEGED_GROUPS):
    """The G1 joystick task (see module docstring)."""

    @property
    def stand_pose(self):
        """``(29,)`` standing joint angles, the zero of ``joint_pos`` and of the actions."""
        return self.robot.home.copy()


def make_env(**kwargs: Any) -> UniLabEnv:
    """Entry point of ``gym.make``: one G1 joystick env."""
    return UniLabEnv(G1Joystick, **kwargs)


def make_vector_env(num_envs: int, **kwargs: Any) -> UniLabVectorEnv:
    """Entry point of ``gym.make_vec``: ``num_envs`` G1 joystick envs, batched."""
    return UniLabVectorEnv(G1Joystick, num_envs, **kwargs)
