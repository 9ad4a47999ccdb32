"""``UniLab/Go1JoystickDepth-v0``: the Go1 on rough terrain that sees the ground through a depth camera.

The rough-terrain task (:mod:`unilab_envs.tasks.go1_rough`: the same terrain, curriculum, robot,
commands and reward terms) with the policy's height scan replaced by a depth camera on the
Go1's head (:class:`~unilab_envs.sensors.DepthCamera`; ``camera=...`` sets its resolution, field
of view, range, mount and frame rate). The critic still sees the height scan (privileged), so a
height-scan teacher's observation can be assembled from this env's two observations.

Observation: the flat task's 50 floats (same groups, same order), then ``depth``: the camera's
latest frame, ``height * width`` depths in metres (16 x 12 = 192 by default), row-major from the
top-left pixel, an image group of shape ``(1, height, width)``. Privileged observation: the
rough task's (the flat task's 25, then ``height_scan``).
"""

from __future__ import annotations

from typing import Any

from unilab_envs.core.single_env import UniLabEnv
from unilab_envs.core.vector_env import UniLabVectorEnv
from unilab_envs.locomotion.terrain_task import TerrainLocomotionTask
from unilab_envs.tasks import go1_joystick as flat
from unilab_envs.tasks import go1_rough as rough

POLICY_GROUPS = (*flat.POLICY_GROUPS, "depth")
CRITIC_GROUPS = rough.CRITIC_GROUPS


class Go1JoystickDepth(TerrainLocomotionTask, config=rough.Go1RoughConfig, legged=flat.GO1, obs_groups=POLICY_GROUPS,
                       privileged_obs_groups=CRITIC_GROUPS):  # fmt: skip
    """The Go1 on rough terrain with a depth camera instead of the policy's height scan (see module docstring)."""


def make_env(**kwargs: Any) -> UniLabEnv:
    """Entry point of ``gym.make``: one Go1 rough-terrain env with a depth camera."""
    return UniLabEnv(Go1JoystickDepth, **kwargs)


def make_vector_env(num_envs: int, **kwargs: Any) -> UniLabVectorEnv:
    """Entry point of ``gym.make_vec``: ``num_envs`` Go1 rough-terrain envs with depth cameras, batched."""
    return UniLabVectorEnv(Go1JoystickDepth, num_envs, **kwargs)
