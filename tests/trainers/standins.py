"""The one stand-in env of the trainer tests: a tiny NumPy vector env with the UniLab contract.

``PointReach`` is a 2-D point driven by velocity actions towards a goal. It behaves like
our batched MuJoCo envs wherever a trainer or an adapter can tell the difference, and is
stricter where a user's env may be:

- obs, reward, flags, final obs and privileged obs are *preallocated buffers rewritten
  in place* every step (UniLab's tasks return fresh arrays; a user's VectorEnv may not,
  and a trainer that keeps them without copying shows aliasing bugs here);
- SAME_STEP (default): dense ``info["final_obs"]`` ``(N, obs)`` float32 with the
  ``info["_final_obs"]`` mask (and ``final_privileged_obs``); NEXT_STEP: Gymnasium's
  semantics, including ``reset(options={"reset_mask": m})``;
- ``info["reward_terms"]`` (the reward is their sum), ``info["is_success"]``,
  ``info["diverged"]`` and an optional privileged observation;
- ``terminated`` at the goal (success) or when the point leaves the arena (a "fall";
  the arena is unbounded unless ``arena=`` is given), ``truncated`` at
  ``max_episode_steps``;
- actions must be ``(N, 2)`` float32 in [-1, 1], as the trainers promise to send;
- ``get_state``/``set_state`` (so resume can be checked bit-exactly) and ``place``.

obs = [pos (2), goal (2)]; privileged obs = [goal - pos (2), |goal - pos|]. It learns
in a few seconds, which keeps the end-to-end tests short. ``named_groups=True`` names them as a
UniLab task does (``obs_groups``: ``pos``, ``goal``; ``privileged_obs_groups``: ``offset``,
``distance``), e.g. for a state estimator's targets.
"""

from __future__ import annotations

import pickle
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

POINT_REACH_ID = "UniLabTest/PointReach-v0"
STEP = 0.15  # distance moved per step at full action


