"""The shared layer of the legged joystick tasks (Go1, G1, and yours).

One idea per module, each a few small Numba functions with named records for arguments:

========================  ==============================================================
module                    what
========================  ==============================================================
``records``               the named records the kernels take (robot, physics, state, params)
``config``                the shared config fields and their checks; config -> records
``defaults``              a robot's defaults of a shared config class, as one checked table
``robot``                 a robot's names -> its ``Robot`` record
``commands``              velocity commands: draw, when to redraw, "asks to move"
``gait``                  the gait clock and its swing-height target
``feet``                  contact, air time, slip, phase clearance error per foot
``base``                  base velocity, orientation, height; falls
``joints``                torque, action rate, pose, stand still, soft joint limits
``terms``                 the named reward terms, one small function each (``LEGGED_TERMS``)
``rewards``               their config keys (``RewardScales``) and the positive clip
``reward_kernel``         the step kernel generated from a task's terms and groups
``precision``             float64 (Go1) or float32 (G1) arithmetic of the same maths
``groups``                the observation groups: writer, robot-side builder, units, noise
``observation_kernel``    where the groups go, and the generated source that writes them
``mirror``                the left/right mirror of an observation and of an action
``reset``                 reset randomization
``actions``               actions -> PD targets
``ground``                heights from the ground under the robot, heading, distance walked
``curriculum``            the terrain curriculum: which tile an episode starts on
``kernels``               the pieces of the step around the reward; reset / observe kernels
``task``                  ``LocomotionTask``: the Task a robot subclasses
``terrain_task``          ``TerrainLocomotionTask``: on generated terrain, with a height scan
========================  ==============================================================
"""

from unilab_envs.locomotion.config import LocomotionConfig
from unilab_envs.locomotion.defaults import with_defaults
from unilab_envs.locomotion.rewards import REWARD_NAMES, RewardScales
from unilab_envs.locomotion.robot import LeggedRobot
from unilab_envs.locomotion.task import LocomotionTask

__all__ = ["REWARD_NAMES", "LeggedRobot", "LocomotionConfig", "LocomotionTask", "RewardScales", "with_defaults"]
