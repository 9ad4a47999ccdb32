"""Observation history: the policy sees the last ``length`` frames of some observation groups.

A camera-seen object pose arrives late and noisy; a policy that sees a few past frames of
it can filter it (and estimate the delay), where one that sees only the current frame
cannot. The history is part of the policy's observation, like the groups themselves: a
training config asks for it (``obs_history: {groups: [object_pos, object_quat], length: 4}``),
training wraps the env in :class:`wrappers.history.ObservationHistory` outside the whole
sim-to-real stack (the frames are what the policy received: noisy, delayed, held), and the
deploy spec carries it (its ``history`` section) so a robot program rebuilds it with
:class:`HistoryStack` here from the observations it feeds the policy.

Layout (one rule, :func:`history_columns`, shared by the wrapper, the deploy spec and this
runtime). The policy's input is the current observation ``[0, size)`` as the task lays it
out, followed by ``length - 1`` blocks, one per step back ``k = 1 .. length - 1``; block
``k`` holds, for each history group in config order, that group's values of the
observation ``k`` control steps earlier, as column group ``"<group>@<k>"``::

    [ obs_t | g1_{t-1} g2_{t-1} | g1_{t-2} g2_{t-2} | ... ]

Episode boundaries: at an episode's first observation every past frame is that
observation (no frame leaks from the previous episode, none is zero). ``length: 1`` is the
current frame alone (no extra columns).

NumPy only (no torch, no Numba), like the rest of :mod:`unilab_robot.deploy`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from unilab_robot.config import ConfigError, check_keys, require
from unilab_robot.deploy.sections import DeploySpec, History, HistoryColumn, SpecError

__all__ = ["MAX_LENGTH", "HistoryConfig", "HistoryStack", "history_config", "history_columns", "history_section"]

#: the longest history a config may ask for (control steps, the current one included)
MAX_LENGTH = 100


@dataclass(frozen=True)
class HistoryConfig:
    """Which observation groups the policy sees a history of, and how many frames.

    Attributes:
        groups: the task's observation group names (``env.unwrapped.obs_groups``), in the
            order their past frames are laid out.
        length: frames per group the policy sees, the current one included (``>= 1``;
            ``4``: the current frame and the 3 before it).
    """

    groups: tuple[str, ...] = ()
    length: int = 0

    def __post_init__(self) -> None:
        groups = (self.groups,) if isinstance(self.groups, str) else self.groups
        require(isinstance(groups, (list, tuple)) and all(isinstance(g, str) and g for g in groups),
                f"obs_history.groups must be a list of observation group names, got {self.groups!r}")
        object.__setattr__(self, "groups", tuple(groups))
        require(len(self.groups) > 0, "obs_history.groups must name at least one observation group "
                                      "(e.g. obs_history: {groups: [object_pos], length: 4})")
        repeated = sorted({g for g in self.groups if self.groups.count(g) > 1})
        require(not repeated, f"obs_history.groups names {repeated} more than once")
        require(isinstance(self.length, (int, np.integer)) and not isinstance(self.length, bool)
                and 1 <= self.length <= MAX_LENGTH,
                f"obs_history.length must be a whole number of frames in [1, {MAX_LENGTH}] (the current one "
                f"included: 4 is the current frame and the 3 before it), got {self.length!r}")
        object.__setattr__(self, "length", int(self.length))

    def to_dict(self) -> dict[str, Any]:
        return {"groups": list(self.groups), "length": self.length}


def history_config(value: Any) -> HistoryConfig | None:
    """A :class:`HistoryConfig` from a config instance, a mapping (``{groups: [...], length: K}``) or ``None``."""
    if value is None or isinstance(value, HistoryConfig):
        return value
    if not isinstance(value, Mapping):
        raise ConfigError(f"obs_history must be a mapping {{groups: [...], length: K}} or null, got {value!r}")
    check_keys(value, ("groups", "length"), "obs_history key", "obs_history.")
    return HistoryConfig(**dict(value))


def _span(value: Any) -> tuple[int, int]:
    """``(start, stop)`` of a group given as a slice or a pair."""
    if isinstance(value, slice):
        return int(value.start or 0), int(value.stop)
    return int(value[0]), int(value[1])


def history_columns(obs_groups: Mapping[str, Any], obs_size: int, config: HistoryConfig) -> tuple[HistoryColumn, ...]:
    """The history's column groups after the ``obs_size`` columns of the observation (module docstring).

    ``obs_groups``: the observation's groups, name -> slice or ``(start, stop)``. An unknown
    group raises :class:`~unilab_robot.config.ConfigError` naming the task's groups.
    """
    unknown = [g for g in config.groups if g not in obs_groups]
    if unknown:
        raise ConfigError(f"obs_history: unknown observation group(s) {unknown}; this task's groups are "
                          f"{list(obs_groups)}")
    spans = {g: _span(obs_groups[g]) for g in config.groups}
    columns, at = [], int(obs_size)
    for lag in range(1, config.length):
        for g in config.groups:
            start, stop = spans[g]
            columns.append(HistoryColumn(name=f"{g}@{lag}", group=g, lag=lag, start=at, stop=at + stop - start))
            at += stop - start
    return tuple(columns)


def history_section(obs_groups: Mapping[str, Any], obs_size: int, config: HistoryConfig) -> History:
    """The deploy spec's ``history`` section for an observation with ``obs_groups``."""
    columns = history_columns(obs_groups, obs_size, config)
    return History(length=config.length, groups=config.groups, size=columns[-1].stop if columns else int(obs_size),
                   columns=columns)


class HistoryStack:
    """One robot's observation history: raw observations in, the policy's stacked input out.

    ::

        history = HistoryStack.from_spec(spec)   # None when the policy has no history
        history.reset()                          # at each episode start
        policy_input = history(obs)              # every control step, obs as PolicyIO builds it

    ``obs`` is the observation the policy would see without a history (after whatever the
    link did to it); the result is float32 ``(spec.history.size,)``.
    """

    def __init__(self, obs_groups: Mapping[str, Any], obs_size: int, config: HistoryConfig | Mapping[str, Any]) -> None:
        self.config = history_config(config)
        self.obs_size = int(obs_size)
        self.columns = history_columns(obs_groups, obs_size, self.config)
        self.size = self.columns[-1].stop if self.columns else self.obs_size
        index = np.arange(self.obs_size)
        self._source = np.concatenate([index[slice(*_span(obs_groups[g]))] for g in self.config.groups])
        self._frames = np.zeros((self.config.length - 1, self._source.size), np.float32)  # lag 1, 2, ...
        self._fresh = True

    @classmethod
    def from_spec(cls, spec: DeploySpec) -> "HistoryStack | None":
        """The history of ``spec``'s policy, or ``None`` when its spec has no ``history`` section."""
        h = spec.history
        if h is None:
            return None
        groups = {g.name: (g.start, g.stop) for g in spec.observation.groups}
        return cls(groups, spec.observation.size, HistoryConfig(groups=h.groups, length=h.length))

    def reset(self) -> None:
        """The next observation starts an episode: it fills every past frame."""
        self._fresh = True

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs, dtype=np.float32).reshape(-1)
        if obs.shape[0] != self.obs_size:
            raise SpecError(f"the observation has {obs.shape[0]} entries; the history expects {self.obs_size}")
        current = obs[self._source]
        if self._fresh:
            self._frames[:] = current
            self._fresh = False
        out = np.concatenate([obs, self._frames.reshape(-1)])
        if len(self._frames):
            self._frames[1:] = self._frames[:-1].copy()
            self._frames[0] = current
        return out
