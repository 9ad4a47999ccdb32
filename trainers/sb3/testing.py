"""A tiny batched env that follows the UniLab vector env contract, for adapter tests.

``ToyReachVectorEnv`` is a 2-D point mass steered towards a goal. It behaves like our
batched MuJoCo envs where the adapter can tell the difference:

- obs / reward / flags are *preallocated buffers rewritten in place* every step (so an
  adapter that forgets to copy shows aliasing bugs);
- SAME_STEP (default): dense ``info["final_obs"]`` ``(N, obs)`` float32 + ``_final_obs``;
  NEXT_STEP: Gymnasium's semantics, including ``reset(options={"reset_mask": m})``;
- ``info["reward_terms"]`` (reward == their sum), ``info["is_success"]``,
  ``info["diverged"]``;
- ``terminated`` when the mass leaves the arena (a "fall") or reaches the goal
  (success), ``truncated`` at ``max_episode_steps``.

obs = [pos (2), goal - pos (2), vel (2)]; action (2,) in [-1, 1] is an acceleration.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

OBS_DIM, ACT_DIM = 6, 2


class ToyReachVectorEnv(VectorEnv):
    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}
    supports_reset_mask = True  # honours reset(options={"reset_mask": m}) (see SB3VecEnv)

    def __init__(
        self,
        num_envs: int,
        *,
        max_episode_steps: int = 50,
        render_mode: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
        seed: int | None = None,
        arena: float = 2.0,
        success_radius: float = 0.1,
        dt: float = 0.1,
    ):
        self.num_envs = num_envs
        self.max_episode_steps = max_episode_steps
        self.render_mode = render_mode
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.arena, self.success_radius, self.dt = arena, success_radius, dt
        self.single_observation_space = spaces.Box(-np.inf, np.inf, (OBS_DIM,), np.float32)
        self.single_action_space = spaces.Box(-1.0, 1.0, (ACT_DIM,), np.float32)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        n = num_envs
        self.pos = np.zeros((n, 2))
        self.vel = np.zeros((n, 2))
        self.goal = np.zeros((n, 2))
        self.steps = np.zeros(n, dtype=np.int64)
        self.obs = np.zeros((n, OBS_DIM), np.float32)
        self.final_obs = np.zeros((n, OBS_DIM), np.float32)
        self.reward = np.zeros(n, np.float32)
        self.terminated = np.zeros(n, bool)
        self.truncated = np.zeros(n, bool)
        self.pending_reset = np.zeros(n, bool)
        self.diverged = np.zeros(n, bool)
        self.terms = {"distance": np.zeros(n, np.float32), "effort": np.zeros(n, np.float32)}
        self.rng = np.random.default_rng(seed)

    def _reset_rows(self, mask: np.ndarray) -> None:
        k = int(mask.sum())
        self.pos[mask] = self.rng.uniform(-1.0, 1.0, (k, 2))
        self.goal[mask] = self.rng.uniform(-1.0, 1.0, (k, 2))
        self.vel[mask] = 0.0
        self.steps[mask] = 0

    def _write_obs(self) -> None:
        self.obs[:, 0:2] = self.pos
        self.obs[:, 2:4] = self.goal - self.pos
        self.obs[:, 4:6] = self.vel

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        options = dict(options or {})
        mask = options.pop("reset_mask", None)
        if options:
            raise ValueError(f"unknown reset options {sorted(options)}")
        mask = np.ones(self.num_envs, bool) if mask is None else np.asarray(mask, bool)
        self._reset_rows(mask)
        self.pending_reset[mask] = False
        self._write_obs()
        return self.obs, {}

    def step(self, actions: np.ndarray):
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs, ACT_DIM) or actions.dtype != np.float32:
            raise ValueError(f"actions must be ({self.num_envs}, {ACT_DIM}) float32, got {actions.shape} {actions.dtype}")
        if not np.all(np.isfinite(actions)):
            raise ValueError("actions contain NaN/inf")
        live = ~self.pending_reset
        a = np.clip(actions, -1.0, 1.0).astype(np.float64)
        self.vel[live] = 0.8 * self.vel[live] + self.dt * a[live]
        self.pos[live] += self.dt * self.vel[live]
        self.steps[live] += 1
        dist = np.linalg.norm(self.goal - self.pos, axis=1)
        self.terms["distance"][:] = -dist
        self.terms["effort"][:] = -0.01 * np.sum(a * a, axis=1)
        success = dist < self.success_radius
        fell = np.any(np.abs(self.pos) > self.arena, axis=1)
        self.reward[:] = self.terms["distance"] + self.terms["effort"] + 10.0 * success
        self.terminated[:] = (success | fell) & live
        self.truncated[:] = (self.steps >= self.max_episode_steps) & live & ~self.terminated
        info = {"reward_terms": self.terms, "is_success": success & live, "diverged": self.diverged}
        done = self.terminated | self.truncated
        self._write_obs()
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            self.final_obs[done] = self.obs[done]
            if done.any():
                self._reset_rows(done)
                self._write_obs()
            info["final_obs"], info["_final_obs"] = self.final_obs, done
        else:
            # NEXT_STEP: rows flagged last step are reset now (their action is ignored)
            restart = self.pending_reset.copy()
            if restart.any():
                self._reset_rows(restart)
                self._write_obs()
                self.reward[restart] = 0.0
            self.pending_reset[:] = done
        return self.obs, self.reward, self.terminated, self.truncated, info

    def place(self, rows: np.ndarray, pos: np.ndarray, goal: np.ndarray, vel: np.ndarray | None = None) -> None:
        """Test hook: put rows in a chosen state (then obs is rewritten)."""
        self.pos[rows], self.goal[rows] = pos, goal
        self.vel[rows] = 0.0 if vel is None else vel
        self._write_obs()


TOY_ID = "UniLabTest/ToyReach-v0"


def register_toy() -> str:
    """Register ``ToyReachVectorEnv`` as ``UniLabTest/ToyReach-v0`` (batched only)."""
    import gymnasium as gym

    if TOY_ID not in gym.registry:
        gym.register(TOY_ID, entry_point=None, vector_entry_point=f"{__name__}:ToyReachVectorEnv",
                     max_episode_steps=50)
    return TOY_ID
