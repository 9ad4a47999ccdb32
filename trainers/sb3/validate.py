"""Checks of an SB3 run's settings that need the algorithm class or the registry.

``unilab train --algo sb3-*`` calls :func:`check_run` before it creates the run folder,
so a typo ends in one line (``ConfigError``, exit 2) instead of a traceback from SB3's
constructor and a folder holding only ``config.yaml``.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from stable_baselines3.common.base_class import BaseAlgorithm

from trainers.common.envs import Sim2RealError, check_sim2real, check_task
from trainers.sb3.config import SB3TrainConfig
from unilab_envs.config import ConfigError, closest, did_you_mean, unknown_key_error

#: constructor arguments the CLI sets itself (from flags), not through ``algo_kwargs``
SET_BY_CLI = {"policy": "the 'policy' config key", "env": "--task", "seed": "--seed", "device": "--device",
              "verbose": "the 'verbose' config key", "tensorboard_log": "the run folder (tb/)", "_init_setup_model": "SB3"}


def constructor_keywords(cls: type[BaseAlgorithm]) -> list[str]:
    """The keyword arguments ``cls(...)`` accepts."""
    params = inspect.signature(cls.__init__).parameters
    return [name for name, p in params.items() if name != "self" and p.kind in
            (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]


def check_algo_kwargs(algo: str, cls: type[BaseAlgorithm], algo_kwargs: dict) -> None:
    """Every ``algo_kwargs`` key is a keyword of ``cls``'s constructor the CLI does not set itself."""
    known = constructor_keywords(cls)
    for key in algo_kwargs:
        if key in SET_BY_CLI:
            raise ConfigError(f"algo_kwargs.{key} is set by {SET_BY_CLI[key]}; remove it from algo_kwargs")
        if key not in known:
            raise unknown_key_error(f"{algo} ({cls.__name__}) key", key, [k for k in known if k not in SET_BY_CLI],
                                    prefix="algo_kwargs.")


def check_policy(cls: type[BaseAlgorithm], policy: str) -> None:
    """``policy`` is one of the algorithm's policy aliases (``MlpPolicy``, ...)."""
    aliases = list(getattr(cls, "policy_aliases", {}))
    if aliases and policy not in aliases:
        raise ConfigError(f"policy {policy!r} is not a {cls.__name__} policy.{did_you_mean(closest(policy, aliases))} "
                          f"Choose one of: {', '.join(aliases)}")


def check_run(cls: type[BaseAlgorithm], algo: str, task: str | None, num_envs: int, total_steps: int,
              cfg: SB3TrainConfig, resume: str | None = None) -> None:
    """All checks that can run before any file is written; :class:`ConfigError` on the first failure."""
    if not task:
        raise ConfigError(f"--algo {algo} needs --task (e.g. --task UniLab/UR5Reach-v0)")
    if num_envs < 1:
        raise ConfigError(f"--num-envs must be >= 1, got {num_envs}")
    if total_steps < 1:
        raise ConfigError(f"--total-steps must be >= 1, got {total_steps}")
    try:
        check_task(task)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    check_policy(cls, cfg.policy)
    check_algo_kwargs(algo, cls, cfg.algo_kwargs)
    try:
        check_sim2real(cfg.sim2real, task)
    except Sim2RealError as e:
        raise ConfigError(f"sim2real: {e}") from None
    if resume is not None:
        path = Path(resume)
        if path.is_dir():
            from trainers.sb3.callbacks import latest_checkpoint

            path = latest_checkpoint(path) or path / "checkpoint.zip"
        if not path.exists():
            raise ConfigError(f"--resume: no SB3 checkpoint at {path}; give the run folder of an earlier "
                              f"`unilab train --algo {algo}` or its checkpoint.zip / model.zip")
