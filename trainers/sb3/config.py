"""Typed, validated configuration for ``unilab train --algo sb3-*``.

A YAML file (``--config``) and ``key=value`` overrides (dotted keys reach into the
dict fields, values parsed as YAML) are merged over the per-algorithm defaults.
Unknown keys are rejected; the result is a frozen dataclass and is never mutated.

Example YAML::

    algo_kwargs: {learning_rate: 3.0e-4, n_steps: 32}
    env: {max_episode_steps: 500}
    sim2real: go1_real
    normalize_reward: false
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from unilab_envs.config import (ConfigError, closest, deep_merge, from_dict, parse_overrides, read_yaml, require,
                                unknown_key_error)

__all__ = ["ALGOS", "ConfigError", "SB3TrainConfig", "default_algo_kwargs", "load_config"]

ALGOS = ("sb3-ppo", "sb3-sac", "sb3-td3")
KIND = "SB3 config key"


@dataclass(frozen=True)
class SB3TrainConfig:
    """:param algo_kwargs: keyword arguments of the SB3 algorithm's constructor,
        merged over ``default_algo_kwargs``.
    :param env: task config forwarded to ``gym.make_vec`` (e.g. ``max_episode_steps``).
    :param sim2real: a ``wrappers.Sim2Real`` profile name, YAML path or inline mapping
        (built by ``trainers.common.envs.make_vec_env``, as for the bundled PPO), or None
        for the bare env.
    :param normalize_obs / normalize_reward / clip_obs: ``VecNormalize`` settings.
    :param action_noise: TD3/SAC Gaussian exploration noise std (0 disables; TD3 only
        by default).
    :param checkpoint_every: env steps between checkpoints (0: a tenth of the run).
    :param log_interval: PPO: rollouts between log dumps (SB3's ``log_interval``).
    :param log_every: SAC/TD3: env steps (summed over envs) between log dumps; 0 picks
        ``max(1000, 10 * num_envs)``. (SB3 counts episodes there, which with thousands
        of envs means several dumps per step.)
    :param verbose: SB3's own verbosity. 0 (default): a progress bar (env steps, steps per
        second, recent episode return; periodic lines with ``--no-progress``). 1: SB3's log
        table on stdout at every dump, and its info messages, instead of the bar. 2: also
        SB3's debug messages.
    """

    policy: str = "MlpPolicy"
    algo_kwargs: dict[str, Any] = field(default_factory=dict)
    env: dict[str, Any] = field(default_factory=dict)
    sim2real: str | dict | None = None
    normalize_obs: bool = True
    normalize_reward: bool = True
    clip_obs: float = 10.0
    action_noise: float | None = None
    checkpoint_every: int = 0
    log_interval: int = 1
    log_every: int = 0
    verbose: int = 0

    def __post_init__(self) -> None:
        require(self.clip_obs > 0, f"clip_obs must be > 0, got {self.clip_obs}")
        require(self.checkpoint_every >= 0, f"checkpoint_every must be >= 0, got {self.checkpoint_every}")
        require(self.action_noise is None or self.action_noise >= 0,
                f"action_noise must be >= 0, got {self.action_noise}")
        require(self.log_every >= 0, f"log_every must be >= 0, got {self.log_every}")
        require(self.log_interval >= 1, f"log_interval must be >= 1, got {self.log_interval}")
        require(self.verbose in (0, 1, 2), f"verbose must be 0 (progress bar), 1 (SB3's log tables) or 2 "
                                            f"(also SB3's debug messages), got {self.verbose}")
        for name in ("algo_kwargs", "env"):
            require(isinstance(getattr(self, name), dict),
                    f"{name} must be a mapping, got {type(getattr(self, name)).__name__}")
        if isinstance(self.sim2real, str) and self.sim2real.strip().lower() in ("none", ""):
            object.__setattr__(self, "sim2real", None)  # `sim2real=none` on the command line: the bare env

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def default_algo_kwargs(algo: str, num_envs: int) -> dict[str, Any]:
    """Defaults sized for many parallel envs (SB3's own are tuned for 1-8 envs)."""
    if algo == "sb3-ppo":
        n_steps = max(16, 2048 // num_envs)
        batch = n_steps * num_envs
        return {"n_steps": n_steps, "batch_size": max(64, batch // 4), "n_epochs": 5, "learning_rate": 3e-4,
                "gamma": 0.99, "gae_lambda": 0.95, "ent_coef": 0.0, "clip_range": 0.2}
    if algo in ("sb3-sac", "sb3-td3"):
        return {"learning_rate": 1e-3 if algo == "sb3-td3" else 3e-4, "buffer_size": 1_000_000,
                "batch_size": 256, "learning_starts": max(1000, 10 * num_envs), "train_freq": 1,
                "gradient_steps": max(1, num_envs // 16), "gamma": 0.99}
    raise ConfigError(f"unknown SB3 algo {algo!r}; choose one of {ALGOS}")


def load_config(algo: str, num_envs: int, path: str | Path | None = None,
                overrides: list[str] | None = None) -> SB3TrainConfig:
    """Defaults <- YAML file <- overrides, validated into an ``SB3TrainConfig``.

    Reading, merging and the ``key=value`` parser are the one config system's
    (:mod:`unilab_envs.config`, as for the bundled PPO). Raises :class:`ConfigError` (one
    line: what is wrong, what to write instead) for an unreadable file, an unknown key
    (with the closest known one) or a bad value. The ``algo_kwargs`` keys are checked
    against the algorithm's constructor by ``trainers.sb3.validate``.
    """
    require(num_envs >= 1, f"--num-envs must be >= 1, got {num_envs}")
    raw: dict[str, Any] = {"algo_kwargs": default_algo_kwargs(algo, num_envs)}
    if algo == "sb3-td3":
        raw["action_noise"] = 0.1
    if path is not None:
        raw = deep_merge(raw, read_yaml(path, "config file"))
    raw = deep_merge(raw, parse_overrides(overrides or [], example="algo_kwargs.learning_rate=1e-3"))
    known = [f.name for f in dataclasses.fields(SB3TrainConfig)]
    for key in raw:
        if key not in known:
            raise unknown_key_error(KIND, key, known, suggestion=_suggestion(key, known, raw))
    return from_dict(SB3TrainConfig, raw, kind=KIND)


def _suggestion(key: str, known: list[str], raw: dict[str, Any]) -> str | None:
    """``'algo_kwargs.<key>'`` for an algorithm keyword written at the top level, else the closest key."""
    given = raw.get("algo_kwargs")
    if isinstance(given, dict) and key in given or key in default_algo_kwargs("sb3-ppo", 1) \
            or key in default_algo_kwargs("sb3-sac", 1):
        return f"algo_kwargs.{key}"
    return closest(key, known)
