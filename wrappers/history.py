"""``ObservationHistory``: the policy sees the last ``length`` frames of some observation groups.

Part of the policy's observation definition, not an imperfection: it wraps the env
*outside* the whole sim-to-real stack (``trainers.common.envs.make_vec_env`` puts it
there for a run's ``obs_history``), so the past frames are the observations the policy
actually received: noisy, delayed, held over lost packets::

    env = ObservationHistory(Sim2Real(env, "ur5_grasp_real"),
                             groups=("object_pos", "object_quat"), length=4)

The layout is :func:`unilab_robot.deploy.history.history_columns` (the one rule the deploy
spec and the robot-side :class:`~unilab_robot.deploy.history.HistoryStack` share): the
observation as it was, then one block per step back ``k = 1 .. length - 1`` holding each
history group as it was ``k`` control steps earlier, named ``"<group>@<k>"`` in
:attr:`ObservationHistory.obs_groups`.

Episode boundaries (``wrappers._base``): an episode's first observation fills every past
frame of its row; in SAME_STEP mode ``info["final_obs"]`` is stacked with the ended
episode's frames before the row restarts. ``info["privileged_obs"]`` (the critic's) passes
unchanged. Each env keeps a ring buffer ``(N, length, width)`` of its last frames.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import gymnasium as gym
import numba as nb
import numpy as np
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space

from unilab_envs.config import ConfigError
from unilab_robot.deploy.history import HistoryConfig, history_config, history_columns
from wrappers._base import Sim2RealWrapper, row_kernel


@nb.njit(inline="always", cache=True)
def _push_stack(i, src, dst, buf, head, cols, fill):
    """Push row ``i``'s frame of ``src`` into its ring (into every slot when ``fill``); stack into ``dst``."""
    size, width, base = buf.shape[1], cols.shape[0], src.shape[1]
    h = (head[i] + 1) % size
    head[i] = h
    for s in range(size):
        if fill or s == h:
            for c in range(width):
                buf[i, s, c] = src[i, cols[c]]
    dst[i, :base] = src[i, :]
    at = base
    for k in range(1, size):
        slot = (h - k) % size
        for c in range(width):
            dst[i, at + c] = buf[i, slot, c]
        at += width


@row_kernel
def _stack_obs(obs, out, final_in, final_out, touch, started, final, buf, head, cols):
    for i in nb.prange(obs.shape[0]):
        if not touch[i]:
            continue
        if final[i]:  # the ended episode's last frame, stacked with its own past
            _push_stack(i, final_in, final_out, buf, head, cols, False)
        _push_stack(i, obs, out, buf, head, cols, started[i])


