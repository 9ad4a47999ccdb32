"""What every sim-to-real wrapper shares: configs, episode boundaries, RNG streams.

Episode boundaries. A wrapper keeps per-env state (a bias, a delay line, a held
packet) that must restart with each episode, so after every ``reset`` and
``step`` it computes two ``(N,)`` masks from the inner env's output:

* ``started``: rows whose returned observation is the first of an episode.
  After ``reset()`` every row (or ``options["reset_mask"]``'s rows); after a
  step in SAME_STEP mode the rows with ``terminated | truncated`` (reset within
  that step); in NEXT_STEP mode the rows that finished on the previous step
  (this step was their reset step); in DISABLED mode none.
* ``final``: SAME_STEP rows whose ``info["final_obs"]`` holds the last
  observation of the episode that just ended. Observation wrappers perturb it
  as the continuation of the old episode (old bias, old delay line, old
  channel) before restarting the row's state for the new one.

Seeding. Each wrapper class draws from its own per-env stream,
``seed_streams(env.unwrapped.seeds, stream=stream_id(SECTION))``, (re)seeded when
``reset(seed=...)`` is given and on the first reset, so env ``i`` of a batch
seeded ``s`` sees exactly the perturbations of a single env seeded ``s + i``,
whatever ``N`` and the thread count. The stream comes from the wrapper's name, its
profile section (:func:`unilab_envs.core.rng.stream_id`: the sections recorded before
keep their tags; a user's wrapper without a ``SECTION`` is named by its class).

Family. All wrappers subclass ``gymnasium.vector.VectorWrapper``: Gymnasium's
``VectorObservationWrapper`` refuses SAME_STEP envs (it cannot see
``final_obs``) and ``VectorActionWrapper`` has no hook after the step, and
these wrappers need both.

Outputs. Observation wrappers write into their own ``(N, O)`` buffers (never
into the inner env's arrays) and hand out copies when the base env was built
with ``copy=True`` (the default). The critic's ``info["privileged_obs"]`` is
left exact: the wrappers perturb what the policy sees.
"""

from __future__ import annotations

import dataclasses
import types
from typing import Any, Callable, Mapping, TypeVar

import numba as nb
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv, VectorWrapper

from unilab_envs.core.actions import validate_actions
from unilab_envs.core.config import build_config, require, require_range
from unilab_envs.core.rng import seed_streams, stream_id
from unilab_envs.core.state import StateError, copy_attributes, restore_attributes

T = TypeVar("T")

__all__ = ["Sim2RealWrapper", "episode_starts", "row_kernel", "make_config", "group_columns", "frozen_mapping", "as_range", "require", "require_range"]

#: batches at least this large run the per-env kernels on Numba's threads
PARALLEL_MIN_ENVS = 2048


# --- kernels -------------------------------------------------------------------


class RowKernel:
    """A per-env kernel (its first argument is ``(N, ...)``), compiled twice.

    The work per env is a few draws, so below :data:`PARALLEL_MIN_ENVS` envs
    waking Numba's threads costs more than it saves: small batches run the
    serial build, large ones the ``prange``-parallel build. Either way each
    env only touches its own rows and RNG stream, so results are identical.
    """

    def __init__(self, fn: Callable) -> None:
        self.serial = nb.njit(cache=True)(fn)
        twin = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + "_parallel", fn.__defaults__, fn.__closure__)
        twin.__qualname__ = fn.__qualname__ + "_parallel"  # its own cache file
        self.parallel = nb.njit(parallel=True, cache=True)(twin)
        self.__doc__, self.__name__ = fn.__doc__, fn.__name__

    def __call__(self, *args):
        kernel = self.parallel if args[0].shape[0] >= PARALLEL_MIN_ENVS else self.serial
        return kernel(*args)


def row_kernel(fn: Callable) -> RowKernel:
    """Decorator: see :class:`RowKernel`."""
    return RowKernel(fn)


# --- configs -------------------------------------------------------------------


