"""Generalized Advantage Estimation as a pure function over ``[T, N]`` tensors."""

from __future__ import annotations

import torch


def compute_gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    terminated: torch.Tensor,
    truncated: torch.Tensor,
    final_values: torch.Tensor,
    last_values: torch.Tensor,
    gamma: float,
    lam: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Advantages and returns for one rollout.

    Shapes: ``rewards, values, terminated, truncated, final_values``: ``[T, N]``;
    ``last_values``: ``[N]`` (value of the observation after step ``T-1``).

    Row ``t`` is the transition ``(s_t, a_t) -> r_t, s_{t+1}``.  Termination and
    truncation are kept apart:

    - terminated (failure or goal): the episode really ended, no bootstrap:
      ``delta_t = r_t - V(s_t)``;
    - truncated (time limit, not terminated): the episode was cut, bootstrap from the
      value of the true final observation: ``delta_t = r_t + gamma * final_values[t] - V(s_t)``;
    - otherwise ``delta_t = r_t + gamma * V(s_{t+1}) - V(s_t)`` with ``V(s_T) = last_values``.

    Either kind of end stops the advantage trace:
    ``A_t = delta_t + gamma * lam * (1 - done_t) * A_{t+1}``; returns are ``A_t + V(s_t)``.
    ``final_values`` is read only on truncated rows.
    """
    T = rewards.shape[0]
    term = terminated.to(values.dtype)
    done = torch.logical_or(terminated, truncated).to(values.dtype)
    trunc_only = truncated.to(values.dtype) * (1.0 - term)
    advantages = torch.empty_like(values)
    next_adv = torch.zeros_like(last_values)
    next_value = last_values
    for t in range(T - 1, -1, -1):
        # value of what follows step t: V(s_{t+1}) if alive, V(final obs) if truncated, 0 if terminated
        bootstrap = (1.0 - done[t]) * next_value + trunc_only[t] * final_values[t]
        delta = rewards[t] + gamma * bootstrap - values[t]
        next_adv = delta + gamma * lam * (1.0 - done[t]) * next_adv
        advantages[t] = next_adv
        next_value = values[t]
    return advantages, advantages + values
