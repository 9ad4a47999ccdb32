"""The mirror loss: an actor that acts as the mirror image of itself (rsl_rl's symmetry, as a loss).

With a task's :class:`~unilab_envs.locomotion.mirror.MirrorMap` ``m`` (a permutation and a
sign per entry, on observations and on actions), the loss of a minibatch is

    ``coef * E[ || actor(m(o)) - m(actor(o)) ||^2 ]``

with the right-hand side held fixed (no gradient through it): the policy learns to answer a
mirrored situation with the mirrored action, e.g. the same recovery from a push to the left
and to the right, and no yaw drift on a straight command that its mirror image does not have.
The actor reads normalized observations, so ``o`` is mapped back to raw units, mirrored and
normalized again (entries clipped by the normalizer stay clipped).
"""

from __future__ import annotations

import torch

from .losses import masked_mean
from .models import EmpiricalNormalizer, TorchMirror


def mirror_normalized(mirror: TorchMirror, normalizer: EmpiricalNormalizer, obs_n: torch.Tensor) -> torch.Tensor:
    """``normalize(m(denormalize(obs_n)))`` for normalized observations ``[B, O]``."""
    if not normalizer.enabled:
        return mirror.observation(obs_n)
    mean = normalizer.mean.to(obs_n.dtype)
    std = torch.sqrt(normalizer.var + normalizer.eps).to(obs_n.dtype)
    raw = obs_n * std + mean
    return normalizer.normalize(mirror.observation(raw))


class MirrorAveragedMean:
    """``MirrorAveragedMean(mirror, device)(policy, normalizer, obs_n)`` -> ``[B, A]``: the Gaussian
    mean ``(actor(o) + m(actor(m(o)))) / 2`` of normalized observations (``policy.symmetric_actor``).

    It is the deployed action of ``policy.mirror_average`` (trainers.ppo.models.InferencePolicy), so
    with it PPO samples around, and optimizes, the action the robot will get; the mean is exactly
    its own mirror image (up to the normalizer's clipping), which makes a mirror loss vanish.

    ``truth_mirror``: ``(perm, sign)`` of a state estimator's targets (:func:`trainers.ppo.estimator.truth_mirror`);
    with it a call may pass ``truth`` (the estimator warm-up: the actor reads the true values), and the mirrored
    pass reads their mirror image ``truth[..., perm] * sign``.
    """

    def __init__(self, mirror, device: torch.device, truth_mirror=None):
        self.mirror = TorchMirror(mirror).to(device)
        self.truth_perm = self.truth_sign = None
        if truth_mirror is not None:
            self.truth_perm = torch.as_tensor(truth_mirror[0], dtype=torch.long, device=device)
            self.truth_sign = torch.as_tensor(truth_mirror[1], dtype=torch.float32, device=device)

    def __call__(self, policy, normalizer: EmpiricalNormalizer, obs_n: torch.Tensor,
                 truth: torch.Tensor | None = None) -> torch.Tensor:
        mirrored_obs = mirror_normalized(self.mirror, normalizer, obs_n)
        if truth is None:
            mirrored, mean = policy.action_mean(mirrored_obs), policy.action_mean(obs_n)
        else:
            if self.truth_perm is None:
                raise ValueError("MirrorAveragedMean was built without the targets' mirror (truth_mirror)")
            mirrored = policy.action_mean(mirrored_obs, truth[..., self.truth_perm] * self.truth_sign)
            mean = policy.action_mean(obs_n, truth)
        return 0.5 * (mean + self.mirror.action(mirrored))


class SymmetryLoss:
    """``SymmetryLoss(mirror, coef, device)(policy, normalizer, obs_n, mean, mask)`` -> scalar loss.

    ``mirror``: an object with ``obs_perm``, ``obs_sign``, ``act_perm``, ``act_sign`` arrays.
    """

    def __init__(self, mirror, coef: float, device: torch.device):
        self.coef = float(coef)
        self.mirror = TorchMirror(mirror).to(device)

    def __call__(self, policy, normalizer: EmpiricalNormalizer, obs_n: torch.Tensor, mean: torch.Tensor,
                 mask: torch.Tensor | None) -> torch.Tensor:
        """The mirror loss of one minibatch (unscaled; the caller weighs it with ``coef``)."""
        mirrored = policy.action_mean(mirror_normalized(self.mirror, normalizer, obs_n)).float()
        target = self.mirror.action(mean.detach())
        return masked_mean((mirrored - target).square().sum(-1), mask)
