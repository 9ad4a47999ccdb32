"""``PacketLoss``: observations and/or actions dropped on a lossy channel.

Each env owns one channel per direction, a two-state (good/bad) Markov chain,
the Gilbert-Elliott model. Every control step the state moves first
(good -> bad with ``p_good_to_bad``, bad -> good with ``p_bad_to_good``), then
the packet is lost with the state's loss rate (``loss_good`` or ``loss_bad``).
Bernoulli loss is the one-state special case (``model="bernoulli"``,
``loss_rate``). The stationary loss rate is
``(p_bad_to_good * loss_good + p_good_to_bad * loss_bad) / (p_good_to_bad + p_bad_to_good)``
and, with ``loss_good = 0`` and ``loss_bad = 1``, bursts last
``1 / p_bad_to_good`` steps on average. The chain starts from its stationary
distribution and runs on across episodes (it is the link, not the robot).

A lost packet holds the last received value:

* observations: the policy sees the last delivered observation again; the
  first observation of an episode is always delivered (the robot starts from a
  known state), so nothing leaks from the previous episode. In SAME_STEP mode
  the step's packet is the terminal one, ``info["final_obs"]``.
* actions: the env executes the last received action of this episode, zeros
  (the neutral action) before the first one arrives.

``info["obs_lost"]`` and ``info["action_lost"]`` are the ``(N,)`` loss masks
of the step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numba as nb
import numpy as np
from gymnasium.vector import VectorEnv

from unilab_envs.core.rng import seed_streams, stream_id, uniform
from wrappers._base import Sim2RealWrapper, row_kernel, make_config, require

MODELS = ("bernoulli", "gilbert_elliott")


@dataclass(frozen=True)
class ChannelConfig:
    """One direction's channel (see module docstring).

    Attributes:
        model: ``"bernoulli"`` (uses ``loss_rate``) or ``"gilbert_elliott"``
            (uses the transition probabilities and per-state loss rates).
        loss_rate: Bernoulli loss probability per step.
        p_good_to_bad, p_bad_to_good: Gilbert-Elliott transition probabilities per step.
        loss_good, loss_bad: Gilbert-Elliott loss probability in each state.
    """

    model: str = "bernoulli"
    loss_rate: float = 0.0
    p_good_to_bad: float = 0.0
    p_bad_to_good: float = 1.0
    loss_good: float = 0.0
    loss_bad: float = 1.0

    def validate(self) -> None:
        require(self.model in MODELS, f"channel model must be one of {MODELS}, got {self.model!r}")
        for name in ("loss_rate", "p_good_to_bad", "p_bad_to_good", "loss_good", "loss_bad"):
            value = getattr(self, name)
            require(math.isfinite(value) and 0.0 <= value <= 1.0, f"{name} must be a probability in [0, 1], got {value}")
        if self.model == "gilbert_elliott":
            require(self.p_good_to_bad + self.p_bad_to_good > 0, "p_good_to_bad + p_bad_to_good must be > 0")

    def params(self) -> np.ndarray:
        """``[p_good_to_bad, p_bad_to_good, loss_good, loss_bad]`` for the kernels."""
        if self.model == "bernoulli":
            return np.array([0.0, 1.0, self.loss_rate, self.loss_rate])
        return np.array([self.p_good_to_bad, self.p_bad_to_good, self.loss_good, self.loss_bad])

    @property
    def stationary_bad(self) -> float:
        p, q, _, _ = self.params()
        return p / (p + q) if p + q > 0 else 0.0

    @property
    def loss_probability(self) -> float:
        """The long-run fraction of lost packets."""
        _, _, lg, lb = self.params()
        pb = self.stationary_bad
        return (1 - pb) * lg + pb * lb


def _channel_config(value: Any, name: str) -> ChannelConfig | None:
    if value is None or isinstance(value, ChannelConfig):
        return value
    if isinstance(value, Mapping):
        return make_config(ChannelConfig, value, {})
    raise TypeError(f"{name} must be a ChannelConfig, a dict or None, got {type(value).__name__}")


@dataclass(frozen=True)
class PacketLossConfig:
    """Channels for the two directions; ``None`` leaves that direction lossless."""

    observations: ChannelConfig | None = None
    actions: ChannelConfig | None = None

    def __post_init__(self) -> None:
        for name in ("observations", "actions"):
            object.__setattr__(self, name, _channel_config(getattr(self, name), name))

    def validate(self) -> None:
        require(self.observations is not None or self.actions is not None, "PacketLoss needs an 'observations' or an 'actions' channel")


@nb.njit(inline="always", cache=True)
def _lost(rng, i, bad, params):
    u = uniform(rng, i)
    if bad[i]:
        if u < params[1]:
            bad[i] = False
    elif u < params[0]:
        bad[i] = True
    return uniform(rng, i) < (params[3] if bad[i] else params[2])


@nb.njit(cache=True)
def _init_channel(rng, bad, stationary_bad):
    for i in range(bad.shape[0]):
        bad[i] = uniform(rng, i) < stationary_bad


@row_kernel
def _lose_obs(obs, out, final_in, final_out, touch, started, final, rng, bad, held, lost, params):
    for i in nb.prange(obs.shape[0]):
        if not touch[i]:
            continue
        lost[i] = False
        if final[i] or not started[i]:
            is_lost = _lost(rng, i, bad, params)
            lost[i] = is_lost
            if final[i]:
                if is_lost:
                    final_out[i, :] = held[i, :]
                else:
                    final_out[i, :] = final_in[i, :]
            elif is_lost:
                out[i, :] = held[i, :]
            else:
                out[i, :] = obs[i, :]
                held[i, :] = obs[i, :]
        if started[i]:
            out[i, :] = obs[i, :]
            held[i, :] = obs[i, :]


@row_kernel
def _lose_actions(actions, out, rng, bad, held, lost, params):
    for i in nb.prange(actions.shape[0]):
        is_lost = _lost(rng, i, bad, params)
        lost[i] = is_lost
        if not is_lost:
            held[i, :] = actions[i, :]
        out[i, :] = held[i, :]


class PacketLoss(Sim2RealWrapper):
    """Lost observation and/or action packets, holding the last received value.

    ``PacketLoss(env, observations={"model": "bernoulli", "loss_rate": 0.05})``, or
    ``actions={"model": "gilbert_elliott", "p_good_to_bad": 0.02, "p_bad_to_good": 0.3}``.
    """

    SECTION = "packet_loss"
    CONFIG = PacketLossConfig  # the section's keys: its fields (unilab_robot.profiles.SECTION_KEYS)
    STATE = ("_action_rng", "_obs_bad", "_action_bad", "_obs_held", "_action_held", "obs_lost", "action_lost", "_out", "_final_out", "_action_out")

    def __init__(self, env: VectorEnv, config: PacketLossConfig | Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(env)
        self.config = cfg = make_config(PacketLossConfig, config, kwargs)
        n = self.num_envs
        o = int(np.prod(self.single_observation_space.shape))
        a = self.single_action_space.shape
        self._action_rng = np.zeros(n, np.uint64)
        self._obs_params = cfg.observations.params() if cfg.observations else None
        self._action_params = cfg.actions.params() if cfg.actions else None
        self._obs_bad = np.zeros(n, bool)
        self._action_bad = np.zeros(n, bool)
        self._obs_held = np.zeros((n, o), np.float32)
        self._action_held = np.zeros((n, *a), np.float32)
        self.obs_lost = np.zeros(n, bool)
        self.action_lost = np.zeros(n, bool)
        self._out = np.zeros((n, o), np.float32)
        self._final_out = np.zeros((n, o), np.float32)
        self._action_out = np.zeros((n, *a), np.float32)

    def _seed_streams(self, seed):
        super()._seed_streams(seed)
        cfg = self.config
        self._action_rng[:] = seed_streams(self._episode_seeds(seed), stream=stream_id(f"{self.SECTION}/actions"))
        if cfg.observations:
            _init_channel(self._rng, self._obs_bad, cfg.observations.stationary_bad)
        if cfg.actions:
            _init_channel(self._action_rng, self._action_bad, cfg.actions.stationary_bad)

    def _apply_profile_level(self, level):
        """The channels' loss probabilities (both states) times ``level``; the burst structure stays."""
        cfg = self.config
        for params, channel in ((self._obs_params, cfg.observations), (self._action_params, cfg.actions)):
            if params is not None:
                params[2:] = channel.params()[2:] * level

    def _actions(self, actions):
        if self._action_params is None:
            return actions
        actions = self._check_actions(actions)
        _lose_actions(actions, self._action_out, self._action_rng, self._action_bad, self._action_held, self.action_lost, self._action_params)
        return self._action_out

    def _after_step(self, info):
        if self._action_params is not None:
            info["action_lost"] = self.action_lost.copy()

    def _on_start(self, started):
        if self._action_params is not None:
            self._action_held[started] = 0.0

    def critic_groups(self):
        groups = {}
        if self._obs_params is not None:
            groups["observation_lost"] = self.obs_lost[:, None]
        if self._action_params is not None:
            groups["action_lost"] = self.action_lost[:, None]
        return groups

    def _observe(self, obs, info, touch, started, final):
        if self._obs_params is None:
            return obs
        final_in = self._final_in(info, obs)
        _lose_obs(obs, self._out, final_in, self._final_out, touch, started, final, self._rng, self._obs_bad, self._obs_held, self.obs_lost, self._obs_params)
        info["obs_lost"] = self.obs_lost.copy()
        if "final_obs" in info and final is not self._none:
            info["final_obs"] = self._hand_out(self._final_out)
        return self._hand_out(self._out)