class PointReach(gym.vector.VectorEnv):
    supports_reset_mask = True  # honours reset(options={"reset_mask": m}) (see trainers.sb3.SB3VecEnv)

    def __init__(self, num_envs: int = 8, *, max_episode_steps: int = 40, render_mode=None,
                 autoreset_mode=AutoresetMode.SAME_STEP, seed=None, privileged: bool = True,
                 arena: float = np.inf, success_radius: float = 0.1, named_groups: bool = False):
        self.num_envs = num_envs
        if named_groups:
            self.obs_groups = {"pos": slice(0, 2), "goal": slice(2, 4)}
            self.privileged_obs_groups = {"offset": slice(0, 2), "distance": slice(2, 3)}
        self.max_episode_steps = max_episode_steps
        self.render_mode = render_mode
        self.arena, self.success_radius = arena, success_radius
        self.metadata = {"autoreset_mode": AutoresetMode(autoreset_mode), "render_modes": ["rgb_array"]}
        self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, (4,), np.float32)
        self.single_action_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self.privileged_observation_space = (gym.spaces.Box(-np.inf, np.inf, (3,), np.float32)
                                             if privileged else None)
        self.rng = np.random.default_rng(seed)
        n = num_envs
        self.pos = np.zeros((n, 2))
        self.goal = np.zeros((n, 2))
        self.t = np.zeros(n, np.int64)
        self.needs_reset = np.zeros(n, bool)
        self.obs, self.final_obs = np.zeros((n, 4), np.float32), np.zeros((n, 4), np.float32)
        self.priv, self.final_priv = np.zeros((n, 3), np.float32), np.zeros((n, 3), np.float32)
        self.reward = np.zeros(n, np.float32)
        self.terminated, self.truncated = np.zeros(n, bool), np.zeros(n, bool)
        self.success, self.diverged = np.zeros(n, bool), np.zeros(n, bool)
        self.terms = {"distance": np.zeros(n, np.float32), "action": np.zeros(n, np.float32)}

    def _sample(self, ids):
        self.pos[ids] = self.rng.uniform(-1, 1, (len(ids), 2))
        self.goal[ids] = self.rng.uniform(-1, 1, (len(ids), 2))
        self.t[ids] = 0

    def _write(self, obs, priv):
        obs[:, :2], obs[:, 2:] = self.pos, self.goal
        d = self.goal - self.pos
        priv[:, :2], priv[:, 2] = d, np.linalg.norm(d, axis=1)

    def _info(self, info):
        if self.privileged_observation_space is not None:
            info["privileged_obs"] = self.priv
        return info

    def reset(self, *, seed=None, options: dict[str, Any] | None = None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        options = dict(options or {})
        mask = options.pop("reset_mask", None)
        if options:
            raise ValueError(f"unknown reset options {sorted(options)}")
        ids = np.arange(self.num_envs) if mask is None else np.flatnonzero(np.asarray(mask, bool))
        self._sample(ids)
        self.needs_reset[ids] = False
        self._write(self.obs, self.priv)
        return self.obs, self._info({})

    def step(self, actions):
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs, 2) or actions.dtype != np.float32:
            raise ValueError(f"actions must be ({self.num_envs}, 2) float32, got {actions.shape} {actions.dtype}")
        if not np.all(np.abs(actions) <= 1.0):
            raise ValueError("actions must lie in [-1, 1]")
        next_step = self.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
        if next_step and self.needs_reset.any():  # rows done last step restart now; their action is ignored
            self._sample(np.flatnonzero(self.needs_reset))
        moving = ~self.needs_reset if next_step else np.ones(self.num_envs, bool)
        self.pos[moving] += STEP * actions[moving]
        self.t[moving] += 1
        dist = np.linalg.norm(self.goal - self.pos, axis=1)
        self.terms["distance"][:] = np.where(moving, -dist, 0)
        self.terms["action"][:] = np.where(moving, -0.01 * np.square(actions).sum(1), 0)
        self.reward[:] = self.terms["distance"] + self.terms["action"]
        self.success[:] = (dist < self.success_radius) & moving
        fell = np.any(np.abs(self.pos) > self.arena, axis=1) & moving
        self.terminated[:] = self.success | fell
        self.truncated[:] = (self.t >= self.max_episode_steps) & ~self.terminated & moving
        done = self.terminated | self.truncated
        info = {"reward_terms": self.terms, "is_success": self.success, "diverged": self.diverged}
        if next_step:
            self.needs_reset[:] = done
        else:
            self._write(self.final_obs, self.final_priv)
            info["final_obs"], info["_final_obs"] = self.final_obs, done
            if self.privileged_observation_space is not None:
                info["final_privileged_obs"] = self.final_priv
            self._sample(np.flatnonzero(done))
        self._write(self.obs, self.priv)
        return self.obs, self.reward, self.terminated, self.truncated, self._info(info)

    def place(self, rows: np.ndarray, pos: np.ndarray, goal: np.ndarray) -> None:
        """Test hook: put ``rows`` in a chosen state (the observation is rewritten)."""
        self.pos[rows], self.goal[rows] = pos, goal
        self._write(self.obs, self.priv)

    def get_state(self):
        return {"pos": self.pos.copy(), "goal": self.goal.copy(), "t": self.t.copy(),
                "needs_reset": self.needs_reset.copy(),
                "rng": np.frombuffer(pickle.dumps(self.rng.bit_generator.state), np.uint8).copy()}

    def set_state(self, s):
        self.pos[:], self.goal[:], self.t[:] = s["pos"], s["goal"], s["t"]
        self.needs_reset[:] = s["needs_reset"]
        self.rng.bit_generator.state = pickle.loads(np.asarray(s["rng"]).tobytes())
        self._write(self.obs, self.priv)

    def render(self):
        img = np.zeros((32, 32, 3), np.uint8)
        for p, c in ((self.pos[0], 0), (self.goal[0], 1)):
            x, y = np.clip(((p + 1.5) / 3 * 31).astype(int), 0, 31)
            img[y, x, c] = 255
        return img


def make_point_reach(num_envs=8, max_episode_steps=40, **kwargs):
    """``PointReach`` as the registry's vector entry point builds it."""
    return PointReach(num_envs, max_episode_steps=max_episode_steps, **kwargs)


def register_point_reach() -> str:
    """Register ``PointReach`` as ``UniLabTest/PointReach-v0`` (batched only); returns the id."""
    if POINT_REACH_ID not in gym.registry:
        gym.register(POINT_REACH_ID, entry_point=None, vector_entry_point=make_point_reach, max_episode_steps=40)
    return POINT_REACH_ID


register_point_reach()
