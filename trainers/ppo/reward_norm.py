"""Reward normalization by the running std of the discounted return (SB3's ``VecNormalize``).

Per env row, the discounted return so far is ``G <- gamma * G + r``; its running variance
(over every row and step seen) scales the reward the learner sees:
``clip(r / sqrt(var + eps), -clip, clip)``. ``G`` restarts at 0 when an episode ends. The
reward is not shifted (the mean is kept), so the sign of every reward stays.

Only the rewards PPO learns from are scaled; episode returns in logs and evaluation stay
in the task's own units. The state (running moments and per-row returns) is saved with the
collector, so a resumed run continues with the same scale.
"""

from __future__ import annotations

import numpy as np
import torch


class RewardNormalizer:
    """Running return statistics of ``num_envs`` rows (float64 moments, Chan's parallel merge)."""

    def __init__(self, num_envs: int, gamma: float, clip: float = 10.0, eps: float = 1e-8):
        self.gamma, self.clip, self.eps = float(gamma), float(clip), float(eps)
        self.returns = np.zeros(num_envs, dtype=np.float64)
        # a prior of mean 0, variance 1 weighing 1e-4 samples (as SB3's RunningMeanStd)
        self.mean, self.var, self.count = 0.0, 1.0, 1e-4

    def _update(self, batch: np.ndarray) -> None:
        n_b = batch.size
        if n_b == 0:
            return
        mean_b, var_b = float(batch.mean()), float(batch.var())
        tot = self.count + n_b
        delta = mean_b - self.mean
        m2 = self.var * self.count + var_b * n_b + delta * delta * self.count * n_b / tot
        self.mean += delta * n_b / tot
        self.var, self.count = m2 / tot, tot

    def __call__(self, reward: np.ndarray, done: np.ndarray, valid: np.ndarray,
                 rows: slice = slice(None)) -> np.ndarray:
        """Scaled rewards of ``rows`` (``[n]``); ``valid`` rows (``[n]`` bool) are real transitions
        and update the statistics, ``done`` rows (``[n]`` bool) restart their return afterwards."""
        reward = np.asarray(reward, dtype=np.float64)
        ret = self.returns[rows]
        ret[valid] = self.gamma * ret[valid] + reward[valid]
        self._update(ret[valid])
        scaled = np.clip(reward / np.sqrt(self.var + self.eps), -self.clip, self.clip)
        ret[np.asarray(done, dtype=bool)] = 0.0
        self.returns[rows] = ret
        return scaled.astype(np.float32)

    def state_dict(self) -> dict:
        return {"returns": torch.from_numpy(self.returns.copy()),
                "moments": torch.tensor([self.mean, self.var, self.count], dtype=torch.float64)}

    def load_state_dict(self, state: dict, returns: bool = True) -> None:
        """Restore the running moments, and the per-row returns unless ``returns=False``
        (the envs start new episodes)."""
        if returns:
            saved = state["returns"].cpu().numpy()
            if saved.shape != self.returns.shape:
                raise ValueError(f"reward normalizer state is for {saved.shape[0]} envs, this run has "
                                 f"{self.returns.shape[0]}")
            self.returns[:] = saved
        self.mean, self.var, self.count = (float(v) for v in state["moments"])
