"""Delays in control steps: ``ActionLatency`` and ``ObservationLatency``.

A delay ``k`` is fixed (``delay=2``) or drawn per env, uniformly from the whole
numbers of ``delay=(low, high)``, at the start of each episode. Each env keeps a
ring buffer of its last ``high + 1`` values, ``(N, high + 1, ...)``.

Episode boundaries never leak: the delay line restarts with every episode.

* Actions: the action executed at episode step ``t`` is the one sent at step
  ``t - k`` of the same episode; during the first ``k`` steps, when no such
  action exists, the executed action is zeros (the task's neutral action: the
  home pose for the legged tasks).
* Observations: the policy sees at step ``t`` the observation of step
  ``t - k`` of the same episode; during the first ``k`` steps it sees the
  episode's first (reset) observation. In SAME_STEP mode ``info["final_obs"]``
  is the old episode's delayed observation, as the policy would have seen it.
"""

from __future__ import annotations

import math

from dataclasses import dataclass
from typing import Any, Mapping

import numba as nb
import numpy as np
from gymnasium.vector import VectorEnv

from unilab_envs.core.rng import uniform
from wrappers._base import Sim2RealWrapper, row_kernel, as_range, group_columns, make_config, require

MAX_DELAY = 1000


@nb.njit(inline="always", cache=True)
def _draw_delay(rng, i, low, high):
    if high == low:
        return low
    return low + min(np.int64(uniform(rng, i) * (high - low + 1)), high - low)


@nb.njit(cache=True)
def _restart(started, rng, count, delay, low, high):
    for i in range(started.shape[0]):
        if started[i]:
            count[i] = 0
            delay[i] = _draw_delay(rng, i, low, high)


@row_kernel
def _delay_actions(actions, out, buf, head, count, delay):
    size = buf.shape[1]
    for i in nb.prange(actions.shape[0]):
        h = (head[i] + 1) % size
        head[i] = h
        buf[i, h, :] = actions[i, :]
        d = delay[i]
        if count[i] >= d:  # count: actions received earlier in this episode
            out[i, :] = buf[i, (h - d) % size, :]
        else:
            out[i, :] = 0.0
        count[i] = min(count[i] + 1, size)


@nb.njit(inline="always", cache=True)
def _push_read(i, src, dst, buf, head, count, delay, cols):
    size = buf.shape[1]
    h = (head[i] + 1) % size
    head[i] = h
    for c in range(cols.shape[0]):
        buf[i, h, c] = src[i, cols[c]]
    count[i] = min(count[i] + 1, size)
    k = (h - min(delay[i], count[i] - 1)) % size
    dst[i, :] = src[i, :]
    for c in range(cols.shape[0]):
        dst[i, cols[c]] = buf[i, k, c]


@row_kernel
def _delay_obs(obs, out, final_in, final_out, touch, started, final, rng, buf, head, count, delay, cols, low, high):
    for i in nb.prange(obs.shape[0]):
        if not touch[i]:
            continue
        if final[i]:  # finish the old episode's line first
            _push_read(i, final_in, final_out, buf, head, count, delay, cols)
        if started[i]:
            count[i] = 0
            delay[i] = _draw_delay(rng, i, low, high)
        _push_read(i, obs, out, buf, head, count, delay, cols)


def scaled_delay(delay: tuple[int, int], level: float) -> tuple[int, int]:
    """The delay range at a profile ``level``: each end times ``level``, rounded half up
    (``(0, 1)`` is ``(0, 0)`` below level 0.5; ``(1, 3)`` at 0.5 is ``(1, 2)``)."""
    return tuple(int(math.floor(end * level + 0.5)) for end in delay)


