"""Rollout storage, preallocated once on the learner device.

All tensors are ``[T, N, ...]`` (T = rollout length, N = envs), row ``t`` holding the
transition ``(s_t, a_t) -> r_t`` and its flags:

=================  ===============  ==============================================
obs                [T, N, O] f32    normalized policy observations
critic_obs         [T, N, P] f32    normalized privileged observations (or None: the
                                    critic reads ``obs``)
actions            [T, N, A] f32    unclipped Gaussian samples
action_means       [T, N, A] f32    policy means (for the KL of the adaptive lr)
log_probs          [T, N]    f32    log pi_old(a_t | s_t)
values             [T, N]    f32    V_old(s_t)
rewards            [T, N]    f32
terminated         [T, N]    bool   true episode end: no bootstrap
truncated          [T, N]    bool   time limit: bootstrap from ``final_values``
final_values       [T, N]    f32    V(true final observation), read on truncated rows
mask               [T, N]    f32    1 for real transitions, 0 for NEXT_STEP reset steps
last_values        [N]       f32    V(s_T), bootstrap of the unfinished tail
advantages/returns [T, N]    f32    filled by :meth:`compute_returns`
hidden0            [N, H]    f32    recurrent actor only: each env's state at step 0 (before ``starts[0]``)
starts             [T, N]    f32    recurrent actor only: 1 where the state was zeroed before step t
targets            [T, N, K] f32    state estimator only: the true (raw) values it regresses, cut from
                                    the privileged observation (:mod:`trainers.ppo.estimator`)
=================  ===============  ==============================================

A recurrent actor (``hidden_size > 0``) is trained on whole env sequences: :meth:`minibatches`
then cuts the envs (not the rows) into minibatches, each ``[T, B]`` flattened time-major, with
the envs' ``hidden0`` and ``starts`` (:mod:`trainers.ppo.recurrent`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .gae import compute_gae


@dataclass
class Minibatch:
    obs: torch.Tensor
    critic_obs: torch.Tensor
    actions: torch.Tensor
    action_means: torch.Tensor
    log_probs: torch.Tensor
    values: torch.Tensor
    returns: torch.Tensor
    advantages: torch.Tensor
    mask: torch.Tensor | None
    hidden: torch.Tensor | None = None  # recurrent: the B sequences' states at step 0 [B, H]
    starts: torch.Tensor | None = None  # recurrent: resets [T, B] (rows above are [T * B], time-major)
    targets: torch.Tensor | None = None  # state estimator: the true values it regresses [B, K]


class RolloutStorage:
    def __init__(self, num_steps: int, num_envs: int, obs_dim: int, critic_obs_dim: int | None,
                 act_dim: int, device: torch.device | str, hidden_size: int = 0, target_size: int = 0):
        T, N = num_steps, num_envs
        self.num_steps, self.num_envs, self.device = T, N, torch.device(device)
        f32 = dict(dtype=torch.float32, device=self.device)
        self.obs = torch.zeros(T, N, obs_dim, **f32)
        self.critic_obs = torch.zeros(T, N, critic_obs_dim, **f32) if critic_obs_dim else None
        self.actions = torch.zeros(T, N, act_dim, **f32)
        self.action_means = torch.zeros(T, N, act_dim, **f32)
        self.log_probs = torch.zeros(T, N, **f32)
        self.values = torch.zeros(T, N, **f32)
        self.rewards = torch.zeros(T, N, **f32)
        self.terminated = torch.zeros(T, N, dtype=torch.bool, device=self.device)
        self.truncated = torch.zeros(T, N, dtype=torch.bool, device=self.device)
        self.final_values = torch.zeros(T, N, **f32)
        self.mask = torch.ones(T, N, **f32)
        self.last_values = torch.zeros(N, **f32)
        self.advantages = torch.zeros(T, N, **f32)
        self.returns = torch.zeros(T, N, **f32)
        self.old_log_std = torch.zeros(act_dim, **f32)
        self.has_masked_rows = False
        self.hidden_size = hidden_size
        self.hidden0 = torch.zeros(N, hidden_size, **f32) if hidden_size else None
        self.starts = torch.zeros(T, N, **f32) if hidden_size else None
        self.targets = torch.zeros(T, N, target_size, **f32) if target_size else None

    @property
    def batch_size(self) -> int:
        return self.num_steps * self.num_envs

    def compute_returns(self, gamma: float, lam: float) -> None:
        adv, ret = compute_gae(self.rewards, self.values, self.terminated, self.truncated,
                               self.final_values, self.last_values, gamma, lam)
        self.advantages.copy_(adv)
        self.returns.copy_(ret)

    def table(self, advantages: torch.Tensor | None = None, with_mask: bool | None = None):
        """All training columns as one ``[T*N, F]`` table and its column widths.

        A minibatch is then a single row gather (see :meth:`split`). ``with_mask``
        defaults to ``has_masked_rows``.
        """
        B = self.batch_size
        flat = lambda x: x.reshape(B, -1)  # noqa: E731
        adv = self.advantages if advantages is None else advantages
        parts = [self.obs] + ([self.critic_obs] if self.critic_obs is not None else []) + [
            self.actions, self.action_means, self.log_probs, self.values, self.returns, adv]
        if self.targets is not None:
            parts.append(self.targets)
        if self.has_masked_rows if with_mask is None else with_mask:
            parts.append(self.mask)
        return torch.cat([flat(x) for x in parts], dim=1), tuple(flat(x).shape[1] for x in parts)

    def split(self, rows: torch.Tensor, widths: tuple[int, ...]) -> Minibatch:
        """Column views of gathered table rows ``[B, F]`` as a :class:`Minibatch`."""
        cols = torch.split(rows, widths, dim=1)
        obs = cols[0]
        k = 1
        if self.critic_obs is not None:
            cobs, k = cols[1], 2
        else:
            cobs = obs
        acts, means, logp, vals, rets, adv = cols[k:k + 6]
        k += 6
        targets = None
        if self.targets is not None:
            targets, k = cols[k], k + 1
        mask = cols[k].squeeze(1) if len(cols) > k else None
        return Minibatch(obs, cobs, acts, means, logp.squeeze(1), vals.squeeze(1), rets.squeeze(1),
                         adv.squeeze(1), mask, targets=targets)

    def minibatch_indices(self, num_minibatches: int, num_epochs: int, generator: torch.Generator | None):
        """Yield row indices: per epoch one permutation of the ``T * N`` rows cut into equal
        minibatches (a remainder of fewer than ``num_minibatches`` rows sits out that epoch)."""
        B = self.batch_size
        size = B // num_minibatches
        for _ in range(num_epochs):
            perm = torch.randperm(B, generator=generator, device=self.device)
            for i in range(num_minibatches):
                yield perm[i * size:(i + 1) * size]

    def minibatches(self, num_minibatches: int, num_epochs: int, generator: torch.Generator | None,
                    advantages: torch.Tensor | None = None):
        """Yield ``num_epochs * num_minibatches`` shuffled :class:`Minibatch` es.

        ``advantages`` overrides the stored ones (e.g. normalized). A recurrent actor's storage yields
        whole env sequences (:meth:`sequence_minibatches`).
        """
        if self.hidden_size:
            yield from self.sequence_minibatches(num_minibatches, num_epochs, generator, advantages)
            return
        table, widths = self.table(advantages)
        for idx in self.minibatch_indices(num_minibatches, num_epochs, generator):
            yield self.split(table[idx], widths)

    def sequence_minibatches(self, num_minibatches: int, num_epochs: int, generator: torch.Generator | None,
                             advantages: torch.Tensor | None = None):
        """Yield ``num_epochs * num_minibatches`` :class:`Minibatch` es of whole env sequences: per epoch one
        permutation of the ``N`` envs cut into equal groups of ``B`` (a remainder of fewer than
        ``num_minibatches`` envs sits out that epoch); each minibatch's rows are its envs' ``T`` steps,
        time-major (``[T * B]``), with their ``hidden0`` and ``starts``."""
        T, N = self.num_steps, self.num_envs
        table, widths = self.table(advantages)
        table = table.view(T, N, -1)
        size = N // num_minibatches
        for _ in range(num_epochs):
            perm = torch.randperm(N, generator=generator, device=self.device)
            for i in range(num_minibatches):
                envs = perm[i * size:(i + 1) * size]
                mb = self.split(table[:, envs].reshape(T * size, -1), widths)
                mb.hidden, mb.starts = self.hidden0[envs], self.starts[:, envs]
                yield mb