class ObservationHistory(Sim2RealWrapper):
    """Appends the past ``length - 1`` frames of ``groups`` to the observation (see module docstring).

    ``ObservationHistory(env, groups=("object_pos",), length=4)`` or ``config=`` a
    :class:`~unilab_robot.deploy.history.HistoryConfig` or a mapping. ``obs_groups``: the
    base env's groups and the history's (``object_pos@1`` ...); ``history``: the columns
    (:class:`~unilab_robot.deploy.spec.HistoryColumn`).
    """

    STATE = ("_buf", "_head", "_out", "_final_out")

    def __init__(self, env: VectorEnv, config: HistoryConfig | Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(env)
        if config is None:
            config = {}
        if isinstance(config, HistoryConfig):
            config = config.to_dict()
        self.config = cfg = history_config({**config, **kwargs})
        known: dict[str, slice] | None = getattr(env, "obs_groups", None) or getattr(env.unwrapped, "obs_groups", None)
        if not known:
            raise ConfigError(f"obs_history needs a task that names its observation groups (env.unwrapped.obs_groups); "
                              f"{type(env.unwrapped).__name__} has none")
        space = self.env.single_observation_space
        if not isinstance(space, gym.spaces.Box) or len(space.shape) != 1:
            raise ConfigError(f"obs_history stacks flat Box observations, got {space}")
        base = int(space.shape[0])
        self.history = history_columns(known, base, cfg)
        index = np.arange(base, dtype=np.int64)
        self._cols = np.concatenate([index[known[g]] for g in cfg.groups])
        self.obs_groups: dict[str, slice] = {**known, **{c.name: slice(c.start, c.stop) for c in self.history}}
        size = self.history[-1].stop if self.history else base
        repeat = max(cfg.length - 1, 0)
        low = np.concatenate([space.low, np.tile(space.low[self._cols], repeat)]).astype(np.float32)
        high = np.concatenate([space.high, np.tile(space.high[self._cols], repeat)]).astype(np.float32)
        self.single_observation_space = gym.spaces.Box(low, high, (size,), np.float32)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        privileged = getattr(env, "privileged_observation_space", None)
        if privileged is not None:  # the critic's extras pass through (env_dims reads them here)
            self.privileged_observation_space = privileged
        n = self.num_envs
        self._buf = np.zeros((n, cfg.length, self._cols.size), np.float32)
        self._head = np.zeros(n, np.int64)
        self._out = np.zeros((n, size), np.float32)
        self._final_out = np.zeros((n, size), np.float32)

    @property
    def history_sources(self) -> np.ndarray:
        """For each history column (those after the current frame), the current-frame column it
        is a past frame of: ``stacked[:, base + j]`` is ``obs[:, history_sources[j]]`` some steps back."""
        return np.tile(self._cols, max(self.config.length - 1, 0))

    def _seed_streams(self, seed: int | None) -> None:
        self._seeded = True  # nothing random here

    def _observe(self, obs, info, touch, started, final):
        obs = np.ascontiguousarray(obs, dtype=np.float32)
        final_in = self._final_in(info, obs)
        _stack_obs(obs, self._out, final_in, self._final_out, touch, started, final, self._buf, self._head, self._cols)
        if "final_obs" in info and final is not self._none:
            info["final_obs"] = self._hand_out(self._final_out)
        return self._hand_out(self._out)

    def extend_mirror(self, mirror: Any) -> Any:
        """``mirror`` (a task's :class:`~unilab_envs.locomotion.mirror.MirrorMap`) on this stacked observation.

        Each history column mirrors as its group does in the current frame: the column
        ``g@k`` of entry ``j`` takes the value of ``mirror``'s partner of ``j``, ``k`` steps
        back, with its sign. :class:`~unilab_envs.config.ConfigError` when a group's partner
        entries lie in a group without a history (then the mirror image has no such column).
        """
        base = int(self.env.single_observation_space.shape[0])
        perm, sign = np.asarray(mirror.obs_perm), np.asarray(mirror.obs_sign)
        if perm.shape != (base,):
            raise ConfigError(f"the mirror map covers {perm.shape[0]} observation entries, the observation has {base}")
        where = np.full((self.config.length, base), -1, np.int64)  # (lag, base column) -> stacked column
        where[0] = np.arange(base)
        known = self.obs_groups
        for c in self.history:
            where[c.lag, np.arange(base)[known[c.group]]] = np.arange(c.start, c.stop)
        size = self._out.shape[1]
        out_perm = np.concatenate([perm, np.zeros(size - base, np.int64)])
        out_sign = np.concatenate([sign, np.ones(size - base)])
        for c in self.history:
            source = np.arange(base)[known[c.group]]
            target = where[c.lag, perm[source]]
            if (target < 0).any():
                partners = sorted({g for g, s in known.items() if "@" not in g
                                   and np.isin(perm[source], np.arange(base)[s]).any()} - set(self.config.groups))
                raise ConfigError(f"algo.symmetry_coef with obs_history: the mirror image of group {c.group!r} reads "
                                  f"group(s) {partners}, which have no history; add them to obs_history.groups")
            out_perm[c.start:c.stop], out_sign[c.start:c.stop] = target, sign[source]
        return dataclasses.replace(mirror, obs_perm=out_perm, obs_sign=out_sign)

    def __repr__(self) -> str:
        return f"<ObservationHistory{list(self.config.groups)} x {self.config.length}, {self.env}>"


def wrap_history(env: VectorEnv, obs_history: HistoryConfig | Mapping[str, Any] | None) -> VectorEnv:
    """``ObservationHistory(env, obs_history)``, or ``env`` itself when ``obs_history`` is ``None``."""
    config = history_config(obs_history)
    return env if config is None else ObservationHistory(env, config)
