"""SAC and TD3 updates on :class:`~trainers.offpolicy.replay.Batch`es, one code path.

Critic: clipped double-Q on the n-step target
``y = R + discount * (min(Q1', Q2')(s', a') - alpha * log pi(a'|s'))`` (TD3: no entropy term, ``a'``
the target actor's action plus clipped Gaussian smoothing noise). Actor: SAC maximizes
``min(Q1, Q2)(s, a) - alpha * log pi(a|s)`` with ``alpha`` learned towards a target entropy; TD3
maximizes ``Q1(s, pi(s))`` every ``policy_delay`` critic updates. Targets follow by Polyak
averaging. What a critic head outputs (a scalar Q, or with ``algo.distributional`` C51's logits:
the target the projected n-step distribution, the loss cross-entropy, Q the expectation) is the
collaborator ``self.value`` (:mod:`trainers.offpolicy.critic_values`); the update is the same code.
Observations are normalized by running statistics the runner updates from the collected batches
(the actor's and the critic's inputs each have their own). The update's forward passes run under
bfloat16 autocast on CUDA when ``algo.bf16``, and on a CPU with native bf16 arithmetic when
``algo.bf16_cpu`` (:func:`precision_device`); the networks' outputs are cast back to float32 before
the targets, losses and log-probabilities' sums, and the weights, gradients and Adam's moments stay
float32, so checkpoints, export and resume are the same either way. Acting is float32.
"""

from __future__ import annotations

import copy
import math

import torch
from torch import nn

from trainers.offpolicy.config import OffPolicyAlgo, OffPolicyNets
from trainers.offpolicy.critic_values import critic_value
from trainers.offpolicy.networks import Actor, RunningNorm, TwinCritic
from trainers.offpolicy.replay import Batch
from trainers.common.mixed_precision import amp_device_type, bf16_autocast


def precision_device(algo: OffPolicyAlgo, device: torch.device) -> str | None:
    """The autocast device type of the update: ``"cuda"`` (``algo.bf16`` on a GPU with bf16), ``"cpu"``
    (``algo.bf16_cpu`` on a CPU with native bf16; a CPU without it warns once), or None: float32."""
    if device.type == "cuda":
        return "cuda" if algo.bf16 and torch.cuda.is_bf16_supported() else None
    return amp_device_type(algo.bf16_cpu, device, "algo.bf16_cpu") if device.type == "cpu" else None


