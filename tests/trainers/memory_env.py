"""``CueRecall``: a tiny NumPy vector env that only a policy with memory solves.

Each episode draws a cue ``c`` in ``{-1, +1}`` and shows it at the first step only: obs =
``[c, 1]`` at step 0, ``[0, 0]`` after. Every step the action ``a`` (one entry in [-1, 1]) earns
``-(a - c)^2``; the episode ends (``terminated``) after :data:`LENGTH` steps. A feed-forward policy
sees the same ``[0, 0]`` at every later step whatever the cue, so its best answer there is 0
(|a - c| = 1); a recurrent one remembers the cue and answers it (|a - c| -> 0).
``info["is_success"]`` at an episode's end: the mean |a - c| over its steps after the first
is below :data:`SUCCESS_ERROR`. SAME_STEP autoreset with a dense ``info["final_obs"]``; episodes
start at spread steps (the first one is partial); ``get_state`` / ``set_state`` for exact resume.
"""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

CUE_RECALL_ID = "UniLabTest/CueRecall-v0"
LENGTH = 8
SUCCESS_ERROR = 0.25


class CueRecall(gym.vector.VectorEnv):
    def __init__(self, num_envs: int = 8, *, max_episode_steps: int = LENGTH, render_mode=None, seed=None,
                 autoreset_mode=AutoresetMode.SAME_STEP):
        if AutoresetMode(autoreset_mode) != AutoresetMode.SAME_STEP:
            raise ValueError("CueRecall resets in the same step only")
        self.num_envs, self.render_mode = num_envs, render_mode
        self.length = max_episode_steps
        self.metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}
        self.single_observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.single_action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self.rng = np.random.default_rng(seed)
        self.cue = np.zeros(num_envs)
        self.t = np.zeros(num_envs, np.int64)
        self.error = np.zeros(num_envs)  # sum of |a - c| over the episode's steps after the first

    def _obs(self) -> np.ndarray:
        first = self.t == 0
        return np.stack([np.where(first, self.cue, 0.0), first.astype(float)], 1).astype(np.float32)

    def _new(self, ids: np.ndarray) -> None:
        self.cue[ids] = self.rng.choice([-1.0, 1.0], len(ids))
        self.t[ids] = 0
        self.error[ids] = 0.0

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        ids = np.arange(self.num_envs)
        self._new(ids)
        self.t[:] = self.rng.integers(0, self.length, self.num_envs)  # spread episode starts
        return self._obs(), {}

    def step(self, actions):
        a = np.asarray(actions, np.float64).reshape(self.num_envs)
        miss = np.abs(a - self.cue)
        reward = -np.square(a - self.cue)
        self.error += np.where(self.t > 0, miss, 0.0)
        self.t += 1
        terminated = self.t >= self.length
        truncated = np.zeros(self.num_envs, bool)
        success = terminated & (self.error / max(self.length - 1, 1) < SUCCESS_ERROR)
        final = self._obs()
        info = {"is_success": success, "final_obs": final, "_final_obs": terminated.copy(),
                "cue_error": np.where(self.t > 1, miss, 0.0)}
        self._new(np.flatnonzero(terminated))
        return self._obs(), reward.astype(np.float32), terminated, truncated, info

    def get_state(self):
        return {"cue": self.cue.copy(), "t": self.t.copy(), "error": self.error.copy(),
                "rng": np.frombuffer(pickle.dumps(self.rng.bit_generator.state), np.uint8).copy()}

    def set_state(self, s):
        self.cue[:], self.t[:], self.error[:] = s["cue"], s["t"], s["error"]
        self.rng.bit_generator.state = pickle.loads(np.asarray(s["rng"]).tobytes())


def make_cue_recall(num_envs=8, max_episode_steps=LENGTH, **kwargs):
    return CueRecall(num_envs, max_episode_steps=max_episode_steps, **kwargs)


def register_cue_recall() -> str:
    """Register ``CueRecall`` as ``UniLabTest/CueRecall-v0`` (batched only); returns the id."""
    if CUE_RECALL_ID not in gym.registry:
        gym.register(CUE_RECALL_ID, entry_point=None, vector_entry_point=make_cue_recall, max_episode_steps=LENGTH)
    return CUE_RECALL_ID


register_cue_recall()
