"""``UniLab/Go1JoystickRough-v0``: the Go1 joystick task on generated rough terrain, with a curriculum.

The flat task's robot, commands, gait and reward terms (:mod:`unilab_envs.tasks.go1_joystick`)
on a heightfield of 5 m tiles: one column per terrain type (pyramid slopes, random rough
ground, random blocks, stairs up, stairs down) and one row per difficulty level
(:mod:`unilab_envs.terrain`). Episodes start on a tile's flat centre; an env that walks
half a tile moves up a level, one that ends nearer its start than half of where its
commands led moves down (:mod:`unilab_envs.locomotion.curriculum`); ``info["terrain_level"]`` holds
each env's level. Heights (base, feet, contact, falls) are measured from the ground under
the robot, not from z = 0.

Observation (237 floats): the flat task's 50 (same groups, same order), then
``height_scan`` (187): the base's height above the ground at a 17 x 11 grid of points
10 cm apart around the base (1.6 m along its heading, 1.0 m across), x-major.
``policy_height_scan=False`` drops it from the policy (a blind policy; 50 floats, the flat
task's observation). Privileged observation (212 floats): the flat task's 25, then the
same ``height_scan``.

Defaults that differ from the flat task: contact below 2 cm of the ground (a sphere on a
slope sits a little above the ground straight under it), a softer base-height and
orientation pull (slopes and stairs tilt and lift the base), starts within 0.25 m of a
tile's centre.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from unilab_envs.core.single_env import UniLabEnv
from unilab_envs.core.vector_env import UniLabVectorEnv
from unilab_envs.locomotion import with_defaults
from unilab_envs.locomotion.terrain_task import TerrainLocomotionConfig, TerrainLocomotionTask
from unilab_envs.tasks import go1_joystick as flat

POLICY_GROUPS = (*flat.POLICY_GROUPS, "height_scan")
CRITIC_GROUPS = (*flat.CRITIC_GROUPS, "height_scan")

Go1RoughRewardScales = with_defaults(
    flat.Go1RewardScales, "Go1RoughRewardScales", "Go1's reward scales on terrain: a softer base-height and orientation pull.",
    base_height=-2.0, orientation=-1.0,
)  # fmt: skip
_FLAT_DEFAULTS = {f.name: getattr(flat.Go1JoystickConfig(), f.name) for f in dataclasses.fields(flat.Go1JoystickConfig)}
Go1RoughConfig = with_defaults(
    TerrainLocomotionConfig, "Go1RoughConfig", "Go1's defaults on terrain (the flat task's, changed where noted); unknown keys are rejected.",
    **{**_FLAT_DEFAULTS, "contact_height": 0.02, "reset_xy_range": 0.25, "reward_scales": Go1RoughRewardScales()},
)  # fmt: skip


class Go1JoystickRough(TerrainLocomotionTask, config=Go1RoughConfig, legged=flat.GO1, obs_groups=POLICY_GROUPS,
                       privileged_obs_groups=CRITIC_GROUPS):  # fmt: skip
    """The Go1 joystick task on rough terrain (see module docstring)."""


OBS_GROUPS, PRIVILEGED_GROUPS = Go1JoystickRough.obs_groups, Go1JoystickRough.privileged_obs_groups  # the slices of the groups


def make_env(**kwargs: Any) -> UniLabEnv:
    """Entry point of ``gym.make``: one Go1 rough-terrain env."""
    return UniLabEnv(Go1JoystickRough, **kwargs)


def make_vector_env(num_envs: int, **kwargs: Any) -> UniLabVectorEnv:
    """Entry point of ``gym.make_vec``: ``num_envs`` Go1 rough-terrain envs, batched."""
    return UniLabVectorEnv(Go1JoystickRough, num_envs, **kwargs)
