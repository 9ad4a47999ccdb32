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

LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0


def mlp(in_dim: int, hidden: tuple[int, ...], out_dim: int, layer_norm: bool) -> nn.Sequential:
    """Linear layers with ELU between them (and layer norm before each ELU when asked)."""
    layers: list[nn.Module] = []
    last = in_dim
    for width in hidden:
        layers.append(nn.Linear(last, width))
        if layer_norm:
            layers.append(nn.LayerNorm(width))
        layers.append(nn.ELU())
        last = width
    layers.append(nn.Linear(last, out_dim))
    return nn.Sequential(*layers)


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
