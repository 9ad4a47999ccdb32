"""The whole-profile curriculum: one level that scales every section of a profile.

A policy that must first learn to walk (or to grasp) learns little when it is shoved,
delayed and deafened from its first step. With a profile's ``curriculum`` every section
starts weak and grows as the policy copes::

    extends: go1_real
    curriculum: {start: 0.0, step: 0.1, raise_above: 0.8, lower_below: 0.5}

One level ``l`` in ``[0, 1]`` scales every wrapper's magnitude
(:meth:`wrappers._base.Sim2RealWrapper.set_profile_level`: noise and loss rates times
``l``, delays, gains, DR ranges and push speeds from unperturbed towards the configured
range). After every ``window`` finished episodes the share that went well decides: at or
above ``raise_above`` the level rises by ``step``, below ``lower_below`` it falls by
``step``, in between it stays. An episode goes well when it succeeded
(``info["is_success"]``, for tasks that end on success) or, for tasks without it, when
it ran to its time limit (truncated, not terminated).

The level and its counts are part of the stack's state (exact resume). Evaluation and
``unilab play`` use the whole profile (level 1): the curriculum is a training device.
``info["profile_level"]`` reports the level to the trainer's log.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np

from unilab_envs.config import ConfigError
from wrappers._base import make_config, require


@dataclass(frozen=True)
class ProfileCurriculumConfig:
    """How the profile level moves (see module docstring).

    Attributes:
        start: the level of the first episodes.
        step: how far one decision moves the level.
        window: finished episodes per decision; ``0``: as many as there are envs.
        raise_above: the share of episodes that went well at or above which the level rises.
        lower_below: the share below which it falls.
    """

    start: float = 0.0
    step: float = 0.1
    window: int = 0
    raise_above: float = 0.8
    lower_below: float = 0.5

    def validate(self) -> None:
        for name in ("start", "raise_above", "lower_below"):
            value = getattr(self, name)
            require(math.isfinite(value) and 0.0 <= value <= 1.0, f"{name} must be in [0, 1], got {value}")
        require(math.isfinite(self.step) and 0.0 < self.step <= 1.0, f"step must be in (0, 1], got {self.step}")
        require(isinstance(self.window, int) and self.window >= 0, f"window must be an int >= 0 (0: the number of envs), got {self.window!r}")
        require(self.lower_below <= self.raise_above, f"lower_below ({self.lower_below}) must be <= raise_above ({self.raise_above})")


def next_profile_level(level: float, went_well: int, finished: int, cfg: ProfileCurriculumConfig) -> float:
    """The curriculum's rule: the level after a window of ``finished`` episodes, ``went_well`` of them well."""
    share = went_well / finished
    if share >= cfg.raise_above:
        level += cfg.step
    elif share < cfg.lower_below:
        level -= cfg.step
    return float(min(1.0, max(0.0, round(level, 12))))


def episodes_that_went_well(terminated: np.ndarray, truncated: np.ndarray, info: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """``(finished, went_well)`` masks of one step: success where the task reports it, else survival."""
    finished = np.logical_or(terminated, truncated)
    success = info.get("is_success")
    if success is not None:
        return finished, finished & np.asarray(success, dtype=bool)
    return finished, finished & np.logical_not(terminated)


class ProfileCurriculum:
    """Moves the level of a stack's wrappers from episode outcomes (see module docstring)."""

    def __init__(self, config: ProfileCurriculumConfig | Mapping[str, Any], layers: Iterable[Any], num_envs: int) -> None:
        try:
            self.config = make_config(ProfileCurriculumConfig, config, {})
        except (TypeError, ValueError) as error:
            raise ConfigError(f"profile curriculum: {error}") from None
        self.layers = list(layers)
        self.window = self.config.window or num_envs
        self.num_envs = num_envs
        self.level = self.config.start
        self.finished = 0
        self.went_well = 0
        self._apply()

    def _apply(self) -> None:
        for layer in self.layers:
            layer.set_profile_level(self.level)

    def update(self, terminated: np.ndarray, truncated: np.ndarray, info: dict[str, Any]) -> None:
        """Count this step's finished episodes; decide when a window is full; report the level."""
        finished, well = episodes_that_went_well(terminated, truncated, info)
        self.finished += int(finished.sum())
        self.went_well += int(well.sum())
        if self.finished >= self.window:
            level = next_profile_level(self.level, self.went_well, self.finished, self.config)
            self.finished = self.went_well = 0
            if level != self.level:
                self.level = level
                self._apply()
        info["profile_level"] = np.full(self.num_envs, self.level)

    def get_state(self) -> dict[str, Any]:
        return {"level": self.level, "finished": self.finished, "went_well": self.went_well}

    def set_state(self, state: Mapping[str, Any]) -> None:
        self.level = float(state["level"])
        self.finished, self.went_well = int(state["finished"]), int(state["went_well"])
        self._apply()
