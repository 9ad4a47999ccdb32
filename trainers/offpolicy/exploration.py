"""Temporally correlated exploration noise for the off-policy learner (``algo.exploration_correlation``).

SAC samples ``tanh(mean + std * eps)`` and TD3 adds ``exploration_noise * eps``, with ``eps`` a fresh
standard normal draw every step (white noise). At 25-50 Hz white noise averages out before the body
moves: a move that needs several steps the same way (lifting a grasped cube out of a press, which
the arm's bounded target lead holds down until the command has been up for ~3 steps) is almost never
tried. With correlation ``rho`` each env's ``eps`` is a first-order autoregressive process,

    eps_t = rho * eps_{t-1} + sqrt(1 - rho^2) * n_t,   n_t ~ N(0, I),

whose marginal is still N(0, I), so SAC's log-probabilities and the entropy target mean what they
meant; only the noise's memory changes (lag-k correlation ``rho^k``; ``rho`` 0.9 at 25 Hz remembers
~0.4 s). A finished episode's env starts its next episode from a fresh draw. ``rho = 0`` is white
noise, drawn exactly as before (the runner then keeps no state).
"""

from __future__ import annotations

import math

import torch


def correlated_step(previous: torch.Tensor, fresh: torch.Tensor, rho: float) -> torch.Tensor:
    """One AR(1) step of unit-variance noise: ``rho * previous + sqrt(1 - rho^2) * fresh`` (pure)."""
    return rho * previous + math.sqrt(1.0 - rho * rho) * fresh


class CorrelatedNoise:
    """Each env's exploration draw, carried across steps (see the module docstring)."""

    def __init__(self, num_envs: int, action_dim: int, rho: float, device: torch.device) -> None:
        if not 0.0 < rho < 1.0:
            raise ValueError(f"the exploration noise's correlation must be in (0, 1), got {rho}")
        self.rho, self.shape, self.device = rho, (num_envs, action_dim), device
        self.value: torch.Tensor | None = None  # drawn at the first step (from torch's RNG, as the white noise)

    def next(self) -> torch.Tensor:
        """The draw for this step (call once per batch env step)."""
        fresh = torch.randn(self.shape, device=self.device)
        self.value = fresh if self.value is None else correlated_step(self.value, fresh, self.rho)
        return self.value

    def restart(self, rows) -> None:
        """Envs whose episode ended forget it: their state is redrawn from the stationary N(0, I), so their next
        draw is N(0, I) and independent of the episode before."""
        if self.value is not None and len(rows):
            index = torch.as_tensor(rows, device=self.device, dtype=torch.long)
            self.value[index] = torch.randn((len(rows), self.shape[1]), device=self.device)

    def state_dict(self) -> dict:
        return {"value": None if self.value is None else self.value.cpu()}

    def load_state_dict(self, state: dict) -> None:
        value = state.get("value")
        self.value = None if value is None else value.to(self.device)
