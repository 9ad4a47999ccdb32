"""Networks: empirical observation normalizer and the Gaussian actor-critic."""

from __future__ import annotations

import math

import torch
from torch import nn

from .config import PolicyConfig
from .image_encoder import ImageMLP, image_groups_in

_ACT = {"elu": nn.ELU, "tanh": nn.Tanh, "relu": nn.ReLU, "silu": nn.SiLU}


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


def mlp(inp: int, hidden: tuple[int, ...], out: int, activation: str, out_gain: float,
        ortho_init: bool = True) -> nn.Sequential:
    """``inp -> hidden... -> out`` with ``activation`` between layers.

    ``ortho_init``: orthogonal weights (gain sqrt 2; ``out_gain`` on the head) and zero
    biases, as rsl_rl and SB3's default; otherwise PyTorch's default ``nn.Linear`` init
    (SB3's ``ortho_init=False``).
    """
    layers: list[nn.Module] = []
    dims = (inp, *hidden, out)
    for k, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
        lin = nn.Linear(a, b)
        head = k == len(dims) - 2
        if ortho_init:
            nn.init.orthogonal_(lin.weight, gain=out_gain if head else 2 ** 0.5)
            nn.init.zeros_(lin.bias)
        layers += [lin] if head else [lin, _ACT[activation]()]
    return nn.Sequential(*layers)


def network(inp: int, hidden: tuple[int, ...], out: int, cfg: PolicyConfig, out_gain: float) -> nn.Module:
    """The MLP ``inp -> hidden -> out``, behind a CNN per image group when ``inp`` columns hold any."""
    groups = image_groups_in(cfg, inp)
    if not groups:
        return mlp(inp, hidden, out, cfg.activation, out_gain=out_gain, ortho_init=cfg.ortho_init)
    return ImageMLP(inp, groups, cfg.image_encoder, _ACT[cfg.activation],
                    lambda width: mlp(width, hidden, out, cfg.activation, out_gain=out_gain, ortho_init=cfg.ortho_init))


class ActorCritic(nn.Module):
    """Gaussian policy ``N(actor(obs), exp(log_std))`` and value ``critic(critic_obs)``.

    Inputs are already normalized. ``critic_obs`` is the privileged observation when
    the task offers one (asymmetric actor-critic), else the policy observation. With
    ``cfg.max_std`` the std has a ceiling, kept by :meth:`bound_std_` after each optimizer step.
    A network whose input holds image groups (``cfg.image_groups``) runs a CNN on each first
    (:class:`~trainers.ppo.image_encoder.ImageMLP`); otherwise it is the plain MLP.
    """

    def __init__(self, obs_dim: int, critic_obs_dim: int, act_dim: int, cfg: PolicyConfig):
        super().__init__()
        self.obs_dim, self.critic_obs_dim, self.act_dim = obs_dim, critic_obs_dim, act_dim
        self.actor = network(obs_dim, cfg.actor_hidden, act_dim, cfg, out_gain=0.01)
        self.critic = network(critic_obs_dim, cfg.critic_hidden, 1, cfg, out_gain=1.0)
        self.log_std = nn.Parameter(torch.full((act_dim,), float(torch.log(torch.tensor(cfg.init_std)))))
        self.max_log_std = None if cfg.max_std is None else math.log(cfg.max_std)

    @torch.no_grad()
    def bound_std_(self) -> None:
        """Project the log-std below ``log(max_std)`` (in place; a no-op without a ceiling)."""
        if self.max_log_std is not None:
            self.log_std.clamp_(max=self.max_log_std)

    def action_mean(self, obs: torch.Tensor) -> torch.Tensor:
        return self.actor(obs)

    def value(self, critic_obs: torch.Tensor) -> torch.Tensor:
        return self.critic(critic_obs).squeeze(-1)

    def sample(self, obs: torch.Tensor, generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Sample ``(actions, mean)`` ``[B, A]`` with noise from ``generator``."""
        mean = self.actor(obs)
        noise = torch.randn(mean.shape, generator=generator, device=mean.device, dtype=mean.dtype)
        return mean + noise * torch.exp(self.log_std), mean


class TorchMirror(nn.Module):
    """A task's mirror map (``obs_perm``, ``obs_sign``, ``act_perm``, ``act_sign`` arrays) as tensors:
    ``x[..., perm] * sign`` on observations and on actions, each its own inverse."""

    def __init__(self, mirror):
        super().__init__()
        self.register_buffer("obs_perm", torch.as_tensor(mirror.obs_perm, dtype=torch.long))
        self.register_buffer("obs_sign", torch.as_tensor(mirror.obs_sign, dtype=torch.float32))
        self.register_buffer("act_perm", torch.as_tensor(mirror.act_perm, dtype=torch.long))
        self.register_buffer("act_sign", torch.as_tensor(mirror.act_sign, dtype=torch.float32))

    def observation(self, obs: torch.Tensor) -> torch.Tensor:
        return obs[..., self.obs_perm] * self.obs_sign

    def action(self, actions: torch.Tensor) -> torch.Tensor:
        return actions[..., self.act_perm] * self.act_sign


class InferencePolicy(nn.Module):
    """Deterministic deployed policy: raw observation -> normalized -> action mean (for ONNX).

    ``mirror`` (a task's mirror map: ``obs_perm``, ``obs_sign``, ``act_perm``, ``act_sign``): the
    action is ``(f(o) + m(f(m(o)))) / 2`` with ``f`` the normalized actor, so the policy is exactly
    its own mirror image (``policy.mirror_average``).
    """

    def __init__(self, normalizer: EmpiricalNormalizer, actor: nn.Module, mirror=None):
        super().__init__()
        self.enabled = normalizer.enabled
        self.clip = normalizer.clip
        self.register_buffer("mean", normalizer.mean.detach().float().clone())
        self.register_buffer("inv_std", torch.rsqrt(normalizer.var.detach() + normalizer.eps).float().clone())
        self.actor = actor
        self.mirror = None if mirror is None else TorchMirror(mirror)

    def _mean(self, obs: torch.Tensor) -> torch.Tensor:
        if self.enabled:
            obs = torch.clamp((obs - self.mean) * self.inv_std, -self.clip, self.clip)
        return self.actor(obs)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        if self.mirror is None:
            return self._mean(obs)
        return 0.5 * (self._mean(obs) + self.mirror.action(self._mean(self.mirror.observation(obs))))
