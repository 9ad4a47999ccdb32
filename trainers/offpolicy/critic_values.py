"""What the twin critic's outputs mean and how they learn: a scalar Q (the default) or C51's distribution.

The learner holds one of these as a collaborator (``algo.distributional`` picks it) and never
branches on which: both read the critic's raw outputs ``(2, B, outputs)`` through the same three
calls, with the n-step batch's ``reward`` (the return ``R``), ``discount`` (``gamma^m``, 0 after a
failure) and SAC's ``entropy`` (``alpha * log pi(a'|s')``, ``None`` for TD3):

- :meth:`expected` -> ``(2, B)``: each head's Q (the actor maximizes it);
- :meth:`target` -> the critic's target from the target critic's outputs at the next action
  (clipped double-Q: the head whose expected value is lower, per sample);
- :meth:`loss` -> the critic loss against that target.

:class:`ScalarValue`: ``y = R + discount * (min(Q1', Q2') - entropy)``, squared error.
:class:`CategoricalValue` (C51, as FastTD3 uses it): the lower head's distribution over the atoms
``z``, shifted and scaled to ``R - discount * entropy + discount * z`` and projected back onto the
atoms (:func:`project_distribution`); cross-entropy against it.
"""

from __future__ import annotations

import torch
from torch import nn

from trainers.offpolicy.config import DistributionalCritic


def project_distribution(probs: torch.Tensor, reward: torch.Tensor, discount: torch.Tensor, atoms: torch.Tensor) -> torch.Tensor:
    """C51's projection of the distribution of ``reward + discount * Z`` onto the fixed atoms ``z``.

    ``probs``: ``(B, K)``, the probabilities of ``Z`` over ``atoms`` (``(K,)``, evenly spaced from
    ``v_min = atoms[0]`` to ``v_max = atoms[-1]``); ``reward``, ``discount``: ``(B,)``. Returns
    ``(B, K)`` probabilities over the same atoms.

    Atom ``j``'s mass moves to ``reward + discount * z_j``, clipped to ``[v_min, v_max]``, and is split
    between the two atoms either side of that point, each getting the share of its closeness (linear
    interpolation): the total mass is kept and, where nothing is clipped, so is the mean
    (``reward + discount * E[Z]``). A point exactly on an atom gives that atom all its mass: the
    lower neighbour is at most atom ``K - 2`` and the upper one is always lower + 1, so the
    degenerate "lower == upper" case of the textbook code never arises (on the last atom, the
    lower one gets weight 0). ``discount = 0`` (a failure) puts all the mass at ``reward`` (split
    between its neighbours, clipped).
    """
    k = atoms.shape[0]
    v_min, v_max = atoms[0], atoms[-1]
    moved = (reward[:, None] + discount[:, None] * atoms[None, :]).clamp(v_min, v_max)
    position = (moved - v_min) / ((v_max - v_min) / (k - 1))  # fractional atom index in [0, K - 1]
    lower = position.floor().clamp(0, k - 2)
    upper_share = (position - lower).clamp(0.0, 1.0)
    lower = lower.long()
    out = torch.zeros_like(probs)
    out.scatter_add_(1, lower, probs * (1.0 - upper_share))
    out.scatter_add_(1, lower + 1, probs * upper_share)
    return out


class ScalarValue(nn.Module):
    """One output per head, Q itself (the default critic; see the module docstring)."""

    outputs = 1

    def expected(self, out: torch.Tensor) -> torch.Tensor:
        return out[..., 0]

    def target(self, next_out: torch.Tensor, reward: torch.Tensor, discount: torch.Tensor,
               entropy: torch.Tensor | None) -> torch.Tensor:
        """``(B,)``: ``R + discount * (min(Q1', Q2') - entropy)``."""
        next_q = self.expected(next_out).min(dim=0).values
        if entropy is not None:
            next_q = next_q - entropy
        return reward + discount * next_q

    def loss(self, out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return (self.expected(out) - target[None]).pow(2).mean()


class CategoricalValue(nn.Module):
    """C51: logits over ``num_atoms`` atoms on ``[v_min, v_max]`` per head (see the module docstring)."""

    def __init__(self, cfg: DistributionalCritic) -> None:
        super().__init__()
        self.outputs = cfg.num_atoms
        # not persistent: rebuilt from the config, so checkpoints hold only the critic's weights
        self.register_buffer("atoms", torch.linspace(cfg.v_min, cfg.v_max, cfg.num_atoms), persistent=False)

    def expected(self, out: torch.Tensor) -> torch.Tensor:
        return (out.softmax(-1) * self.atoms).sum(-1)

    def target(self, next_out: torch.Tensor, reward: torch.Tensor, discount: torch.Tensor,
               entropy: torch.Tensor | None) -> torch.Tensor:
        """``(B, K)``: the lower head's distribution, moved to ``R - discount * entropy + discount * z``, projected."""
        probs = next_out.softmax(-1)
        lower_head = (probs * self.atoms).sum(-1).argmin(dim=0)  # (B,): clipped double-Q per sample
        chosen = probs.gather(0, lower_head[None, :, None].expand(1, *probs.shape[1:]))[0]
        shift = reward if entropy is None else reward - discount * entropy
        return project_distribution(chosen, shift, discount, self.atoms)

    def loss(self, out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Cross-entropy of both heads against the projected target, averaged over heads and samples."""
        return -(target[None] * out.log_softmax(-1)).sum(-1).mean()


def critic_value(cfg: DistributionalCritic | None) -> ScalarValue | CategoricalValue:
    """The value head ``algo.distributional`` asks for: C51's when set, else the scalar one."""
    return ScalarValue() if cfg is None else CategoricalValue(cfg)
