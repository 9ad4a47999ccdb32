"""Keep the controller's own state exact at the top of a sim-to-real stack.

:data:`~unilab_robot.deploy.controller_groups.CONTROLLER_GROUPS` explains why: after the
observation pipeline, :class:`ControllerState` writes back the groups the controller knows
itself, from the env's untouched observation (``command``, ``phase``, targets), and puts the
policy's own previous action, clipped to the action space, into ``last_action`` (the env's
``last_action`` is what the robot executed: delayed, lost or noisy under the action
pipeline). Rows that start an episode keep the env's values (a fresh episode's zero action).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from wrappers._base import episode_starts

from unilab_envs.core.actions import validate_actions
from unilab_robot.deploy.controller_groups import CONTROLLER_GROUPS, LAST_ACTION
from unilab_robot.deploy.safety import remembered_action


class ControllerState:
    """Rewrites the controller groups of a stack's observations (see module docstring).

    ``env`` is the base env (its ``obs_groups`` name the columns); ``tap`` the stack's
    :class:`~wrappers.privileged.CleanObservationTap`. ``columns`` is empty (and every call
    a no-op) for a task without named groups.
    """

    def __init__(self, env: VectorEnv, tap, guarded: bool = False) -> None:
        groups: dict[str, slice] = getattr(env.unwrapped, "obs_groups", None) or {}
        size = int(np.prod(env.single_observation_space.shape))
        index = np.arange(size)
        self.tap = tap
        self.columns = np.concatenate([index[groups[g]] for g in sorted(CONTROLLER_GROUPS) if g in groups] or
                                      [np.zeros(0, np.int64)])
        self.action_columns = index[groups[LAST_ACTION]] if LAST_ACTION in groups else np.zeros(0, np.int64)
        space = env.single_action_space
        self._low, self._high = np.asarray(space.low, np.float32), np.asarray(space.high, np.float32)
        self._shape = (env.num_envs, *space.shape)
        self._mode = AutoresetMode(env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP))
        self._pending = np.zeros(env.num_envs, bool)
        self._none = np.zeros(env.num_envs, bool)
        self._action = np.zeros(self._shape, np.float32)
        self.active = self.columns.size > 0
        self.guarded = guarded  # a safety layer takes non-finite actions (and trips): remember them as 0

    def remember(self, actions) -> None:
        """The policy's action of this step, clipped as the env clips it."""
        if self.active and self.action_columns.size:
            if self.guarded:
                actions = np.asarray(actions)
                if actions.shape != self._shape:
                    validate_actions(actions, self._shape)  # raises the shape error
                self._action[:] = remembered_action(actions, self._low, self._high)
            else:
                np.clip(validate_actions(actions, self._shape), self._low, self._high, out=self._action)

    def after_reset(self, obs: np.ndarray, mask=None) -> np.ndarray:
        """``mask``: the rows reset (``options["reset_mask"]``; all by default); the others keep the last action."""
        if not self.active:
            return obs
        started = np.ones(obs.shape[0], bool) if mask is None else np.asarray(mask, bool)
        self._pending &= ~started
        obs = np.array(obs, copy=True)
        obs[:, self.columns] = self.tap.obs[:, self.columns]
        if self.action_columns.size:
            obs[np.ix_(~started, self.action_columns)] = self._action[~started]
        return obs

    def after_step(self, obs: np.ndarray, terminated, truncated, info: dict[str, Any]) -> np.ndarray:
        if not self.active:
            return obs
        started = episode_starts(self._mode, terminated, truncated, self._pending, self._none)
        obs = np.array(obs, copy=True)
        obs[:, self.columns] = self.tap.obs[:, self.columns]
        if self.action_columns.size:
            keep = ~started
            obs[np.ix_(keep, self.action_columns)] = self._action[keep]
        if "final_obs" in info and self.tap.final_obs is not None:
            final = np.array(info["final_obs"], dtype=np.float32, copy=True)
            final[:, self.columns] = self.tap.final_obs[:, self.columns]
            if self.action_columns.size:
                final[:, self.action_columns] = self._action
            info["final_obs"] = final
        return obs