class OffPolicyLearner(nn.Module):
    """The actor, the twin critic, their targets, optimizers and normalizers (see the module docstring)."""

    def __init__(self, obs_dim: int, critic_extra: int, action_dim: int, algo: OffPolicyAlgo, nets: OffPolicyNets,
                 device: torch.device) -> None:
        super().__init__()
        self.algo, self.sac = algo, algo.kind == "sac"
        self.obs_norm = RunningNorm(obs_dim) if nets.obs_norm else nn.Identity()
        self.critic_norm = RunningNorm(obs_dim + critic_extra) if nets.obs_norm else nn.Identity()
        self.actor = Actor(obs_dim, action_dim, nets.actor_hidden, nets.layer_norm, stochastic=self.sac)
        self.value = critic_value(algo.distributional)
        self.critic = TwinCritic(obs_dim + critic_extra, action_dim, nets.critic_hidden, nets.layer_norm, self.value.outputs)
        self.target_critic = copy.deepcopy(self.critic).requires_grad_(False)
        self.target_actor = copy.deepcopy(self.actor).requires_grad_(False)
        self.log_alpha = nn.Parameter(torch.tensor(math.log(algo.alpha)), requires_grad=algo.autotune_alpha)
        self.target_entropy = -float(action_dim) * algo.entropy_scale
        self.to(device)
        self.device = torch.device(device)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=algo.actor_lr)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=algo.critic_lr)
        self.alpha_opt = torch.optim.Adam([self.log_alpha], lr=algo.critic_lr)
        self.updates = 0
        self.precision_device = precision_device(algo, self.device)  # None: float32

    # --- acting -------------------------------------------------------------------------------
    @torch.no_grad()
    def act(self, obs: torch.Tensor, explore: bool, noise: torch.Tensor | None = None) -> torch.Tensor:
        """Actions in ``[-1, 1]`` for a batch of raw observations: sampled (SAC) or noised (TD3) when exploring;
        ``noise``: the standard normal draw to explore with (default: a fresh one; the runner passes its
        correlated draw under ``algo.exploration_correlation``)."""
        x = self.obs_norm(obs)
        if not explore:
            return self.actor(x)
        if self.sac:
            return self.actor.sample(x, noise)[0]
        noise = torch.randn_like(obs[..., : self.actor.action_dim]) if noise is None else noise
        action = self.actor(x) + self.algo.exploration_noise * noise
        return action.clamp(-1.0, 1.0)

    @torch.no_grad()
    def observe_statistics(self, obs: torch.Tensor, critic_in: torch.Tensor) -> None:
        """Update the running normalizers with a batch of collected observations."""
        for norm, x in ((self.obs_norm, obs), (self.critic_norm, critic_in)):
            if isinstance(norm, RunningNorm):
                norm.update(x)

    # --- learning ------------------------------------------------------------------------------
    def update(self, batch: Batch) -> dict[str, float]:
        """One critic update, and the actor's (and alpha's) when due; the losses as floats."""
        algo = self.algo
        critic_in = self._critic_in(batch.obs, batch.critic_obs)
        next_critic_in = self._critic_in(batch.next_obs, batch.next_critic_obs)
        obs, next_obs = self.obs_norm(batch.obs), self.obs_norm(batch.next_obs)
        alpha = self.log_alpha.exp().detach()
        with torch.no_grad(), self._precision():
            if self.sac:
                next_action, next_log_prob = self.actor.sample(next_obs)
            else:
                noise = (algo.target_noise * torch.randn_like(batch.action)).clamp(-algo.target_noise_clip, algo.target_noise_clip)
                next_action, next_log_prob = (self.target_actor(next_obs) + noise).clamp(-1.0, 1.0), None
            entropy = alpha * next_log_prob.float() if self.sac else None
            next_out = self.target_critic(next_critic_in, next_action).float()
            target = self.value.target(next_out, batch.reward, batch.discount, entropy)
        with self._precision():
            out = self.critic(critic_in, batch.action).float()
        critic_loss = self.value.loss(out, target)
        self.critic_opt.zero_grad(set_to_none=True)
        critic_loss.backward()
        nn.utils.clip_grad_norm_(self.critic.parameters(), algo.max_grad_norm)
        self.critic_opt.step()
        stats = {"loss/critic": critic_loss.item(), "q/mean": self.value.expected(out.detach()).mean().item()}
        self.updates += 1
        if self.sac or self.updates % algo.policy_delay == 0:
            stats.update(self._update_actor(obs, critic_in, alpha))
            self._polyak(self.critic, self.target_critic)
            if not self.sac:
                self._polyak(self.actor, self.target_actor)
        return stats

    def _update_actor(self, obs: torch.Tensor, critic_in: torch.Tensor, alpha: torch.Tensor) -> dict[str, float]:
        self.critic.requires_grad_(False)
        with self._precision():
            if self.sac:
                action, log_prob = self.actor.sample(obs)
                q = self.value.expected(self.critic(critic_in, action).float()).min(dim=0).values
                actor_loss = (alpha * log_prob.float() - q).mean()
            else:
                actor_loss = -self.value.expected(self.critic(critic_in, self.actor(obs)).float())[0].mean()
        self.critic.requires_grad_(True)
        self.actor_opt.zero_grad(set_to_none=True)
        actor_loss.backward()
        nn.utils.clip_grad_norm_(self.actor.parameters(), self.algo.max_grad_norm)
        self.actor_opt.step()
        stats = {"loss/actor": actor_loss.item()}
        if self.sac and self.algo.autotune_alpha:
            alpha_loss = -(self.log_alpha * (log_prob.detach().float() + self.target_entropy)).mean()
            self.alpha_opt.zero_grad(set_to_none=True)
            alpha_loss.backward()
            self.alpha_opt.step()
            stats.update({"loss/alpha": alpha_loss.item(), "alpha": self.log_alpha.exp().item(),
                          "entropy": -log_prob.float().mean().item()})
        return stats

    def _critic_in(self, obs: torch.Tensor, extra: torch.Tensor | None) -> torch.Tensor:
        x = obs if extra is None else torch.cat([obs, extra], dim=-1)
        return self.critic_norm(x)

    def _precision(self):
        return bf16_autocast(self.precision_device)

    def _polyak(self, source: nn.Module, target: nn.Module) -> None:
        with torch.no_grad():
            for p, t in zip(source.parameters(), target.parameters()):
                t.lerp_(p, self.algo.tau)

    def optimizer_state(self) -> dict:
        return {"actor": self.actor_opt.state_dict(), "critic": self.critic_opt.state_dict(),
                "alpha": self.alpha_opt.state_dict(), "updates": self.updates}

    def load_optimizer_state(self, state: dict) -> None:
        self.actor_opt.load_state_dict(state["actor"])
        self.critic_opt.load_state_dict(state["critic"])
        self.alpha_opt.load_state_dict(state["alpha"])
        self.updates = int(state["updates"])
