"""Where each named observation group sits in a run's actor and critic input, and how two runs' columns match.

A task names its groups (``obs_groups`` / ``privileged_obs_groups``: name -> slice); the actor reads the policy
observation, the critic the policy observation followed by the privileged one (the task's groups, then any
columns a sim-to-real stack appends: ``privileged_critic``). A legged task's ``critic_only_groups`` moves
policy groups to the end of its privileged ones, so the run that a checkpoint came from may have had
another layout: :func:`saved_layout` rebuilds it from the checkpoint's config, and :func:`match_columns`
says which old column each new one is (:mod:`trainers.ppo.transplant` moves the weights).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import gymnasium as gym
import numpy as np

from ..common.envs import env_groups

__all__ = ["ColumnMatch", "Layout", "match_columns", "run_layout", "saved_layout"]


@dataclass(frozen=True)
class Layout:
    """A run's groups: ``policy`` (columns of the actor's input, ``obs`` wide), ``privileged`` (the task's, columns
    of the privileged observation) and ``critic``, the critic input's width (``None``: the critic reads the
    policy observation)."""

    policy: dict[str, slice]
    privileged: dict[str, slice]
    obs: int
    critic: int | None

    def critic_names(self) -> list[tuple[str, int]]:
        """One name per critic-input column: ``(group, entry)``; a column after the task's privileged groups (a
        sim-to-real stack's) ``("<appended>", its index among those)``, any other ``("<unnamed>", column)``."""
        names = _names(self.policy, self.obs, "<policy>")
        if self.critic is None:
            return names
        own = max((s.stop for s in self.privileged.values()), default=0)
        privileged = _names(self.privileged, own, "<unnamed>")
        return names + privileged + [("<appended>", i) for i in range(self.critic - self.obs - own)]


def _names(groups: dict[str, slice], width: int, unnamed: str) -> list[tuple[str, int]]:
    names: list[tuple[str, int]] = [(unnamed, i) for i in range(width)]
    for name, cols in groups.items():
        for k, c in enumerate(range(cols.start, cols.stop)):
            names[c] = (name, k)
    return names


def run_layout(env: gym.vector.VectorEnv) -> Layout | None:
    """This run's layout, read from its env; ``None`` for a task without named policy groups."""
    policy, privileged = env_groups(env)
    if not policy:
        return None
    space = (getattr(env, "privileged_observation_space", None)
             or getattr(env.unwrapped, "privileged_observation_space", None))
    obs = int(env.single_observation_space.shape[-1])
    return Layout(policy, privileged, obs, None if space is None else obs + int(space.shape[-1]))


def saved_layout(env: gym.vector.VectorEnv, saved_config: dict, saved_dims: dict) -> Layout | None:
    """The layout of the run a checkpoint (its ``config``, ``dims``) came from, on ``env``'s task: its groups as this
    task lays them with that run's ``critic_only_groups`` (its ``env_kwargs``', else the task's default), each
    as wide as in this run. ``None`` where the task cannot say (it has no ``observation_groups``); ``ValueError``
    where the widths do not add up to the checkpoint's."""
    owner = getattr(env.unwrapped, "task", None)
    mine = run_layout(env)
    config = getattr(owner, "config", None)
    if mine is None or not hasattr(owner, "observation_groups") or not dataclasses.is_dataclass(config):
        return None
    fields = {f.name: f for f in dataclasses.fields(config)}
    if "critic_only_groups" not in fields:
        return None
    moved = (saved_config.get("env_kwargs") or {}).get("critic_only_groups", fields["critic_only_groups"].default)
    policy, privileged = owner.observation_groups(dataclasses.replace(config, critic_only_groups=tuple(moved or ())))
    width = {**{n: s.stop - s.start for n, s in mine.privileged.items()},
             **{n: s.stop - s.start for n, s in mine.policy.items()}}
    unknown = [g.name for g in (*policy, *privileged) if g.name not in width]
    if unknown:
        raise ValueError(f"its groups {unknown} are in neither of this run's observations")
    old_policy, old_privileged = _laid(policy, width), _laid(privileged, width)
    obs = max((s.stop for s in old_policy.values()), default=0)
    if obs != int(saved_dims["obs"]):
        raise ValueError(f"its groups {list(old_policy)} laid end to end are {obs} columns, its actor read "
                         f"{saved_dims['obs']} (another config changed its observation)")
    critic = saved_dims.get("privileged")
    return Layout(old_policy, old_privileged, obs, None if critic is None else int(critic))


def _laid(groups, width: dict[str, int]) -> dict[str, slice]:
    out, at = {}, 0
    for g in groups:
        out[g.name] = slice(at, at + width[g.name])
        at += width[g.name]
    return out


@dataclass(frozen=True)
class ColumnMatch:
    """Which old column each new one is: ``obs_src`` per observation column, ``estimate_src`` per estimate column
    (``-1``: the old actor did not read it), ``critic_src`` per critic-input column (``None``: the new critic input
    is not a permutation of the old one); ``moved``: the groups the old actor read that the new one estimates."""

    obs_src: np.ndarray
    estimate_src: np.ndarray
    critic_src: np.ndarray | None
    moved: tuple[str, ...]


def match_columns(old: Layout, new: Layout, targets: tuple[str, ...], sizes: tuple[int, ...]) -> ColumnMatch:
    """Match ``new``'s columns (an actor reading ``new.policy`` then the estimate of ``targets``, each ``sizes`` wide)
    to ``old``'s by group name; ``ValueError`` (one line, what to do) when the new observation is not the old one
    less groups the estimator estimates."""
    extra = [g for g in new.policy if g not in old.policy]
    if extra:
        raise ValueError(f"this run's actor reads {extra}, which that run's did not; keep its observation "
                         f"(env_kwargs.critic_only_groups) as that run's, less the estimator's targets")
    moved = tuple(g for g in old.policy if g not in new.policy)
    missing = [g for g in moved if g not in targets]
    if missing:
        raise ValueError(f"that run's actor reads {missing}, which this run's neither reads nor estimates; add them "
                         f"to policy.estimator.targets or keep them in the actor's observation")
    obs_src = np.full(new.obs, -1, np.int64)
    for name, cols in new.policy.items():
        src = old.policy[name]
        if src.stop - src.start != cols.stop - cols.start:
            raise ValueError(f"group {name!r} is {src.stop - src.start} wide there, {cols.stop - cols.start} here")
        obs_src[cols] = np.arange(src.start, src.stop)
    if (obs_src < 0).any():
        raise ValueError(f"this run's observation has columns outside its named groups {list(new.policy)}")
    estimate_src: list[int] = []
    for name, size in zip(targets, sizes):
        src = old.policy.get(name)
        if src is not None and src.stop - src.start != size:
            raise ValueError(f"group {name!r} is {src.stop - src.start} wide there, {size} here")
        estimate_src += [-1] * size if src is None else list(range(src.start, src.stop))
    return ColumnMatch(obs_src, np.array(estimate_src, np.int64), _permutation(old, new), moved)


def _permutation(old: Layout, new: Layout) -> np.ndarray | None:
    """The old critic-input column of each new one, when the new input is the old one's columns in another order."""
    before, after = old.critic_names(), new.critic_names()
    if len(set(before)) != len(before) or sorted(before) != sorted(after):
        return None
    where = {name: i for i, name in enumerate(before)}
    return np.array([where[name] for name in after], np.int64)