def make_config(cls: type[T], config: T | Mapping[str, Any] | None, overrides: Mapping[str, Any]) -> T:
    """A validated ``cls`` from a ready config, a dict (YAML) and/or keywords.

    Unknown keys raise ``TypeError`` (with a suggestion), bad values
    ``ValueError``; a config instance is never mutated.
    """
    if isinstance(config, cls):
        values = {f.name: getattr(config, f.name) for f in dataclasses.fields(cls)}
    elif config is None:
        values = {}
    elif isinstance(config, Mapping):
        values = dict(config)
    else:
        raise TypeError(f"config must be a {cls.__name__}, a dict or None, got {type(config).__name__}")
    values.update(overrides)
    return build_config(cls, values, kind=f"{cls.__name__} key")


def frozen_mapping(value: Any, name: str) -> types.MappingProxyType:
    """A read-only ``{str: float}`` copy of ``value`` (a dict from code or YAML)."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping of observation group -> value, got {type(value).__name__}")
    return types.MappingProxyType({str(k): float(v) for k, v in value.items()})


def as_range(value: Any, name: str, *, integer: bool = False) -> tuple | None:
    """``None``, a scalar ``x`` (as ``(x, x)``) or a ``(low, high)`` pair, as a tuple."""
    if value is None:
        return None
    if np.isscalar(value):
        value = (value, value)
    value = tuple(value)
    require(len(value) == 2, f"{name} must be a number or a (low, high) pair, got {value!r}")
    cast = int if integer else float
    if integer:
        require(all(float(v) == int(v) for v in value), f"{name} must be whole numbers, got {value!r}")
    return (cast(value[0]), cast(value[1]))


def group_columns(env: VectorEnv, groups: Mapping[str, Any] | tuple[str, ...], what: str) -> dict[str, np.ndarray]:
    """Observation columns of each named group; an unknown group raises ``ValueError``."""
    known: dict[str, slice] | None = getattr(env.unwrapped, "obs_groups", None)
    if known is None:
        raise ValueError(f"{what} needs a task that names its observation groups (env.unwrapped.obs_groups); {type(env.unwrapped).__name__} has none")
    size = int(np.prod(env.single_observation_space.shape))
    out = {}
    for name in groups:
        if name not in known:
            raise ValueError(f"{what}: unknown observation group {name!r}; this task's groups are {list(known)}")
        out[name] = np.arange(size, dtype=np.int64)[known[name]]
    return out


def policy_read(env: VectorEnv, scales: Mapping[str, Any]) -> dict[str, Any]:
    """``scales`` without the groups the task's config moved from the policy to the critic (a legged task's
    ``critic_only_groups``: a profile's noise on ``linvel`` means nothing to a policy without it, and the
    critic reads the truth); any other name is left in, for :func:`group_columns` to refuse if unknown."""
    config = getattr(getattr(env.unwrapped, "task", None), "config", None)
    moved = set(getattr(config, "critic_only_groups", ()) or ())
    return {name: value for name, value in scales.items() if name not in moved}


# --- episode boundaries ---------------------------------------------------------


def find_in_layers(env, name: str, accept: Callable[[Any], bool] = lambda value: value is not None) -> Any:
    """The first ``accept``-ed attribute ``name`` down ``env``'s wrapper chain (``env``, ``env.env``, ...), else
    ``None``: what a wrapper of the stack holds (a sim-to-real stack's ``critic`` or clean observation ``tap``)."""
    layer = env
    while layer is not None:
        value = getattr(layer, name, None)
        if accept(value):
            return value
        layer = getattr(layer, "env", None)
    return None


def episode_starts(mode: AutoresetMode, terminated, truncated, pending: np.ndarray, none: np.ndarray) -> np.ndarray:
    """The ``started`` mask of a step (module docstring): SAME_STEP the rows that ended, NEXT_STEP
    the rows that ended on the previous step (``pending``, updated in place), DISABLED ``none``."""
    if mode is AutoresetMode.SAME_STEP:
        return np.logical_or(terminated, truncated)
    if mode is AutoresetMode.NEXT_STEP:
        started = pending.copy()
        np.logical_or(terminated, truncated, out=pending)
        return started
    return none


# --- the base wrapper --------------------------------------------------------


class Sim2RealWrapper(VectorWrapper):
    """Episode tracking, seeding and buffers for one wrapper (see module docstring).

    Subclasses set ``SECTION`` (their profile section: it names their RNG stream) and override
    the hooks:

    * ``_actions(actions) -> actions`` before the inner step (action path);
    * ``_observe(obs, info, touch, started, final) -> obs`` after a reset
      (``final`` all False) or a step (``touch`` all True), on the observation
      path; ``touch`` marks the rows whose observation is new.
    """

    SECTION: str | None = None  # the profile section; None: the class name names the stream
    #: per-env attributes that carry over between steps (delay lines, biases, channel
    #: states, draws, timers); saved by :meth:`get_state` with the base's RNG and
    #: episode bookkeeping. Names a configuration did not create are skipped.
    STATE: tuple[str, ...] = ()
    _BASE_STATE = ("_rng", "_seeded", "_pending")

    def __init__(self, env: VectorEnv) -> None:
        if not isinstance(env, VectorEnv):
            raise TypeError(
                f"{type(self).__name__} wraps a gymnasium.vector.VectorEnv, got {type(env).__name__}; for a single env use "
                "gym.make_vec(id, num_envs=1) and, if a gymnasium.Env is needed, wrappers.SingleEnv(...) around the result"
            )
        super().__init__(env)
        n = self.num_envs
        self.autoreset_mode = AutoresetMode(env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP))
        self.dt = float(getattr(env.unwrapped, "dt", 0.02))
        self._copy = bool(getattr(env.unwrapped, "copy", True))
        self._rng = np.zeros(n, np.uint64)
        self._seeded = False
        self._pending = np.zeros(n, bool)  # NEXT_STEP: rows that finished last step
        self._all = np.ones(n, bool)
        self._none = np.zeros(n, bool)
        self._started = np.zeros(n, bool)
        self._action_shape = (n, *self.single_action_space.shape)
        self.profile_level = 1.0

    # --- magnitude (the whole-profile curriculum) ------------------------------
    def set_profile_level(self, level: float) -> None:
        """Scale this wrapper's perturbation to ``level`` (0: none, 1: as configured).

        What scales is each wrapper's magnitude (:meth:`_apply_profile_level`): noise
        scales and loss rates are multiplied by ``level``; delays, gains, DR ranges and
        push speeds move from their unperturbed value towards the configured range. Draws
        made once per episode (delays, gains, DR) take the new level at their next episode.
        Used by the profile's ``curriculum`` (:mod:`wrappers.curriculum`).
        """
        level = float(level)
        require(np.isfinite(level) and 0.0 <= level <= 1.0, f"profile level must be in [0, 1], got {level}")
        self.profile_level = level
        self._apply_profile_level(level)

    def _apply_profile_level(self, level: float) -> None:
        """Rescale the derived magnitudes to ``level``; every section wrapper overrides this."""
        raise NotImplementedError(f"{type(self).__name__} cannot scale its magnitude (no _apply_profile_level)")

    # --- seeding -----------------------------------------------------------
    def _episode_seeds(self, seed: int | None) -> np.ndarray:
        """The base env's per-env seeds (``seed + i`` for an env that has none)."""
        seeds = getattr(self.env.unwrapped, "seeds", None)
        if seeds is None or len(seeds) != self.num_envs:
            seeds = (0 if seed is None else int(seed)) + np.arange(self.num_envs, dtype=np.int64)
        return np.asarray(seeds, dtype=np.int64)

    @property
    def stream(self) -> int:
        """This wrapper's RNG stream tag, from its name (:func:`~unilab_envs.core.rng.stream_id`)."""
        return stream_id(self.SECTION or type(self).__name__)

    def _seed_streams(self, seed: int | None) -> None:
        self._rng[:] = seed_streams(self._episode_seeds(seed), stream=self.stream)
        self._seeded = True

    # --- gymnasium API -------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        if seed is not None or not self._seeded:
            self._seed_streams(seed)
        mask = (options or {}).get("reset_mask")
        started = self._all if mask is None else np.asarray(mask, dtype=bool)
        self._pending &= ~started
        self._started = started
        obs = self._observe(obs, info, started, started, self._none)
        self._on_start(started)
        return obs, info

    def step(self, actions):
        actions = self._actions(actions)
        obs, reward, terminated, truncated, info = self.env.step(actions)
        started = episode_starts(self.autoreset_mode, terminated, truncated, self._pending, self._none)
        final = started if self.autoreset_mode is AutoresetMode.SAME_STEP else self._none
        self._started = started
        self._after_step(info)
        obs = self._observe(obs, info, self._all, started, final)
        if started.any():
            self._on_start(started)
        return obs, reward, terminated, truncated, info

    # --- state (exact resume) ---------------------------------------------
    def _state_names(self) -> tuple[str, ...]:
        return self._BASE_STATE + tuple(name for name in self.STATE if hasattr(self, name))

    def get_state(self) -> dict[str, Any]:
        """This wrapper's per-env state and, under ``"inner"``, the wrapped env's.

        The inner env must offer ``get_state`` too (UniLab envs and wrappers do).
        """
        inner = getattr(self.env, "get_state", None)
        if inner is None:
            raise StateError(f"{type(self).__name__} wraps {type(self.env).__name__}, which has no get_state(); "
                             "only stacks of UniLab envs and wrappers can be saved")
        return {"wrapper": type(self).__name__, "own": copy_attributes(self, self._state_names()), "inner": inner(),
                "profile_level": self.profile_level}

    def set_state(self, state: dict[str, Any]) -> None:
        """Load a :meth:`get_state` result into the same wrapper stack."""
        if state.get("wrapper") != type(self).__name__:
            raise StateError(f"the saved state is of wrapper {state.get('wrapper')!r} where this stack has "
                             f"{type(self).__name__}: build the same wrapper stack (sim2real profile) as the saved run")
        self.env.set_state(state["inner"])
        restore_attributes(self, self._state_names(), state["own"], f"{type(self).__name__} state")
        level = float(state.get("profile_level", 1.0))  # states saved before the curriculum: the whole profile
        if level != self.profile_level:
            self.set_profile_level(level)

    # --- hooks -----------------------------------------------------------
    def _actions(self, actions):
        return actions

    def _after_step(self, info: dict[str, Any]) -> None:
        """After the inner step, before observations (e.g. add to ``info``)."""

    def _observe(self, obs, info, touch, started, final):
        return obs

    def critic_groups(self) -> dict[str, np.ndarray]:
        """This wrapper's perturbation as named ``(N, width)`` arrays of each env's current values.

        What an asymmetric critic may know and the policy never sees (the profile's
        ``privileged_critic``, :mod:`wrappers.privileged`): draws of the episode (delays,
        gains, frictions), biases, the last push. Memoryless noise has nothing to tell: ``{}``.
        """
        return {}

    def _on_start(self, started: np.ndarray) -> None:
        """Redraw per-episode state of ``started`` rows, after ``_observe``.

        Observation kernels restart their own rows inside ``_observe`` (they
        must finish ``final`` rows with the old state first); this hook is
        for the action and physics wrappers.
        """

    # --- helpers -----------------------------------------------------------
    def _check_actions(self, actions) -> np.ndarray:
        """Float32 ``(N, A)`` actions, or the error the base env would raise, now."""
        return validate_actions(actions, self._action_shape)

    def _final_in(self, info: dict[str, Any], obs: np.ndarray) -> np.ndarray:
        final = info.get("final_obs")
        return obs if final is None else np.ascontiguousarray(final, dtype=np.float32)

    def _hand_out(self, array: np.ndarray) -> np.ndarray:
        return array.copy() if self._copy else array
