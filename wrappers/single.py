"""``SingleEnv``: a one-env vector env (wrapped or not) as a plain ``gymnasium.Env``.

The wrappers are vector wrappers. For a single env, build the batch of one and
adapt it::

    env = wrappers.SingleEnv(wrappers.Sim2Real(gym.make_vec("UniLab/Go1Joystick-v0", num_envs=1), profile="go1_real"))
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())

Step results are unbatched (``info`` arrays become their row 0). When an
episode ends, the observation returned is the episode's last one (SAME_STEP's
``final_obs``), as a ``gymnasium.Env`` must; call ``reset()`` before stepping on.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv


def _unbatch(info: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in info.items():
        if isinstance(value, dict):
            out[key] = _unbatch(value)
        elif isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == 1:
            out[key] = value[0]
        else:
            out[key] = value
    return out


class SingleEnv(gym.Env):
    """A ``gymnasium.Env`` over a ``VectorEnv`` with ``num_envs == 1`` (see module docstring)."""

    def __init__(self, env: VectorEnv) -> None:
        if not isinstance(env, VectorEnv) or env.num_envs != 1:
            raise ValueError(f"SingleEnv adapts a VectorEnv with num_envs=1, got {env!r}")
        self.env = env
        self.observation_space = env.single_observation_space
        self.action_space = env.single_action_space
        self.metadata = dict(env.metadata)
        self.render_mode = env.render_mode
        self._same_step = env.metadata.get("autoreset_mode") is AutoresetMode.SAME_STEP

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        obs, info = self.env.reset(seed=seed, options=options)
        return obs[0], _unbatch(info)

    def step(self, action):
        action = np.asarray(action, dtype=np.float32)
        if action.shape != self.action_space.shape:
            raise ValueError(f"action must have shape {self.action_space.shape}, got {action.shape}")
        obs, reward, terminated, truncated, info = self.env.step(action[None])
        out = obs[0]
        if self._same_step and (terminated[0] or truncated[0]) and "final_obs" in info:
            out = np.asarray(info["final_obs"][0])
        return out, float(reward[0]), bool(terminated[0]), bool(truncated[0]), _unbatch(info)

    def render(self):
        return self.env.render()

    def close(self) -> None:
        self.env.close()
