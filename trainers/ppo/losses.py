"""PPO loss pieces as free functions with shape-documented signatures.

``B`` is the minibatch size, ``A`` the action dimension. ``mask`` (``[B]``, 0/1 float or
``None``) drops rows that are not real transitions (the reset step of NEXT_STEP
autoreset); a masked mean is ``sum(x * mask) / max(sum(mask), 1)``.
"""

from __future__ import annotations

import math

import torch

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)

#: What one minibatch step reports, in the order of its statistics tensor (one tensor: one device
#: sync per update): the losses' own statistics, then the gradient norm the optimizer step adds.
LOSS_STATS = ("loss/policy", "loss/value", "loss/entropy", "loss/kl", "loss/clip_fraction", "loss/symmetry",
              "loss/estimator")
MINIBATCH_STATS = (*LOSS_STATS, "loss/grad_norm")


def masked_mean(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Mean of ``x`` ``[B]`` over rows where ``mask`` ``[B]`` is 1."""
    if mask is None:
        return x.mean()
    return (x * mask).sum() / mask.sum().clamp_min(1.0)


def normalized_advantages(adv: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """``(adv - mean) / (std + 1e-8)`` over the rows of ``adv`` ``[B]`` where ``mask`` is 1
    (population std; SB3 uses the sample std, a factor sqrt(B / (B - 1)) apart)."""
    mean = masked_mean(adv, mask)
    var = masked_mean((adv - mean).square(), mask)
    return (adv - mean) / (var.sqrt() + 1e-8)


def gaussian_log_prob(actions: torch.Tensor, mean: torch.Tensor, log_std: torch.Tensor) -> torch.Tensor:
    """Log-density of a diagonal Gaussian: actions, mean ``[B, A]``, log_std ``[A]`` -> ``[B]``."""
    z = (actions - mean) * torch.exp(-log_std)
    return (-0.5 * z.square() - log_std - _LOG_SQRT_2PI).sum(-1)


def gaussian_entropy(log_std: torch.Tensor) -> torch.Tensor:
    """Entropy of a diagonal Gaussian with state-independent ``log_std`` ``[A]`` -> scalar."""
    return (log_std + 0.5 + _LOG_SQRT_2PI).sum()


def gaussian_kl(mean_old: torch.Tensor, log_std_old: torch.Tensor,
                mean_new: torch.Tensor, log_std_new: torch.Tensor) -> torch.Tensor:
    """KL(old || new) of diagonal Gaussians: means ``[B, A]``, log-stds ``[A]`` -> ``[B]``."""
    var_old = torch.exp(2.0 * log_std_old)
    var_new = torch.exp(2.0 * log_std_new)
    kl = log_std_new - log_std_old + (var_old + (mean_old - mean_new).square()) / (2.0 * var_new) - 0.5
    return kl.sum(-1)


def clipped_surrogate_loss(log_prob: torch.Tensor, old_log_prob: torch.Tensor, advantages: torch.Tensor,
                           clip: float, mask: torch.Tensor | None = None) -> torch.Tensor:
    """PPO policy loss ``-E[min(r A, clip(r, 1-eps, 1+eps) A)]``, ``r = exp(logp - logp_old)``; all ``[B]``."""
    ratio = torch.exp(log_prob - old_log_prob)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1.0 - clip, 1.0 + clip) * advantages
    return -masked_mean(torch.minimum(unclipped, clipped), mask)


def clipped_value_loss(values: torch.Tensor, old_values: torch.Tensor, returns: torch.Tensor,
                       clip: float | None, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Value loss ``E[max((v - R)^2, (v_old + clip(v - v_old, -eps, eps) - R)^2)]``; all ``[B]``.

    ``clip=None`` gives the plain squared error ``E[(v - R)^2]`` (as rsl_rl, no 1/2 factor).
    """
    loss = (values - returns).square()
    if clip is not None:
        clipped = old_values + torch.clamp(values - old_values, -clip, clip)
        loss = torch.maximum(loss, (clipped - returns).square())
    return masked_mean(loss, mask)


def estimator_loss(estimate: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """A state estimator's supervised loss: the squared error averaged over the ``K`` columns of
    ``estimate`` / ``targets`` ``[B, K]``, then (masked) over the rows."""
    return masked_mean((estimate - targets).square().mean(-1), mask)


def adaptive_learning_rate(lr: float, kl: float, desired_kl: float,
                           min_lr: float = 1e-5, max_lr: float = 1e-2, factor: float = 1.5) -> float:
    """rsl_rl's KL-adaptive rule: shrink lr when KL > 2x target, grow it when KL < target / 2."""
    if kl > 2.0 * desired_kl:
        return max(min_lr, lr / factor)
    if 0.0 < kl < 0.5 * desired_kl:
        return min(max_lr, lr * factor)
    return lr


def adaptive_learning_rate_tensor(lr: torch.Tensor, kl: torch.Tensor, desired_kl: float,
                                  min_lr: float = 1e-5, max_lr: float = 1e-2, factor: float = 1.5) -> torch.Tensor:
    """:func:`adaptive_learning_rate` on device tensors (no host sync; CUDA-graph safe)."""
    down = torch.clamp(lr / factor, min=min_lr)
    up = torch.clamp(lr * factor, max=max_lr)
    grow = (kl > 0) & (kl < 0.5 * desired_kl)
    return torch.where(kl > 2.0 * desired_kl, down, torch.where(grow, up, lr))
