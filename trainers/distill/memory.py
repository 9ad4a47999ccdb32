"""A recurrent student's hidden state through DAgger's rollouts and fits (``policy.recurrent: gru``).

Acting: each env row keeps its GRU state ``h`` ``[N, H]`` across steps and rollouts, zeroed before the
first step of each episode: the step after ``terminated`` or ``truncated`` (SAME_STEP autoreset, UniLab's),
and under NEXT_STEP autoreset the step after the reset step as well, as the bundled PPO's collector does.

Fitting: truncated backpropagation through time over the rollout, as the bundled PPO trains a recurrent
actor (:meth:`~trainers.ppo.recurrent.RecurrentActorCritic.sequence_mean`): a minibatch is whole env
sequences ``[T, B]``, started from the state each env had at the rollout's first step (``hidden0``) and
zeroed at the same steps (``starts`` ``[T, N]``), so the fit recomputes the means the student acted on.
"""

from __future__ import annotations

import numpy as np
import torch


class StudentMemory:
    """The states of ``num_envs`` envs over rollouts of ``num_steps`` steps of the recurrent ``policy``."""

    def __init__(self, policy, num_envs: int, num_steps: int, device: torch.device | str, same_step: bool):
        self.policy, self.same_step = policy, same_step
        size = policy.hidden_size
        self.hidden = torch.zeros(num_envs, size, device=device)
        self.hidden0 = torch.zeros(num_envs, size, device=device)
        self.starts = torch.zeros(num_steps, num_envs, device=device)
        self.pending = torch.ones(num_envs, dtype=torch.bool, device=device)  # zeroed before the next step
        self.reset_step = np.zeros(num_envs, dtype=bool)  # NEXT_STEP: rows whose next step is a reset step

    @torch.no_grad()
    def step(self, t: int, obs_n: torch.Tensor) -> torch.Tensor:
        """The means ``[N, A]`` of rollout step ``t`` on the normalized observations ``obs_n`` ``[N, O]``."""
        if t == 0:
            self.hidden0.copy_(self.hidden)
        self.starts[t] = self.pending.float()
        h = torch.where(self.pending.unsqueeze(1), 0.0, self.hidden)
        mean, h = self.policy.step_mean(obs_n, h)
        self.hidden = h.float()
        return mean

    def episodes_ended(self, terminated: np.ndarray, truncated: np.ndarray) -> None:
        """After the env step: the rows whose state is zeroed before their next step."""
        ended = np.logical_or(terminated, truncated)
        if not self.same_step:
            ended, self.reset_step = ended | self.reset_step, ended
        self.pending = torch.as_tensor(ended, dtype=torch.bool, device=self.hidden.device)

    def means(self, obs_n: torch.Tensor, envs: torch.Tensor | slice) -> torch.Tensor:
        """The means ``[T, B, A]`` of the rollout's env sequences ``envs`` (``B`` indices, or a slice such as
        ``slice(None)`` for all), recomputed (with gradients) from the normalized observations ``obs_n``
        ``[T, N, O]``."""
        seq = obs_n[:, envs]
        T, B = seq.shape[:2]
        return self.policy.sequence_mean(seq.reshape(T * B, -1), self.hidden0[envs],
                                         self.starts[:, envs]).reshape(T, B, -1)
