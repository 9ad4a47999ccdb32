"""The replay buffer of the off-policy learner: preallocated tensors on the learner's device.

Transitions are stored time-major, one row per env step of the whole batch: ``obs[t, e]``,
``action[t, e]``, ``reward[t, e]``, ``next_obs[t, e]`` (the observation the step led to: on
an episode's last step the *final* observation, not the next episode's first), and
``terminated`` / ``truncated`` flags. :meth:`DeviceReplay.add` copies one step of the batched
env's arrays in (one host-to-device transfer per array, no per-env Python);
:meth:`DeviceReplay.sample` draws ``(t, e)`` pairs on the device and builds ``n``-step returns
there:

    R = sum_{k < m} gamma^k r[t + k]        m: n, or up to and including the step an episode ended
    bootstrap = next_obs[t + m - 1],  discount = gamma^m * (1 - terminated[t + m - 1])

so a failure (``terminated``) ends the return with no bootstrap, a time limit (``truncated``)
bootstraps from the final observation, and a window running past the newest stored step is
cut there (a shorter return, bootstrapped from its last step's ``next_obs``). Memory:
:func:`replay_bytes` (stated when training starts); the capacity in steps is
``capacity // num_envs`` rows of ``num_envs``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


def replay_bytes(capacity: int, obs_dim: int, action_dim: int, critic_dim: int = 0) -> int:
    """Bytes the buffer preallocates for ``capacity`` transitions (float32 arrays, 1-byte flags)."""
    per = 4 * (2 * obs_dim + 2 * critic_dim + action_dim + 1) + 2
    return capacity * per


@dataclass
class Batch:
    """One sampled minibatch (all on the buffer's device)."""

    obs: torch.Tensor
    action: torch.Tensor
    reward: torch.Tensor  # the n-step return
    next_obs: torch.Tensor  # the bootstrap observation
    discount: torch.Tensor  # gamma^m, 0 after a failure
    critic_obs: torch.Tensor | None = None  # privileged extras for an asymmetric critic
    next_critic_obs: torch.Tensor | None = None


class DeviceReplay:
    """A ring of ``capacity // num_envs`` batch steps on ``device`` (see the module docstring)."""

    def __init__(self, capacity: int, num_envs: int, obs_dim: int, action_dim: int, device: torch.device,
                 critic_dim: int = 0, n_step: int = 1, gamma: float = 0.99) -> None:
        if capacity < num_envs:
            raise ValueError(f"the replay buffer holds {capacity} transitions, fewer than one step of {num_envs} envs")
        if n_step < 1:
            raise ValueError(f"n_step must be >= 1, got {n_step}")
        self.rows, self.num_envs, self.device = capacity // num_envs, num_envs, torch.device(device)
        self.n_step, self.gamma = int(n_step), float(gamma)
        shape = (self.rows, num_envs)
        f32 = dict(dtype=torch.float32, device=self.device)
        self.obs = torch.zeros(*shape, obs_dim, **f32)
        self.next_obs = torch.zeros(*shape, obs_dim, **f32)
        self.action = torch.zeros(*shape, action_dim, **f32)
        self.reward = torch.zeros(*shape, **f32)
        self.terminated = torch.zeros(*shape, dtype=torch.bool, device=self.device)
        self.truncated = torch.zeros(*shape, dtype=torch.bool, device=self.device)
        self.critic_obs = torch.zeros(*shape, critic_dim, **f32) if critic_dim else None
        self.next_critic_obs = torch.zeros(*shape, critic_dim, **f32) if critic_dim else None
        self.cursor = 0  # the row the next add writes
        self.filled = 0  # rows written so far (<= rows)
        self._powers = self.gamma ** torch.arange(self.n_step, dtype=torch.float32, device=self.device)

    def __len__(self) -> int:
        """Transitions stored."""
        return self.filled * self.num_envs

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self._arrays().values())

    def _arrays(self) -> dict[str, torch.Tensor]:
        arrays = {"obs": self.obs, "next_obs": self.next_obs, "action": self.action, "reward": self.reward,
                  "terminated": self.terminated, "truncated": self.truncated}
        if self.critic_obs is not None:
            arrays.update(critic_obs=self.critic_obs, next_critic_obs=self.next_critic_obs)
        return arrays

    def add(self, obs, action, reward, next_obs, terminated, truncated, critic_obs=None, next_critic_obs=None) -> None:
        """Store one step of the batch: ``(num_envs, ...)`` arrays (NumPy or tensors); ``next_obs`` holds the
        final observation on rows whose episode ended."""
        row = self.cursor
        for name, value in (("obs", obs), ("action", action), ("reward", reward), ("next_obs", next_obs),
                            ("terminated", terminated), ("truncated", truncated), ("critic_obs", critic_obs),
                            ("next_critic_obs", next_critic_obs)):
            target = getattr(self, name)
            if target is None or value is None:
                continue
            target[row].copy_(torch.as_tensor(np.asarray(value) if not torch.is_tensor(value) else value), non_blocking=True)
        self.cursor = (row + 1) % self.rows
        self.filled = min(self.filled + 1, self.rows)

    def sample(self, batch_size: int, generator: torch.Generator | None = None) -> Batch:
        """``batch_size`` n-step transitions drawn uniformly (see the module docstring)."""
        if self.filled == 0:
            raise RuntimeError("the replay buffer is empty: add steps before sampling")
        newest = (self.cursor - 1) % self.rows
        age = torch.randint(0, self.filled, (batch_size,), device=self.device, generator=generator)  # 0: newest row
        t = (newest - age) % self.rows
        e = torch.randint(0, self.num_envs, (batch_size,), device=self.device, generator=generator)
        k = torch.arange(self.n_step, device=self.device)
        rows = (t[:, None] + k[None, :]) % self.rows  # (B, n)
        in_range = k[None, :] <= age[:, None]  # not past the newest row
        done = (self.terminated[rows, e[:, None]] | self.truncated[rows, e[:, None]]) & in_range
        # step k counts while no earlier step of the window ended the episode
        ended_before = torch.cumsum(done.to(torch.int32), dim=1) - done.to(torch.int32)
        counts = in_range & (ended_before == 0)
        reward = (self.reward[rows, e[:, None]] * self._powers[None, :] * counts).sum(dim=1)
        last = counts.sum(dim=1) - 1  # index of the window's last step
        last_row = rows.gather(1, last[:, None]).squeeze(1)
        discount = self.gamma ** (last + 1).to(torch.float32) * (~self.terminated[last_row, e]).to(torch.float32)
        batch = Batch(self.obs[t, e], self.action[t, e], reward, self.next_obs[last_row, e], discount)
        if self.critic_obs is not None:
            batch.critic_obs, batch.next_critic_obs = self.critic_obs[t, e], self.next_critic_obs[last_row, e]
        return batch

    def state_dict(self) -> dict:
        """Everything to restore the buffer exactly (``--save-replay``): the filled rows and the cursor."""
        return {"cursor": self.cursor, "filled": self.filled,
                **{name: array[: self.filled].cpu() for name, array in self._arrays().items()}}

    def load_state_dict(self, state: dict) -> None:
        filled = int(state["filled"])
        if filled > self.rows:
            raise ValueError(f"the saved replay holds {filled} rows; this buffer has {self.rows} (raise buffer_size)")
        for name, array in self._arrays().items():
            saved = state[name]
            if tuple(saved.shape[1:]) != tuple(array.shape[1:]):
                raise ValueError(f"the saved replay's {name} is {tuple(saved.shape[1:])} per row, this buffer's "
                                 f"{tuple(array.shape[1:])}: a different env or num_envs")
            array[:filled].copy_(saved)
        self.cursor, self.filled = int(state["cursor"]) % self.rows, filled
