"""Reward normalization by the running std of the discounted return (SB3's ``VecNormalize``).

Per env row, the discounted return so far is ``G <- gamma * G + r``; its running variance
(over every row and step seen) scales the reward the learner sees:
``clip(r / sqrt(var + eps), -clip, clip)``. ``G`` restarts at 0 when an episode ends. The
reward is not shifted (the mean is kept), so the sign of every reward stays.

Only the rewards PPO learns from are scaled; episode returns in logs and evaluation stay
in the task's own units. The state (running moments and per-row returns) is saved with the
collector, so a resumed run continues with the same scale.

Data-parallel training (:mod:`trainers.ppo.distributed`) keeps one set of statistics for all
ranks: during a rollout each rank updates its copy step by step from its own envs (as a single
process does), and at the end of the rollout the ranks all-reduce what they saw since the last
agreement (:meth:`RewardNormalizer.pending_moments`) and every rank sets the same statistics
(:meth:`RewardNormalizer.apply_all_reduced`): the prior merged with every rank's returns, as
one process stepping all the envs would have them.
"""

from __future__ import annotations

import numpy as np
import torch


def merge_moments(mean: float, var: float, count: float,
                  mean_b: float, var_b: float, n_b: float) -> tuple[float, float, float]:
    """``(mean, var, count)`` of two samples summarized by their means, (population) variances and
    counts (Chan et al.'s parallel merge; ``n_b > 0``)."""
    tot = count + n_b
    delta = mean_b - mean
    m2 = var * count + var_b * n_b + delta * delta * count * n_b / tot
    return mean + delta * n_b / tot, m2 / tot, tot


def shifted_moments(batch: np.ndarray, center: float) -> np.ndarray:
    """``[count, sum(x - center), sum((x - center)^2)]`` (float64) of ``batch``: moments that add
    up over batches and ranks (shifted by a center every rank shares, against cancellation)."""
    d = np.asarray(batch, dtype=np.float64) - center
    return np.array([d.size, d.sum(), np.square(d).sum()], dtype=np.float64)


def moments_summary(moments: np.ndarray, center: float) -> tuple[float, float, float]:
    """``(mean, var, count)`` of the sample whose :func:`shifted_moments` are ``moments``."""
    n, s1, s2 = (float(v) for v in moments)
    m = s1 / n
    return center + m, max(s2 / n - m * m, 0.0), n


class RewardNormalizer:
    """Running return statistics of ``num_envs`` rows (float64 moments, Chan's parallel merge)."""

    def __init__(self, num_envs: int, gamma: float, clip: float = 10.0, eps: float = 1e-8):
        self.gamma, self.clip, self.eps = float(gamma), float(clip), float(eps)
        self.returns = np.zeros(num_envs, dtype=np.float64)
        # a prior of mean 0, variance 1 weighing 1e-4 samples (as SB3's RunningMeanStd)
        self.mean, self.var, self.count = 0.0, 1.0, 1e-4
        self._mark_agreed()

    def _mark_agreed(self) -> None:
        """The current statistics are the ones every rank holds; start counting new returns."""
        self._agreed = (self.mean, self.var, self.count)
        self._pending = np.zeros(3, dtype=np.float64)

    def _update(self, batch: np.ndarray) -> None:
        n_b = batch.size
        if n_b == 0:
            return
        self._pending += shifted_moments(batch, self._agreed[0])
        self.mean, self.var, self.count = merge_moments(self.mean, self.var, self.count,
                                                        float(batch.mean()), float(batch.var()), n_b)

    def pending_moments(self) -> torch.Tensor:
        """``[count, sum(G - c), sum((G - c)^2)]`` (float64 ``[3]``) of the returns ``G`` this
        normalizer saw since the statistics were last agreed (``c``: the agreed mean, the same on
        every rank). Summed over ranks, they are the input of :meth:`apply_all_reduced`."""
        return torch.from_numpy(self._pending.copy())

    def apply_all_reduced(self, moments: torch.Tensor) -> None:
        """Set the statistics to the agreed ones merged with ``moments`` (every rank's
        :meth:`pending_moments`, summed): the same on every rank that applies the same sum."""
        m = np.asarray(moments.detach().cpu().numpy(), dtype=np.float64).reshape(3)
        if m[0] > 0:
            self.mean, self.var, self.count = merge_moments(*self._agreed, *moments_summary(m, self._agreed[0]))
        else:
            self.mean, self.var, self.count = self._agreed
        self._mark_agreed()

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
        self._mark_agreed()
