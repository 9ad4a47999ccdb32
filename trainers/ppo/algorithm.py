"""PPO update: clipped surrogate, clipped value loss, entropy bonus, adaptive-KL lr.

The algorithm owns the actor-critic, the observation normalizers and the optimizer; it
reads a filled :class:`~trainers.ppo.storage.RolloutStorage` and never touches an env.
Three small methods are the hooks a data-parallel layer wraps: :meth:`PPO.reduce_gradients`
(all-reduce gradients before the optimizer step), :meth:`PPO.update_normalizers`
(all-reduce the batch moments before merging them) and :meth:`PPO.reduce_kl` (average the
KL that drives the adaptive learning rate); see :mod:`trainers.ppo.distributed`.

While :attr:`PPO.actor_held` (a warm-up: ``algo.critic_warmup_iterations`` or
``policy.estimator.warmup_iterations``; the runner sets it per iteration) the update drops the policy,
entropy and mirror terms (so neither the actor nor its std gets a gradient: Adam leaves them as they
are) and the adaptive learning rate is held (the KL is 0); the critic and the estimator learn. While
:attr:`PPO.reads_truth` (the estimator's warm-up) the actor acts on the targets' true values in place
of the estimate.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from . import losses as L
from .config import AlgoConfig
from ..common.mixed_precision import amp_device_type, bf16_autocast
from .models import ActorCritic, EmpiricalNormalizer
from .storage import Minibatch, RolloutStorage


def linear_learning_rate(base: float, progress: float) -> float:
    """The linear schedule's rate at ``progress`` (iteration / total iterations): ``base`` to 0."""
    return base * max(1.0 - progress, 0.0)


