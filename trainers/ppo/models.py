"""Networks: the Gaussian actor-critic (its MLPs and the observation normalizer: :mod:`trainers.common.mlp`,
:mod:`trainers.common.normalizers`)."""

from __future__ import annotations

import math

import torch
from torch import nn

from ..common.mlp import ACTIVATIONS as _ACT, mlp
from ..common.normalizers import EmpiricalNormalizer
from .config import PolicyConfig
from .image_encoder import ImageMLP, image_groups_in

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

    #: width of the actor's hidden state: 0, a feed-forward actor (trainers.ppo.recurrent has the recurrent one)
    hidden_size = 0
    #: the critic-input columns a state estimator regresses: none (trainers.ppo.estimator has the actor with one)
    target_columns: tuple[int, ...] = ()

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

    def normalized(self, obs: torch.Tensor) -> torch.Tensor:
        """The raw observation as the actor reads it (the folded-in normalizer)."""
        if self.enabled:
            obs = torch.clamp((obs - self.mean) * self.inv_std, -self.clip, self.clip)
        return obs

    def _mean(self, obs: torch.Tensor) -> torch.Tensor:
        return self.actor(self.normalized(obs))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self._mirror_averaged(self._mean(obs), obs)

    def _mirror_averaged(self, mean: torch.Tensor, obs: torch.Tensor) -> torch.Tensor:
        """The action from ``mean``, the actor's mean on raw ``obs``: ``mean`` itself, or with a mirror map its
        average with the mirror image of the actor's mean on the mirrored ``obs``."""
        if self.mirror is None:
            return mean
        return 0.5 * (mean + self.mirror.action(self._mean(self.mirror.observation(obs))))
