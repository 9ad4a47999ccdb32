"""Observation normalizers from running statistics, in one place.

:class:`EmpiricalNormalizer` (the bundled PPO and the distilled student: float64 moments that a
distributed run all-reduces before applying them, columns an image fixes) and :class:`RunningNorm`
(SAC / TD3: float32 statistics updated from each batch). Both normalize as ``clip((x - mean) /
sqrt(var + eps), -clip, clip)``; they stay two classes because their statistics are kept at different
precisions and travel in checkpoints under their own buffer names: one class would change shipped
policies' numbers.
"""

from __future__ import annotations

import torch
from torch import nn


class EmpiricalNormalizer(nn.Module):
    """Running mean / variance of observations (float64 moments, float32 output).

    ``normalize`` is ``clip((x - mean) / sqrt(var + eps), -clip, clip)``. Statistics change
    only through :meth:`update_from_moments` (batch count, sum, sum of squares), so a
    distributed layer can all-reduce the moments before applying them. The state lives in
    buffers and travels in the state dict (and so in checkpoints). Columns given to
    :meth:`fix_columns` (an image's) keep a fixed scale and are never updated.
    """

    def __init__(self, dim: int, clip: float = 10.0, eps: float = 1e-8, enabled: bool = True):
        super().__init__()
        self.clip, self.eps, self.enabled = float(clip), float(eps), bool(enabled)
        self.register_buffer("mean", torch.zeros(dim, dtype=torch.float64))
        self.register_buffer("var", torch.ones(dim, dtype=torch.float64))
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))
        self.register_buffer("fixed", None, persistent=False)  # bool [D]: columns fix_columns froze

    @torch.no_grad()
    def fix_columns(self, columns: torch.Tensor, scale: torch.Tensor) -> None:
        """Normalize ``columns`` as ``x / scale`` (mean 0, variance ``scale**2``) from now on, whatever
        the moments say (:mod:`trainers.ppo.image_encoder`: an image is not scaled by running statistics)."""
        columns = columns.to(self.mean.device)
        self.mean[columns] = 0.0
        self.var[columns] = scale.to(self.var).square()
        fixed = torch.zeros_like(self.mean, dtype=torch.bool)
        fixed[columns] = True
        self.fixed = fixed

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        if not self.enabled:
            return x
        mean = self.mean.to(x.dtype)
        inv_std = torch.rsqrt(self.var + self.eps).to(x.dtype)
        return torch.clamp((x - mean) * inv_std, -self.clip, self.clip)

    forward = normalize

    @staticmethod
    def moments(x: torch.Tensor) -> torch.Tensor:
        """``[count, sum..., sumsq...]`` (float64, ``[1 + 2D]``) of a batch ``x`` ``[B, D]``."""
        x = x.to(torch.float64)
        n = torch.tensor([x.shape[0]], dtype=torch.float64, device=x.device)
        return torch.cat([n, x.sum(0), x.square().sum(0)])

    @torch.no_grad()
    def update_from_moments(self, m: torch.Tensor) -> None:
        """Merge batch moments (see :meth:`moments`; sums of several batches add up)."""
        if not self.enabled:
            return
        d = self.mean.numel()
        n_b = m[0]
        if n_b <= 0:
            return
        mean_b = m[1:1 + d] / n_b
        var_b = (m[1 + d:] / n_b - mean_b.square()).clamp_min(0.0)
        n = self.count
        tot = n + n_b
        delta = mean_b - self.mean
        new_mean = self.mean + delta * (n_b / tot)
        m2 = self.var * n + var_b * n_b + delta.square() * n * n_b / tot
        new_var = m2 / tot
        if self.fixed is not None:
            new_mean = torch.where(self.fixed, self.mean, new_mean)
            new_var = torch.where(self.fixed, self.var, new_var)
        self.mean.copy_(new_mean)
        self.var.copy_(new_var)
        self.count.copy_(tot)


class RunningNorm(nn.Module):
    """Observation normalization from running statistics (Chan et al.'s parallel update), clipped at +-``clip``."""

    def __init__(self, dim: int, clip: float = 10.0, eps: float = 1e-8) -> None:
        super().__init__()
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("var", torch.ones(dim))
        self.register_buffer("count", torch.tensor(eps))
        self.clip, self.eps = clip, eps

    @torch.no_grad()
    def update(self, x: torch.Tensor) -> None:
        batch_mean, batch_var, n = x.mean(0), x.var(0, unbiased=False), x.shape[0]
        total = self.count + n
        delta = batch_mean - self.mean
        self.mean += delta * n / total
        self.var = (self.var * self.count + batch_var * n + delta.pow(2) * self.count * n / total) / total
        self.count = total

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ((x - self.mean) / torch.sqrt(self.var + self.eps)).clamp(-self.clip, self.clip)
