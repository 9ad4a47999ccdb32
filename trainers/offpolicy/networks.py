"""The off-policy learner's networks: an MLP (optionally with layer norm), the actor, the twin critic.

SAC's actor is a tanh-squashed Gaussian (its deterministic action: ``tanh(mean)``); TD3's is
deterministic (``tanh`` of its output). Actions live in ``[-1, 1]``; the runner maps them to
the env's box. The critic is two Q networks (clipped double-Q: the target takes their minimum),
each a scalar or, with ``algo.distributional``, logits over C51's atoms;
with an asymmetric critic its input is the observation followed by the privileged extras.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from trainers.common.mlp import layer_norm_mlp as mlp
from trainers.common.normalizers import RunningNorm  # noqa: F401  (the learner's normalizer)

LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0


class Actor(nn.Module):
    """``stochastic=True`` (SAC): mean and log-std heads; ``False`` (TD3): one deterministic head."""

    def __init__(self, obs_dim: int, action_dim: int, hidden: tuple[int, ...], layer_norm: bool, stochastic: bool) -> None:
        super().__init__()
        self.stochastic = stochastic
        self.net = mlp(obs_dim, hidden, 2 * action_dim if stochastic else action_dim, layer_norm)
        self.action_dim = action_dim

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """The deterministic action in ``[-1, 1]`` (what is exported and evaluated)."""
        out = self.net(obs)
        return torch.tanh(out[..., : self.action_dim])

    def sample(self, obs: torch.Tensor, noise: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """A squashed Gaussian action and its log-probability (SAC; tanh's change of variables included);
        ``noise``: the standard normal draw to use (default: a fresh one)."""
        out = self.net(obs)
        mean, log_std = out[..., : self.action_dim], out[..., self.action_dim:]
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (torch.tanh(log_std) + 1.0)
        std = log_std.exp()
        noise = torch.randn_like(mean) if noise is None else noise
        pre = mean + std * noise
        action = torch.tanh(pre)
        log_prob = (-0.5 * noise.pow(2) - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
        log_prob = log_prob - (2.0 * (math.log(2.0) - pre - nn.functional.softplus(-2.0 * pre))).sum(-1)
        return action, log_prob


class TwinCritic(nn.Module):
    """Two Q networks of ``(critic input, action)``; ``forward`` returns both heads' raw outputs, ``(2, B, outputs)``
    (``outputs`` 1: Q itself; C51: logits over its atoms; :mod:`trainers.offpolicy.critic_values` reads them)."""

    def __init__(self, in_dim: int, action_dim: int, hidden: tuple[int, ...], layer_norm: bool, outputs: int = 1) -> None:
        super().__init__()
        self.q1 = mlp(in_dim + action_dim, hidden, outputs, layer_norm)
        self.q2 = mlp(in_dim + action_dim, hidden, outputs, layer_norm)

    def forward(self, critic_in: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        x = torch.cat([critic_in, action], dim=-1)
        return torch.stack([self.q1(x), self.q2(x)])
