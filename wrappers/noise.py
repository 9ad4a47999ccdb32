"""Sensor and actuator noise: ``ObservationNoise``, ``ImuBiasDrift``, ``ActionNoise``.

Noise of scale ``s`` on a value ``x``, with ``n`` a standard normal
(``distribution="gaussian"``, ``s`` is the std) or uniform on ``[-1, 1]``
(``"uniform"``, ``s`` is the half-width, as MuJoCo Playground and legged_gym)::

    additive:        x + s * n
    multiplicative:  x * (1 + s * n)

Every draw comes from the env's own stream, so the noise of env ``i`` does not
depend on ``N`` or on the thread count.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numba as nb
import numpy as np
from gymnasium.vector import VectorEnv

from unilab_envs.core.rng import normal, uniform
from wrappers._base import Sim2RealWrapper, as_range, row_kernel, frozen_mapping, group_columns, make_config, policy_read, require

DISTRIBUTIONS = ("gaussian", "uniform")
MODES = ("additive", "multiplicative")


@nb.njit(inline="always", cache=True)
def _draw(rng, i, gaussian):
    return normal(rng, i) if gaussian else 2.0 * uniform(rng, i) - 1.0


@row_kernel
def _obs_noise(obs, out, final_in, final_out, touch, started, final, rng, cols, scale, env_level, level_low, level_high,
               gaussian, multiplicative):
    for i in nb.prange(obs.shape[0]):
        if not touch[i]:
            continue
        if final[i]:  # the old episode's last observation, at the old episode's level
            final_out[i, :] = final_in[i, :]
            for c in range(cols.shape[0]):
                n = scale[c] * env_level[i] * _draw(rng, i, gaussian)
                j = cols[c]
                final_out[i, j] = final_in[i, j] * (1.0 + n) if multiplicative else final_in[i, j] + n
        if started[i] and level_high > level_low:  # a fixed level draws nothing (its stream is unchanged)
            env_level[i] = level_low + (level_high - level_low) * uniform(rng, i)
        out[i, :] = obs[i, :]
        for c in range(cols.shape[0]):
            n = scale[c] * env_level[i] * _draw(rng, i, gaussian)
            j = cols[c]
            out[i, j] = obs[i, j] * (1.0 + n) if multiplicative else obs[i, j] + n


@row_kernel
def _imu_drift(obs, out, final_in, final_out, touch, started, final, rng, bias, cols, bias_std, step_std):
    for i in nb.prange(obs.shape[0]):
        if not touch[i]:
            continue
        if final[i]:  # the last observation of the old episode: one more drift step
            final_out[i, :] = final_in[i, :]
            for c in range(cols.shape[0]):
                bias[i, c] += step_std[c] * normal(rng, i)
                final_out[i, cols[c]] += bias[i, c]
        for c in range(cols.shape[0]):
            if started[i]:
                bias[i, c] = bias_std[c] * normal(rng, i)
            else:
                bias[i, c] += step_std[c] * normal(rng, i)
        out[i, :] = obs[i, :]
        for c in range(cols.shape[0]):
            out[i, cols[c]] += bias[i, c]


@row_kernel
def _action_noise(actions, out, rng, scale, gaussian, multiplicative, clip):
    for i in nb.prange(actions.shape[0]):
        for j in range(actions.shape[1]):
            n = scale * _draw(rng, i, gaussian)
            a = actions[i, j] * (1.0 + n) if multiplicative else actions[i, j] + n
            out[i, j] = min(max(a, -1.0), 1.0) if clip else a


# --- observation noise ---------------------------------------------------------


@dataclass(frozen=True)
class ObservationNoiseConfig:
    """Noise per observation group (see module docstring).

    Attributes:
        scales: group -> noise scale (std for gaussian, half-width for uniform),
            in the group's units; groups not named are left exact. Empty (the default): the
            noise scales the task declares for its policy groups (``ObsGroup.noise``).
        distribution: ``"gaussian"`` or ``"uniform"``.
        mode: ``"additive"`` or ``"multiplicative"`` (relative scale).
        level: a global multiplier on every scale (Playground's ``noise_level``): a number,
            or ``(low, high)``: each env draws its multiplier uniformly from the range at the
            start of every episode, so that with ``low = 0`` a policy also meets (nearly)
            clean observations and does not come to depend on the noise.
    """

    scales: Mapping[str, float] = field(default_factory=dict)
    distribution: str = "gaussian"
    mode: str = "additive"
    level: Any = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "scales", frozen_mapping(self.scales, "scales"))
        object.__setattr__(self, "level", as_range(self.level, "level"))

    def validate(self) -> None:
        for name, value in self.scales.items():
            require(math.isfinite(value) and value >= 0, f"noise scale of group {name!r} must be >= 0, got {value}")
        require(self.distribution in DISTRIBUTIONS, f"distribution must be one of {DISTRIBUTIONS}, got {self.distribution!r}")
        require(self.mode in MODES, f"mode must be one of {MODES}, got {self.mode!r}")
        require(self.level is not None, "level must be a number or a (low, high) pair")
        low, high = self.level
        require(math.isfinite(low) and math.isfinite(high) and 0 <= low <= high,
                f"level must satisfy 0 <= low <= high, got {self.level}")


def declared_noise_scales(env: VectorEnv) -> dict[str, float]:
    """The noise scale each of the env's policy observation groups declares (``ObsGroup.noise``), by group;
    ``ValueError`` when none declares one."""
    base = env.unwrapped
    declared = getattr(getattr(base, "task", None), "declared_groups", {}) or {}
    scales = {name: group.noise for name, group in declared.items()
              if name in (getattr(base, "obs_groups", None) or {}) and group.noise is not None}
    if not scales:
        raise ValueError(f"ObservationNoise got no scales and {type(base).__name__}'s task declares no noise for its "
                         f"observation groups: give scales, e.g. scales={{'gyro': 0.2, 'joint_vel': 1.5}}")
    return scales


class ObservationNoise(Sim2RealWrapper):
    """Gaussian or uniform, additive or multiplicative noise per observation group.

    ``ObservationNoise(env, scales={"gyro": 0.2, "joint_vel": 1.5}, distribution="uniform")``;
    ``ObservationNoise(env, distribution="uniform")`` uses the task's declared scales.
    Fresh noise every step, also on SAME_STEP's ``info["final_obs"]``. With a ``level`` range,
    ``env_level`` holds each env's multiplier of the current episode.
    """

    SECTION = "observation_noise"
    CONFIG = ObservationNoiseConfig  # the section's keys: its fields (unilab_robot.profiles.SECTION_KEYS)
    STATE = ("env_level", "_out", "_final_out")

    def __init__(self, env: VectorEnv, config: ObservationNoiseConfig | Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(env)
        cfg = make_config(ObservationNoiseConfig, config, kwargs)
        if not cfg.scales:  # the task's declared scales, written into the config so the run records them
            cfg = dataclasses.replace(cfg, scales=declared_noise_scales(env))
        cfg = dataclasses.replace(cfg, scales=policy_read(env, cfg.scales))  # a critic-only group gets none
        self.config = cfg
        columns = group_columns(env, cfg.scales, "ObservationNoise")
        self._cols = np.concatenate([columns[g] for g in cfg.scales])
        low, high = cfg.level
        self._ranged = high > low
        # a fixed level is folded into the scales (env_level stays 1); a range is drawn per episode
        fixed = 1.0 if self._ranged else low
        self._configured_scale = np.concatenate([np.full(columns[g].size, cfg.scales[g] * fixed) for g in cfg.scales])
        self.env_level = np.full(self.num_envs, low if self._ranged else 1.0)
        self._scale = self._configured_scale.copy()
        shape = (self.num_envs, int(np.prod(self.single_observation_space.shape)))
        self._out = np.zeros(shape, np.float32)
        self._final_out = np.zeros(shape, np.float32)

    def _apply_profile_level(self, level):
        self._scale[:] = self._configured_scale * level

    def critic_groups(self) -> dict[str, np.ndarray]:
        """``obs_noise_level``: each env's drawn multiplier, when ``level`` is a range."""
        return {"obs_noise_level": self.env_level[:, None].astype(np.float32)} if self._ranged else {}

    def _observe(self, obs, info, touch, started, final):
        final_in = self._final_in(info, obs)
        cfg = self.config
        low, high = cfg.level
        _obs_noise(obs, self._out, final_in, self._final_out, touch, started, final, self._rng, self._cols, self._scale,
                   self.env_level, low, high, cfg.distribution == "gaussian", cfg.mode == "multiplicative")
        if final is not self._none and "final_obs" in info:
            info["final_obs"] = self._hand_out(self._final_out)
        return self._hand_out(self._out)


# --- IMU bias drift ------------------------------------------------------------


@dataclass(frozen=True)
class ImuBiasDriftConfig:
    """A per-env bias on IMU groups: drawn at reset, then a random walk.

    With ``b`` the bias of one channel: ``b ~ N(0, bias_std**2)`` at the start
    of each episode, then ``b += drift_std * sqrt(dt) * N(0, 1)`` every control
    step, so ``Var(b) = bias_std**2 + drift_std**2 * t`` grows linearly with the
    episode time ``t`` (seconds).

    Attributes:
        bias_std: group -> std of the reset-time bias (group units).
        drift_std: group -> random-walk rate (group units per sqrt(second)).
            Groups in either mapping are biased; a missing entry is 0.
    """

    bias_std: Mapping[str, float] = field(default_factory=lambda: {"gyro": 0.02})
    drift_std: Mapping[str, float] = field(default_factory=lambda: {"gyro": 0.005})

    def __post_init__(self) -> None:
        object.__setattr__(self, "bias_std", frozen_mapping(self.bias_std, "bias_std"))
        object.__setattr__(self, "drift_std", frozen_mapping(self.drift_std, "drift_std"))

    @property
    def groups(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys([*self.bias_std, *self.drift_std]))

    def validate(self) -> None:
        require(len(self.groups) > 0, "ImuBiasDrift needs at least one group in bias_std or drift_std")
        for kind in ("bias_std", "drift_std"):
            for name, value in getattr(self, kind).items():
                require(math.isfinite(value) and value >= 0, f"{kind} of group {name!r} must be >= 0, got {value}")


class ImuBiasDrift(Sim2RealWrapper):
    """IMU bias at reset plus random-walk drift (see :class:`ImuBiasDriftConfig`).

    ``ImuBiasDrift(env, bias_std={"gyro": 0.02}, drift_std={"gyro": 0.005})``;
    ``bias`` is the current ``(N, C)`` bias of the biased columns.
    """

    SECTION = "imu_bias_drift"
    CONFIG = ImuBiasDriftConfig  # the section's keys: its fields (unilab_robot.profiles.SECTION_KEYS)
    STATE = ("bias", "_out", "_final_out")

    def __init__(self, env: VectorEnv, config: ImuBiasDriftConfig | Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(env)
        cfg = make_config(ImuBiasDriftConfig, config, kwargs)
        self.config = cfg = dataclasses.replace(cfg, bias_std=policy_read(env, cfg.bias_std), drift_std=policy_read(env, cfg.drift_std))
        columns = group_columns(env, cfg.groups, "ImuBiasDrift")
        self._cols = np.concatenate([columns[g] for g in cfg.groups])
        self._configured_bias_std = np.concatenate([np.full(columns[g].size, cfg.bias_std.get(g, 0.0)) for g in cfg.groups])
        self._configured_step_std = np.concatenate([np.full(columns[g].size, cfg.drift_std.get(g, 0.0) * math.sqrt(self.dt)) for g in cfg.groups])
        self._bias_std, self._step_std = self._configured_bias_std.copy(), self._configured_step_std.copy()
        self.bias = np.zeros((self.num_envs, self._cols.size))
        shape = (self.num_envs, int(np.prod(self.single_observation_space.shape)))
        self._out = np.zeros(shape, np.float32)
        self._final_out = np.zeros(shape, np.float32)

    def _observe(self, obs, info, touch, started, final):
        final_in = self._final_in(info, obs)
        _imu_drift(obs, self._out, final_in, self._final_out, touch, started, final, self._rng, self.bias, self._cols, self._bias_std, self._step_std)
        if final is not self._none and "final_obs" in info:
            info["final_obs"] = self._hand_out(self._final_out)
        return self._hand_out(self._out)

    def _apply_profile_level(self, level):
        """New episodes draw their bias and every step its drift at ``level`` times the stds."""
        self._bias_std[:] = self._configured_bias_std * level
        self._step_std[:] = self._configured_step_std * level

    def critic_groups(self):
        return {"imu_bias": self.bias}


# --- action noise -------------------------------------------------------------


@dataclass(frozen=True)
class ActionNoiseConfig:
    """Noise on the commanded action, every step.

    Attributes:
        std: noise scale in action units (std, or half-width for uniform).
        distribution: ``"gaussian"`` or ``"uniform"``.
        mode: ``"additive"`` or ``"multiplicative"``.
        clip: clip the noisy action back to ``[-1, 1]``.
    """

    std: float = 0.02
    distribution: str = "gaussian"
    mode: str = "additive"
    clip: bool = True

    def validate(self) -> None:
        require(math.isfinite(self.std) and self.std >= 0, f"std must be >= 0, got {self.std}")
        require(self.distribution in DISTRIBUTIONS, f"distribution must be one of {DISTRIBUTIONS}, got {self.distribution!r}")
        require(self.mode in MODES, f"mode must be one of {MODES}, got {self.mode!r}")


class ActionNoise(Sim2RealWrapper):
    """Noise on every commanded action: ``ActionNoise(env, std=0.02)``."""

    SECTION = "action_noise"
    CONFIG = ActionNoiseConfig  # the section's keys: its fields (unilab_robot.profiles.SECTION_KEYS)
    STATE = ("_out",)

    def __init__(self, env: VectorEnv, config: ActionNoiseConfig | Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(env)
        self.config = make_config(ActionNoiseConfig, config, kwargs)
        self._out = np.zeros((self.num_envs, *self.single_action_space.shape), np.float32)
        self._std = self.config.std

    def _apply_profile_level(self, level):
        self._std = self.config.std * level

    def _actions(self, actions):
        actions = self._check_actions(actions)
        cfg = self.config
        _action_noise(actions, self._out, self._rng, self._std, cfg.distribution == "gaussian", cfg.mode == "multiplicative", cfg.clip)
        return self._out
