"""``UniLabEnv``: one env of a task as a plain ``gymnasium.Env``.

It runs the same task kernels as the batched env, on a batch of one with
autoreset disabled, so a single env seeded with ``s + i`` follows exactly the
trajectory of env ``i`` of a batch seeded with ``s`` (given the same actions
and ``spread_episode_starts=False`` on the batch). The time limit is
Gymnasium's ``TimeLimit`` wrapper, added by ``gym.make`` from the registration.
"""

from __future__ import annotations

from typing import Any, Callable

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from unilab_envs.core.task import Task
from unilab_envs.core.vector_env import UniLabVectorEnv


class UniLabEnv(gym.Env):
    """A single env over the batched core (see module docstring)."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, task_factory: Callable[..., Task], *, render_mode: str | None = None, num_threads: int | None = 1, **task_config: Any) -> None:
        self._vec = UniLabVectorEnv(
            task_factory,
            1,
            max_episode_steps=None,
            render_mode=render_mode,
            autoreset_mode=AutoresetMode.DISABLED,
            spread_episode_starts=False,
            num_threads=num_threads,
            **task_config,
        )
        self.render_mode = render_mode
        self.metadata = {"render_modes": ["rgb_array"], "render_fps": self._vec.metadata["render_fps"]}
        self.observation_space = self._vec.single_observation_space
        self.action_space = self._vec.single_action_space
        self.privileged_observation_space = self._vec.privileged_observation_space
        self.task = self._vec.task
        self.model = self._vec.model
        self.frame_skip = self._vec.frame_skip
        self.dt = self._vec.dt
        self.obs_groups = self._vec.obs_groups
        self.reward_names = self._vec.reward_names

    @staticmethod
    def _unbatch(info: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in info.items():
            out[key] = UniLabEnv._unbatch(value) if isinstance(value, dict) else value[0]
        return out

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if seed is None and not self._vec._seeded:
            seed = int(self.np_random.integers(2**31))
        obs, info = self._vec.reset(seed=seed, options=options)
        return obs[0], self._unbatch(info)

    def step(self, action):
        """One control step; ``gymnasium.error.ResetNeeded`` before the first :meth:`reset`."""
        self._vec.require_reset_done()
        action = np.asarray(action)
        if action.shape != self.action_space.shape:
            raise ValueError(f"action must have shape {self.action_space.shape}, got {action.shape}")
        obs, reward, terminated, truncated, info = self._vec.step(action[None])
        return obs[0], float(reward[0]), bool(terminated[0]), bool(truncated[0]), self._unbatch(info)

    def render(self):
        return self._vec.render()

    def close(self) -> None:
        self._vec.close()
