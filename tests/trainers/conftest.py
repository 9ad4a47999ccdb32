"""Fixtures for the PPO tests: a tiny NumPy vector env that follows the UniLab contract.

``PointReach``: a 2-D point driven by velocity actions towards a goal. It has named
reward terms, ``is_success``, an optional privileged observation, both autoreset modes,
and ``get_state``/``set_state`` (so resume can be checked bit-exactly). It learns in a
few seconds, which keeps the end-to-end tests short.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

POINT_REACH_ID = "UniLabTest/PointReach-v0"


class PointReach(gym.vector.VectorEnv):
    def __init__(self, num_envs: int = 8, *, max_episode_steps: int = 40, render_mode=None,
                 autoreset_mode=AutoresetMode.SAME_STEP, seed=None, privileged: bool = True):
        self.num_envs = num_envs
        self.max_episode_steps = max_episode_steps
        self.render_mode = render_mode
        self.metadata = {"autoreset_mode": AutoresetMode(autoreset_mode), "render_modes": ["rgb_array"]}
        self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, (4,), np.float32)
        self.single_action_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self.privileged_observation_space = (gym.spaces.Box(-np.inf, np.inf, (3,), np.float32)
                                             if privileged else None)
        self.rng = np.random.default_rng(seed)
        self.pos = np.zeros((num_envs, 2))
        self.goal = np.zeros((num_envs, 2))
        self.t = np.zeros(num_envs, np.int64)
        self.needs_reset = np.zeros(num_envs, bool)

    def _sample(self, ids):
        self.pos[ids] = self.rng.uniform(-1, 1, (len(ids), 2))
        self.goal[ids] = self.rng.uniform(-1, 1, (len(ids), 2))
        self.t[ids] = 0

    def _obs(self):
        return np.concatenate([self.pos, self.goal], 1).astype(np.float32)

    def _priv(self):
        d = self.goal - self.pos
        return np.concatenate([d, np.linalg.norm(d, axis=1, keepdims=True)], 1).astype(np.float32)

    def _info(self, info):
        if self.privileged_observation_space is not None:
            info["privileged_obs"] = self._priv()
        return info

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self._sample(np.arange(self.num_envs))
        self.needs_reset[:] = False
        return self._obs(), self._info({})

    def step(self, actions):
        actions = np.asarray(actions, dtype=np.float32)
        assert actions.shape == (self.num_envs, 2) and np.all(np.abs(actions) <= 1.0)
        n = self.num_envs
        if self.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP and self.needs_reset.any():
            ids = np.flatnonzero(self.needs_reset)
            self._sample(ids)
        moving = ~self.needs_reset if self.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP else np.ones(n, bool)
        self.pos[moving] += 0.15 * actions[moving]
        self.t[moving] += 1
        dist = np.linalg.norm(self.goal - self.pos, axis=1)
        terms = {"distance": (-dist).astype(np.float32),
                 "action": (-0.01 * np.square(actions).sum(1)).astype(np.float32)}
        terms = {k: np.where(moving, v, 0).astype(np.float32) for k, v in terms.items()}
        reward = (terms["distance"] + terms["action"]).astype(np.float32)
        success = (dist < 0.1) & moving
        terminated = success.copy()
        truncated = (self.t >= self.max_episode_steps) & ~terminated & moving
        done = terminated | truncated
        info = {"reward_terms": terms, "is_success": success}
        if self.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP:
            info["final_obs"] = self._obs()
            info["_final_obs"] = done
            if self.privileged_observation_space is not None:
                info["final_privileged_obs"] = self._priv()
            self._sample(np.flatnonzero(done))
        else:
            self.needs_reset = done
        return self._obs(), reward, terminated, truncated, self._info(info)

    def get_state(self):
        return {"pos": self.pos.copy(), "goal": self.goal.copy(), "t": self.t.copy(),
                "needs_reset": self.needs_reset.copy(),
                "rng": np.frombuffer(__import__("pickle").dumps(self.rng.bit_generator.state), np.uint8).copy()}

    def set_state(self, s):
        self.pos[:], self.goal[:], self.t[:] = s["pos"], s["goal"], s["t"]
        self.needs_reset[:] = s["needs_reset"]
        self.rng.bit_generator.state = __import__("pickle").loads(np.asarray(s["rng"]).tobytes())

    def render(self):
        img = np.zeros((32, 32, 3), np.uint8)
        for p, c in ((self.pos[0], 0), (self.goal[0], 1)):
            x, y = np.clip(((p + 1.5) / 3 * 31).astype(int), 0, 31)
            img[y, x, c] = 255
        return img


def make_point_reach(num_envs=8, max_episode_steps=40, **kwargs):
    return PointReach(num_envs, max_episode_steps=max_episode_steps, **kwargs)


if POINT_REACH_ID not in gym.registry:
    gym.register(POINT_REACH_ID, entry_point=None, vector_entry_point=make_point_reach, max_episode_steps=40)


@pytest.fixture
def point_reach():
    return make_point_reach