@dataclass(frozen=True)
class LatencyConfig:
    """A delay in control steps.

    Attributes:
        delay: ``k`` (fixed) or ``(low, high)``: drawn per env at each episode
            start, uniformly among ``low..high``.
        groups: observation groups to delay (``ObservationLatency`` only);
            ``None``: the whole observation.
    """

    delay: Any = 1
    groups: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "delay", as_range(self.delay, "delay", integer=True))
        if self.groups is not None:
            object.__setattr__(self, "groups", tuple(str(g) for g in self.groups))

    def validate(self) -> None:
        require(self.delay is not None, "delay must be a whole number of control steps or a (low, high) pair")
        low, high = self.delay
        require(0 <= low <= high, f"delay must satisfy 0 <= low <= high, got {self.delay}")
        require(high <= MAX_DELAY, f"delay must be <= {MAX_DELAY} control steps, got {high}")
        require(self.groups is None or len(self.groups) > 0, "groups must be None (all) or name at least one group")


class ActionLatency(Sim2RealWrapper):
    """The env executes the action sent ``k`` control steps earlier (see module docstring).

    ``ActionLatency(env, delay=1)`` or ``delay=(0, 2)``; ``delay`` holds each env's current ``k``.
    """

    SECTION = "action_latency"
    CONFIG = LatencyConfig  # the section's keys: its fields (unilab_robot.profiles.SECTION_KEYS)
    STATE = ("_buf", "_head", "_count", "delay", "_out")

    def __init__(self, env: VectorEnv, config: LatencyConfig | Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(env)
        self.config = cfg = make_config(LatencyConfig, config, kwargs)
        require(cfg.groups is None, "ActionLatency delays the whole action; 'groups' is for ObservationLatency")
        n, size = self.num_envs, cfg.delay[1] + 1
        self._buf = np.zeros((n, size, *self.single_action_space.shape), np.float32)
        self._head = np.zeros(n, np.int64)
        self._count = np.zeros(n, np.int64)
        self.delay = np.full(n, cfg.delay[0], np.int64)
        self._range = cfg.delay
        self._out = np.zeros((n, *self.single_action_space.shape), np.float32)

    def _actions(self, actions):
        actions = self._check_actions(actions)
        _delay_actions(actions, self._out, self._buf, self._head, self._count, self.delay)
        return self._out

    def _on_start(self, started):
        _restart(started, self._rng, self._count, self.delay, *self._range)

    def _apply_profile_level(self, level):
        self._range = scaled_delay(self.config.delay, level)

    def critic_groups(self):
        return {"action_delay": self.delay[:, None]}


class ObservationLatency(Sim2RealWrapper):
    """The policy sees the observation of ``k`` control steps earlier (see module docstring).

    ``ObservationLatency(env, delay=(0, 2), groups=("gyro", "gravity"))``.
    """

    SECTION = "observation_latency"
    CONFIG = LatencyConfig  # the section's keys: its fields (unilab_robot.profiles.SECTION_KEYS)
    STATE = ("_buf", "_head", "_count", "delay", "_out", "_final_out")

    def __init__(self, env: VectorEnv, config: LatencyConfig | Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(env)
        self.config = cfg = make_config(LatencyConfig, config, kwargs)
        size = int(np.prod(self.single_observation_space.shape))
        if cfg.groups is None:
            self._cols = np.arange(size, dtype=np.int64)
        else:
            columns = group_columns(env, cfg.groups, "ObservationLatency")
            self._cols = np.concatenate([columns[g] for g in cfg.groups])
        n = self.num_envs
        self._buf = np.zeros((n, cfg.delay[1] + 1, self._cols.size), np.float32)
        self._head = np.zeros(n, np.int64)
        self._count = np.zeros(n, np.int64)
        self.delay = np.full(n, cfg.delay[0], np.int64)
        self._range = cfg.delay
        self._out = np.zeros((n, size), np.float32)
        self._final_out = np.zeros((n, size), np.float32)

    def _observe(self, obs, info, touch, started, final):
        final_in = self._final_in(info, obs)
        low, high = self._range
        _delay_obs(obs, self._out, final_in, self._final_out, touch, started, final, self._rng, self._buf, self._head, self._count, self.delay, self._cols, low, high)
        if "final_obs" in info and final is not self._none:
            info["final_obs"] = self._hand_out(self._final_out)
        return self._hand_out(self._out)

    def _apply_profile_level(self, level):
        self._range = scaled_delay(self.config.delay, level)

    def critic_groups(self):
        return {"observation_delay": self.delay[:, None]}
