"""``UniLab/Go2Joystick-v0``: a Go2-like quadruped follows a velocity joystick.

The Go1 joystick task (:mod:`unilab_envs.tasks.go1_joystick`) on the Go2's body
(:mod:`unilab_robot.assets.go2`: 15.2 kg, 45 N m knees, Unitree's SDK motor order, Menagerie's
``unitree_go2`` names). Commands (forward, sideways, yaw rate) are resampled every
``command_resample_time`` seconds; the policy runs at 50 Hz and sets PD position targets around
the home pose. A trot gait phase (two diagonal pairs) is in the observation and drives the
``feet_phase`` term. Everything but the robot, the observation layout and the defaults is the
shared locomotion layer (:mod:`unilab_envs.locomotion`).

Defaults are the Go1's: the two robots share the home pose (thigh 0.9, calf -1.8 rad) and the
0.213 m thigh and calf, so the standing height target (0.27 m) is the same; command ranges and
reward scales are the Go1's, which the heavier body does not call to change.

Observation (47 floats, SI units, body frame): the groups of :data:`POLICY_GROUPS` but ``linvel``,
which the Go2 does not measure (its ``rt/lowstate`` carries the IMU, joints and remote): the config's
``critic_only_groups`` default moves it to the critic (``critic_only_groups=()`` gives it back to
the policy: 50 floats). Privileged observation for the critic (28 floats): the groups of
:data:`CRITIC_GROUPS`, then ``linvel``, extras read after the policy observation.
"""

from __future__ import annotations

from typing import Any

from unilab_robot.assets import go2 as robot
from unilab_envs.core.single_env import UniLabEnv
from unilab_envs.core.vector_env import UniLabVectorEnv
from unilab_envs.locomotion import LeggedRobot, LocomotionTask, with_defaults
from unilab_envs.tasks.go1_joystick import CRITIC_GROUPS, POLICY_GROUPS, Go1JoystickConfig

GO2 = LeggedRobot(
    root_body=robot.ROOT_BODY, keyframe=robot.HOME_KEYFRAME, joint_names=robot.JOINT_NAMES,
    foot_names=robot.FOOT_NAMES, foot_kind="geom",  # sphere feet: height = centre z - radius
    pose_weights=(1.0, 0.5, 0.5) * 4, phase_offsets=robot.TROT_PHASE_OFFSETS,
)  # fmt: skip

Go2JoystickConfig = with_defaults(
    Go1JoystickConfig, "Go2JoystickConfig",
    "Go2's defaults: the Go1's (same home pose and leg lengths), on the Go2's model and gains; unknown keys are rejected.",
    model_path=str(robot.MJCF_PATH), pd_kp=robot.PD_KP, pd_kd=robot.PD_KD,
    critic_only_groups=("linvel",),  # the Go2's rt/lowstate has no base velocity: the actor reads what the robot measures
)  # fmt: skip


class Go2Joystick(LocomotionTask, config=Go2JoystickConfig, legged=GO2, obs_groups=POLICY_GROUPS, privileged_obs_groups=CRITIC_GROUPS):
    """The Go2 joystick task (see module docstring)."""


OBS_GROUPS, PRIVILEGED_GROUPS = Go2Joystick.obs_groups, Go2Joystick.privileged_obs_groups  # the slices of the groups


def make_env(**kwargs: Any) -> UniLabEnv:
    """Entry point of ``gym.make``: one Go2 joystick env."""
    return UniLabEnv(Go2Joystick, **kwargs)


def make_vector_env(num_envs: int, **kwargs: Any) -> UniLabVectorEnv:
    """Entry point of ``gym.make_vec``: ``num_envs`` Go2 joystick envs, batched."""
    return UniLabVectorEnv(Go2Joystick, num_envs, **kwargs)
