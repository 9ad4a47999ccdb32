"""``UniLab/G1Joystick-v0``: a G1-like humanoid walks after a velocity joystick.

Commands (forward, sideways, yaw rate) are resampled every
``command_resample_time`` seconds; the policy runs at 50 Hz and sets PD
position targets around the standing pose (29 joints: legs, waist, arms). A
two-beat walking phase (feet half a period apart) is in the observation and
drives the ``feet_phase`` term, as in MuJoCo Playground's G1 joystick.

Observation (101 floats, SI units, pelvis frame; what a real G1 senses or estimates): the
groups of :data:`POLICY_GROUPS`, in that order; their sizes, units and meanings are their
declarations' (:mod:`unilab_envs.locomotion.groups`; ``unilab tasks --groups``, docs/tasks.md).

The base linear velocity is in the policy's observation as in MuJoCo Playground's and
mjlab's G1 tasks (and our Go1): without it an MLP policy must infer its speed from the
joints to track a velocity command.

Privileged observation for the critic (45 floats): the groups of :data:`CRITIC_GROUPS`.
Noise wrappers touch only the policy observation, so the critic keeps the clean values.

Termination: pelvis tilt beyond ``max_tilt`` or pelvis below ``min_base_height``.

Everything but the robot, the observation layout and the defaults is the shared
locomotion layer (:mod:`unilab_envs.locomotion`). Where G1's numbers differ from Go1's
by design they are named options: the air-time reward is clipped to ``[0, target]``, the
positive clip leaves the termination penalty out, and the kernels use float32
transcendentals (the arithmetic the bench's NumPy twin mirrors).
"""

from __future__ import annotations

from typing import Any

from unilab_robot.assets import g1 as robot
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

__all__ = ["POLICY_GROUPS", "CRITIC_GROUPS", "OBS_GROUPS", "PRIVILEGED_GROUPS", "REWARD_NAMES", "G1Joystick", "G1JoystickConfig", "make_env", "make_vector_env"]

POLICY_GROUPS = ("linvel", "gyro", "gravity", "joint_pos", "joint_vel", "last_action", "command", "phase")
CRITIC_GROUPS = ("linvel", "gyro", "gravity", "height", "foot_contact", "foot_height", "foot_air_time", "actuator_force")
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


class G1Joystick(LocomotionTask, config=G1JoystickConfig, legged=G1, obs_groups=POLICY_GROUPS, privileged_obs_groups=CRITIC_GROUPS):
    """The G1 joystick task (see module docstring)."""

    @property
    def stand_pose(self):
        """``(29,)`` standing joint angles, the zero of ``joint_pos`` and of the actions."""
        return self.robot.home.copy()


OBS_GROUPS, PRIVILEGED_GROUPS = G1Joystick.obs_groups, G1Joystick.privileged_obs_groups  # the slices of the groups


def make_env(**kwargs: Any) -> UniLabEnv:
    """Entry point of ``gym.make``: one G1 joystick env."""
    return UniLabEnv(G1Joystick, **kwargs)


def make_vector_env(num_envs: int, **kwargs: Any) -> UniLabVectorEnv:
    """Entry point of ``gym.make_vec``: ``num_envs`` G1 joystick envs, batched."""
    return UniLabVectorEnv(G1Joystick, num_envs, **kwargs)
