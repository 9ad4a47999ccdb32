"""Batched Gaussian action noise for SB3 off-policy algorithms (TD3, SAC exploration).

SB3 wraps any plain ``ActionNoise`` in ``VectorizedActionNoise`` when ``n_envs > 1``,
which keeps one noise object per env and stacks their outputs in a Python loop every
step (1024 calls at N = 1024). This subclass passes SB3's isinstance check and draws
the whole ``(N, act_dim)`` batch in one call.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from stable_baselines3.common.noise import VectorizedActionNoise

__all__ = ["BatchedNormalActionNoise"]


class BatchedNormalActionNoise(VectorizedActionNoise):
    """i.i.d. ``N(0, sigma^2)`` noise of shape ``(n_envs, act_dim)``; stateless, so
    ``reset`` is a no-op."""

    def __init__(self, n_envs: int, act_dim: int, sigma: float | np.ndarray = 0.1, seed: int | None = None):
        self.n_envs = n_envs
        self._shape = (n_envs, act_dim)
        self._sigma = np.broadcast_to(np.asarray(sigma, dtype=np.float32), (act_dim,)).copy()
        self._rng = np.random.default_rng(seed)

    def __call__(self) -> np.ndarray:
        return (self._rng.standard_normal(self._shape, dtype=np.float32) * self._sigma).astype(np.float32)

    def reset(self, indices: Iterable[int] | None = None) -> None:
        pass

    def __repr__(self) -> str:
        return f"BatchedNormalActionNoise(n_envs={self.n_envs}, sigma={self._sigma.tolist()})"
