"""Recurrent actors for the bundled PPO (``policy.recurrent: gru``).

The actor is a GRU of ``policy.recurrent_hidden`` units on the (normalized) observation, followed by
the ``policy.actor_hidden`` MLP head that gives the Gaussian's mean; the critic stays the feed-forward
MLP of :class:`~trainers.ppo.models.ActorCritic` (on the privileged observation where the task has
one), so bootstrapping a truncated episode from its final observation needs no hidden state.

The hidden state ``h`` ``[N, H]`` (float32, on the learner's device) is one row per env:

- acting (:meth:`RecurrentActor.forward`): ``mean, h' = actor(obs, h)``; the collector zeroes a row's
  ``h`` before the first step of each episode (after ``terminated`` or ``truncated``);
- training (:meth:`RecurrentActor.sequence`): truncated backpropagation through time over the rollout:
  a minibatch is whole env sequences ``[T, B, O]``, started from the state each env had at the
  rollout's first step and zeroed again at the steps flagged in ``starts`` ``[T, B]`` (the same
  resets the collector made), so the update recomputes the means the rollout acted on.

The GRU holds PyTorch's GRU weights in two linear maps and steps with ATen's fused ``gru_cell``
(training and acting); ONNX export writes the same equations in plain ops (:meth:`GRUMemory.explicit`),
equal to ~1e-6. The state leaves each step as float32 (under bf16 autocast too), so the recurrence does
not accumulate bf16 rounding.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ..common.mlp import mlp
from ..common.normalizers import EmpiricalNormalizer
from .config import ConfigError, PolicyConfig
from .models import ActorCritic


class GRUMemory(nn.Module):
    """A GRU layer (PyTorch's equations and initialization): ``h' = (1 - z) * n + z * h`` with
    ``r, z = sigmoid(W_i x + W_h h)`` and ``n = tanh(W_in x + r * (W_hn h))``."""

    def __init__(self, inp: int, hidden: int):
        super().__init__()
        self.hidden = hidden
        self.input_map = nn.Linear(inp, 3 * hidden)
        self.hidden_map = nn.Linear(hidden, 3 * hidden)
        bound = 1.0 / math.sqrt(hidden)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """One step: the next state ``[B, H]`` (float32) from ``x`` ``[B, O]`` and ``h`` ``[B, H]``."""
        if torch.onnx.is_in_onnx_export():
            return self.explicit(x, h)
        # ATen's GRU cell: one node (a fused kernel on CPU and CUDA), 3-5x faster to train than the ops spelled out
        return torch.gru_cell(x, h, self.input_map.weight, self.hidden_map.weight, self.input_map.bias,
                              self.hidden_map.bias).float()

    def explicit(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """:meth:`forward` spelled out in plain ops (what ONNX export writes)."""
        gi, gh = self.input_map(x).float(), self.hidden_map(h).float()
        i_r, i_z, i_n = gi.chunk(3, -1)
        h_r, h_z, h_n = gh.chunk(3, -1)
        r = torch.sigmoid(i_r + h_r)
        z = torch.sigmoid(i_z + h_z)
        n = torch.tanh(i_n + r * h_n)
        return n + z * (h - n)

    def sequence(self, x: torch.Tensor, h0: torch.Tensor, starts: torch.Tensor) -> torch.Tensor:
        """States ``[T, B, H]`` of the sequence ``x`` ``[T, B, O]`` from ``h0`` ``[B, H]``, zeroed before
        each step ``t`` where ``starts[t]`` ``[T, B]`` is 1."""
        keep = (1.0 - starts.float()).unsqueeze(-1)
        resets = starts.any(1).tolist()  # one read per sequence: only the steps where an episode starts pay the mask
        h, out = h0, []
        for t in range(x.shape[0]):
            h = self(x[t], h * keep[t] if resets[t] else h)
            out.append(h)
        return torch.stack(out)


class RecurrentActor(nn.Module):
    """``mean, h' = actor(obs, h)``: the GRU then the MLP head (``[B, O]``, ``[B, H]`` -> ``[B, A]``, ``[B, H]``)."""

    def __init__(self, obs_dim: int, act_dim: int, cfg: PolicyConfig):
        super().__init__()
        self.hidden_size = cfg.recurrent_hidden
        self.memory = GRUMemory(obs_dim, cfg.recurrent_hidden)
        self.head = mlp(cfg.recurrent_hidden, cfg.actor_hidden, act_dim, cfg.activation, out_gain=0.01,
                        ortho_init=cfg.ortho_init)

    def forward(self, obs: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.memory(obs, h)
        return self.head(h), h

    def sequence(self, obs: torch.Tensor, h0: torch.Tensor, starts: torch.Tensor) -> torch.Tensor:
        """Means ``[T, B, A]`` of the sequence ``obs`` ``[T, B, O]`` (see :meth:`GRUMemory.sequence`)."""
        return self.head(self.memory.sequence(obs, h0, starts))


class RecurrentActorCritic(ActorCritic):
    """:class:`~trainers.ppo.models.ActorCritic` whose actor is a :class:`RecurrentActor` (the critic, the
    log-std and its ceiling as there). ``hidden_size``: the state's width (0 on the feed-forward class)."""

    def __init__(self, obs_dim: int, critic_obs_dim: int, act_dim: int, cfg: PolicyConfig):
        if cfg.image_groups and cfg.image_encoder is not None:
            raise ConfigError("policy.recurrent with image groups in the observation is not supported: the GRU "
                              "reads plain columns (set policy.recurrent: null, or policy.image_encoder: null)")
        super().__init__(obs_dim, critic_obs_dim, act_dim, cfg)
        # the MLP actor ActorCritic drew is replaced: the critic and the log-std keep their initial draws
        self.actor = RecurrentActor(obs_dim, act_dim, cfg)
        self.hidden_size = cfg.recurrent_hidden

    def initial_state(self, n: int, device: torch.device | str) -> torch.Tensor:
        """A zero state for ``n`` envs."""
        return torch.zeros(n, self.hidden_size, device=device)

    def action_mean(self, obs: torch.Tensor) -> torch.Tensor:
        raise TypeError("a recurrent actor needs its hidden state: call step_mean(obs, h) or sequence_mean(...)")

    def step_mean(self, obs: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(mean [B, A], next state [B, H])`` of one step."""
        return self.actor(obs, h)

    def sequence_mean(self, obs: torch.Tensor, h0: torch.Tensor, starts: torch.Tensor) -> torch.Tensor:
        """Means ``[T * B, A]`` of the flat ``[T * B, O]`` observations of ``B`` env sequences (time-major), from
        their states ``h0`` ``[B, H]`` with resets ``starts`` ``[T, B]``."""
        T, B = starts.shape
        return self.actor.sequence(obs.reshape(T, B, -1), h0, starts).reshape(T * B, -1)


class RecurrentInferencePolicy(nn.Module):
    """The deployed recurrent policy: ``action, h_out = policy(raw obs, h_in)`` (normalizer folded in).

    ``h_in`` ``[B, H]`` is zero at an episode's first step; each step's ``h_out`` is the next step's ``h_in``.
    """

    def __init__(self, normalizer: EmpiricalNormalizer, actor: RecurrentActor):
        super().__init__()
        self.enabled = normalizer.enabled
        self.clip = normalizer.clip
        self.register_buffer("mean", normalizer.mean.detach().float().clone())
        self.register_buffer("inv_std", torch.rsqrt(normalizer.var.detach() + normalizer.eps).float().clone())
        self.actor = actor
        self.hidden_size = actor.hidden_size

    def initial_state(self, n: int, device: torch.device | str = "cpu") -> torch.Tensor:
        return torch.zeros(n, self.hidden_size, device=device)

    def forward(self, obs: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.enabled:
            obs = torch.clamp((obs - self.mean) * self.inv_std, -self.clip, self.clip)
        return self.actor(obs, h)


class StatefulActions:
    """``obs -> actions`` (NumPy) of a :class:`RecurrentInferencePolicy` over ``n`` envs, keeping each env's state;
    :meth:`reset_rows` zeroes the rows whose next observation starts an episode (``unilab eval``)."""

    def __init__(self, policy: RecurrentInferencePolicy, n: int, device: str = "cpu"):
        self.policy, self.device = policy, device
        self.h = policy.initial_state(n, device)

    def reset_rows(self, rows) -> None:
        mask = torch.as_tensor(rows, dtype=torch.bool, device=self.device)
        self.h[mask] = 0.0

    def __call__(self, obs):
        with torch.no_grad():
            action, self.h = self.policy(torch.as_tensor(obs, dtype=torch.float32, device=self.device), self.h)
        return action.cpu().numpy()