class PPO:
    def __init__(self, policy: ActorCritic, obs_normalizer: EmpiricalNormalizer,
                 critic_normalizer: EmpiricalNormalizer | None, cfg: AlgoConfig, device: torch.device,
                 symmetry=None, averaged_mean=None):
        self.policy, self.cfg, self.device = policy, cfg, torch.device(device)
        self.symmetry = symmetry  # a SymmetryLoss (trainers.ppo.symmetry) when algo.symmetry_coef > 0
        # a MirrorAveragedMean (trainers.ppo.symmetry) when policy.symmetric_actor: the Gaussian's mean
        self.averaged_mean = averaged_mean
        self.obs_normalizer = obs_normalizer
        self.critic_normalizer = critic_normalizer
        self.actor_held = False  # a warm-up (module docstring); the runner sets it each iteration
        self.reads_truth = False  # the estimator's warm-up: the actor reads its targets' true values
        self.amp_device = amp_device_type(cfg.amp, self.device)  # None: float32 (trainers.common.mixed_precision)
        self.params = list(policy.parameters())
        # a state estimator's weights (trainers.ppo.estimator): in the one optimizer, their gradient (the supervised
        # loss's alone) clipped on its own, so it does not shrink the policy's steps
        estimator = policy.estimator_parameters() if hasattr(policy, "estimator_parameters") else []
        self.clip_groups = [[p for p in self.params if all(p is not q for q in estimator)]] + (
            [estimator] if estimator else [])
        self.graphed = None
        # a recurrent actor's minibatches are env sequences: eager (the captured step gathers flat rows)
        if cfg.cuda_graph and self.device.type == "cuda" and not policy.hidden_size:
            from .cuda_graph import GraphedUpdate
            self.graphed = GraphedUpdate(self)
            # capturable fused Adam reading its lr from device memory (updated inside the graph)
            self._lr_t = torch.tensor(float(cfg.learning_rate), device=self.device)
            self.optimizer = torch.optim.Adam(self.params, lr=self._lr_t, eps=cfg.adam_eps, fused=True, capturable=True)
        else:
            self._lr = float(cfg.learning_rate)
            # fused Adam: one kernel for all parameters (CPU and CUDA)
            self.optimizer = torch.optim.Adam(self.params, lr=self._lr, eps=cfg.adam_eps, fused=True)

    # ------------------------------------------------------------------ acting

    @property
    def amp(self) -> bool:
        """True when the networks run under bf16 autocast (``algo.amp`` on a device that has bf16)."""
        return self.amp_device is not None

    def autocast(self):
        """bf16 autocast when :attr:`amp`; a no-op otherwise. What stays float32: :mod:`trainers.common.mixed_precision`."""
        # no weight-cast cache under CUDA graphs: the same code runs inside the capture
        return bf16_autocast(self.amp_device, cache_enabled=self.graphed is None)

    def normalize(self, obs: torch.Tensor, critic_obs: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        """Raw -> normalized (policy obs, critic obs); the critic reads the policy obs when no privileged one."""
        obs_n = self.obs_normalizer(obs)
        if critic_obs is None or self.critic_normalizer is None:
            return obs_n, obs_n
        return obs_n, self.critic_normalizer(critic_obs)

    def action_mean(self, obs_n: torch.Tensor, truth: torch.Tensor | None = None) -> torch.Tensor:
        """The Gaussian policy's mean for normalized observations (call under :meth:`autocast`). ``truth``: a state
        estimator's targets, raw ``[B, K]``, which the actor reads in place of the estimate while
        :attr:`reads_truth` (ignored otherwise)."""
        truth = truth if self.reads_truth else None
        if self.averaged_mean is None:
            return self.policy.action_mean(obs_n) if truth is None else self.policy.action_mean(obs_n, truth)
        if truth is None:
            return self.averaged_mean(self.policy, self.obs_normalizer, obs_n)
        return self.averaged_mean(self.policy, self.obs_normalizer, obs_n, truth)

    @torch.no_grad()
    def act(self, obs_n: torch.Tensor, critic_n: torch.Tensor, generator: torch.Generator | None,
            truth: torch.Tensor | None = None):
        """Sample actions for normalized inputs: ``(actions, means, log_probs, values)`` (``truth``: :meth:`action_mean`'s)."""
        with self.autocast():
            mean = self.action_mean(obs_n, truth)
            value = self.policy.value(critic_n)
        mean, value = mean.float(), value.float()
        log_std = self.policy.log_std
        noise = torch.randn(mean.shape, generator=generator, device=mean.device, dtype=mean.dtype)
        actions = mean + noise * torch.exp(log_std)
        return actions, mean, L.gaussian_log_prob(actions, mean, log_std), value

    @torch.no_grad()
    def act_recurrent(self, obs_n: torch.Tensor, critic_n: torch.Tensor, hidden: torch.Tensor,
                      generator: torch.Generator | None):
        """:meth:`act` of a recurrent actor from its state ``hidden`` ``[B, H]`` (already zeroed where an
        episode starts): ``(actions, means, log_probs, values, next hidden)``."""
        with self.autocast():
            mean, hidden = self.policy.step_mean(obs_n, hidden)
            value = self.policy.value(critic_n)
        mean, value = mean.float(), value.float()
        log_std = self.policy.log_std
        noise = torch.randn(mean.shape, generator=generator, device=mean.device, dtype=mean.dtype)
        actions = mean + noise * torch.exp(log_std)
        return actions, mean, L.gaussian_log_prob(actions, mean, log_std), value, hidden.float()

    @torch.no_grad()
    def value(self, critic_n: torch.Tensor) -> torch.Tensor:
        with self.autocast():
            return self.policy.value(critic_n).float()

    # ------------------------------------------------------------------ DDP hooks

    def update_normalizers(self, obs_moments: torch.Tensor, critic_moments: torch.Tensor | None) -> None:
        """Merge one rollout's observation moments into the running statistics."""
        self.obs_normalizer.update_from_moments(obs_moments)
        if self.critic_normalizer is not None and critic_moments is not None:
            self.critic_normalizer.update_from_moments(critic_moments)

    def reduce_kl(self, kl: torch.Tensor) -> torch.Tensor:
        """The KL the adaptive learning rate reacts to (a data-parallel layer averages it over ranks)."""
        return kl

    def reduce_gradients(self) -> None:
        """After backward, before clipping (a data-parallel layer all-reduces the gradients here)."""

    def gradient_step(self, loss: torch.Tensor) -> torch.Tensor:
        """Backward, clip the global gradient norm, optimizer step, std ceiling; returns the pre-clip norm."""
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.reduce_gradients()
        norm = nn.utils.clip_grad_norm_(self.clip_groups[0], self.cfg.max_grad_norm, foreach=True)
        for group in self.clip_groups[1:]:  # the estimator's
            nn.utils.clip_grad_norm_(group, self.cfg.max_grad_norm, foreach=True)
        self.optimizer.step()
        self.policy.bound_std_()
        return norm

    # ------------------------------------------------------------------ update

    @property
    def learning_rate(self) -> float:
        return float(self._lr_t) if self.graphed is not None else self._lr

    def set_learning_rate(self, lr: float) -> None:
        if self.graphed is not None:
            self._lr_t.fill_(float(lr))  # in place: the captured graph reads this memory
            return
        self._lr = float(lr)
        for g in self.optimizer.param_groups:
            g["lr"] = self._lr

    def update(self, storage: RolloutStorage, generator: torch.Generator | None,
               progress: float = 0.0) -> dict[str, float]:
        """One PPO update over ``storage``; ``progress`` in [0, 1] drives the linear schedule."""
        cfg = self.cfg
        if cfg.schedule == "linear":
            self.set_learning_rate(linear_learning_rate(cfg.learning_rate, progress))
        storage.compute_returns(cfg.gamma, cfg.lam)
        adv = storage.advantages
        if cfg.normalize_advantages and cfg.advantage_scope == "rollout":
            mask = storage.mask if storage.has_masked_rows else None
            adv = L.normalized_advantages(adv.flatten(), None if mask is None else mask.flatten()).view_as(adv)
        estimated = self.estimator_error(storage)  # the rollout's estimates, before the update trains on them
        if self.graphed is not None:
            sums, n = self.graphed.run(storage, generator, adv)
        else:
            sums = torch.zeros(len(L.MINIBATCH_STATS), device=self.device)
            n = 0
            for mb in storage.minibatches(cfg.num_minibatches, cfg.num_epochs, generator, advantages=adv):
                sums += self.minibatch_step(mb, storage.old_log_std)
                n += 1
        stats = dict(zip(L.MINIBATCH_STATS, (sums / max(n, 1)).tolist()))
        if self.symmetry is None:
            del stats["loss/symmetry"]
        if storage.targets is None:
            del stats["loss/estimator"]
        stats.update(estimated)
        stats["learning_rate"] = self.learning_rate
        stats["policy/std"] = float(torch.exp(self.policy.log_std.detach()).mean())
        return stats

    @torch.no_grad()
    def estimator_error(self, storage: RolloutStorage) -> dict[str, float]:
        """``estimator/rmse_<target>_<axis>`` of the rollout's estimates against its true values (masked rows
        left out); empty without a state estimator (trainers.ppo.estimator)."""
        if storage.targets is None:
            return {}
        from .estimator import rmse_stats

        T, N, K = storage.targets.shape
        with self.autocast():
            estimate = self.policy.estimate(storage.obs.reshape(T * N, -1))
        mask = storage.mask.reshape(-1) if storage.has_masked_rows else None
        return rmse_stats(estimate, storage.targets.reshape(T * N, K), mask, self.policy.estimator_labels)

    def losses(self, mb: Minibatch, old_log_std: torch.Tensor):
        """``(loss, kl, stats)`` of one minibatch: ``stats`` holds :data:`~trainers.ppo.losses.LOSS_STATS` in order."""
        cfg = self.cfg
        with self.autocast():
            if mb.hidden is None:
                mean = self.action_mean(mb.obs, mb.targets)
            else:  # truncated BPTT over the minibatch's env sequences (trainers.ppo.recurrent)
                mean = self.policy.sequence_mean(mb.obs, mb.hidden, mb.starts)
            values = self.policy.value(mb.critic_obs)
        mean, values = mean.float(), values.float()
        log_std = self.policy.log_std
        log_prob = L.gaussian_log_prob(mb.actions, mean, log_std)
        advantages = mb.advantages
        if cfg.normalize_advantages and cfg.advantage_scope == "minibatch":
            advantages = L.normalized_advantages(advantages, mb.mask)
        policy_loss = L.clipped_surrogate_loss(log_prob, mb.log_probs, advantages, cfg.clip, mb.mask)
        value_loss = L.clipped_value_loss(values, mb.values, mb.returns,
                                          cfg.clip if cfg.clip_value_loss else None, mb.mask)
        entropy = L.gaussian_entropy(log_std)
        if self.actor_held:  # a warm-up: no term reaches the actor or its std
            loss = cfg.value_coef * value_loss
        else:
            loss = policy_loss + cfg.value_coef * value_loss - cfg.entropy_coef * entropy
        estimator = torch.zeros((), device=loss.device)
        if mb.targets is not None:  # the state estimator's supervised loss (its gradient reaches only it)
            with self.autocast():
                estimate = self.policy.estimate(mb.obs)
            estimator = L.estimator_loss(estimate.float(), mb.targets, mb.mask)
            loss = loss + self.policy.estimator_coef * estimator
        symmetry = torch.zeros((), device=loss.device)
        if self.symmetry is not None and not self.actor_held:
            with self.autocast():  # the mirrored forward pass; its output is cast to float32 inside
                symmetry = self.symmetry(self.policy, self.obs_normalizer, mb.obs, mean, mb.mask)
            loss = loss + self.symmetry.coef * symmetry
        with torch.no_grad():
            kl = L.masked_mean(L.gaussian_kl(mb.action_means, old_log_std, mean, log_std), mb.mask)
            clip_frac = L.masked_mean(((log_prob - mb.log_probs).exp() - 1.0).abs().gt(cfg.clip).float(), mb.mask)
            named = {"loss/policy": policy_loss, "loss/value": value_loss, "loss/entropy": entropy, "loss/kl": kl,
                     "loss/clip_fraction": clip_frac, "loss/symmetry": symmetry, "loss/estimator": estimator}
            stats = torch.stack([named[name].detach() for name in L.LOSS_STATS])
        return loss, kl, stats

    def minibatch_step(self, mb: Minibatch, old_log_std: torch.Tensor) -> torch.Tensor:
        """Losses on one minibatch and one gradient step (eager); returns the detached
        :data:`~trainers.ppo.losses.MINIBATCH_STATS`."""
        loss, kl, stats = self.losses(mb, old_log_std)
        if self.cfg.schedule == "adaptive" and not self.actor_held:  # as rsl_rl: the lr of this step reacts to its KL
            self.set_learning_rate(L.adaptive_learning_rate(self.learning_rate, self.reduce_kl(kl).item(),
                                                               self.cfg.desired_kl))
        grad_norm = self.gradient_step(loss)
        return torch.cat([stats, grad_norm.detach().float().reshape(1)])

    # ------------------------------------------------------------------ health

    def nonfinite(self, stats: dict[str, float]) -> list[str]:
        """What of the learner is NaN or inf after an update: the ``loss/*`` entries of ``stats``
        (:meth:`update`'s), then ``"policy parameters"``, ``"observation normalizer"``,
        ``"critic normalizer"``; empty when everything is finite. One device sync."""
        bad = nonfinite_stats(stats)
        groups = {"policy parameters": list(self.policy.parameters()),
                  "observation normalizer": list(self.obs_normalizer.buffers())}
        if self.critic_normalizer is not None:
            groups["critic normalizer"] = list(self.critic_normalizer.buffers())
        flags = torch.stack([torch.stack([torch.isfinite(t).all() for t in ts]).all()
                             for ts in groups.values()]).tolist()
        return bad + [name for name, ok in zip(groups, flags) if not ok]

    # ------------------------------------------------------------------ state

    def state_dict(self) -> dict:
        return {"policy": self.policy.state_dict(),
                "obs_normalizer": self.obs_normalizer.state_dict(),
                "critic_normalizer": None if self.critic_normalizer is None else self.critic_normalizer.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "learning_rate": self.learning_rate}

    def load_weights(self, state: dict) -> None:
        """The networks, normalizers and learning rate of a :meth:`state_dict` (the optimizer stays fresh)."""
        self.policy.load_state_dict(state["policy"])
        self.obs_normalizer.load_state_dict(state["obs_normalizer"])
        if self.critic_normalizer is not None:
            self.critic_normalizer.load_state_dict(state["critic_normalizer"])
        self.set_learning_rate(state["learning_rate"])

    def load_state_dict(self, state: dict) -> None:
        self.load_weights(state)
        self.optimizer.load_state_dict(state["optimizer"])
        for g in self.optimizer.param_groups:  # the saved groups may come from the other mode
            g["capturable"] = self.graphed is not None
            g["fused"] = True
            g["lr"] = self._lr_t if self.graphed is not None else float(state["learning_rate"])
        if self.graphed is not None:
            self.graphed.invalidate()
        self.set_learning_rate(state["learning_rate"])


def nonfinite_stats(stats: dict[str, float]) -> list[str]:
    """The ``loss/*`` keys of an update's statistics whose value is NaN or inf (sorted)."""
    return sorted(k for k, v in stats.items() if k.startswith("loss/") and not math.isfinite(v))
