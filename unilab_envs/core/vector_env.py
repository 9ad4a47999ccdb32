"""``UniLabVectorEnv``: a natively batched Gymnasium ``VectorEnv`` over ``mujoco.batch``.

One step for ``N`` envs (``docs/architecture.md`` describes the whole data path)::

    actions (N, A) -> task.apply_actions (Numba, writes ctrl in place)
                   -> Batch.step(nstep=frame_skip) on the persistent thread pool
                   -> task.compute (one fused Numba prange pass: obs, reward terms,
                      reward, terminated)
                   -> divergence check -> sparse autoreset of finished rows
                   -> (obs, reward, terminated, truncated, info)

Contract:

* ``metadata["autoreset_mode"]`` is the mode this instance runs in: SAME_STEP
  (default; ``info["final_obs"]`` is a dense ``(N, O)`` float32 array and
  ``info["_final_obs"]`` the ``(N,)`` mask of rows that finished; rows outside
  the mask are unspecified), NEXT_STEP (the step after a finished one resets
  that row, ignores its action and returns reward 0) or DISABLED (finished
  rows keep running until ``reset(options={"reset_mask": mask})``).
* ``terminated`` is a failure, ``truncated`` the time limit
  (``max_episode_steps``); they are never merged.
* ``info["reward_terms"][name]`` is each term's weighted ``(N,)`` contribution;
  ``reward`` is their sum.
* ``info["diverged"]`` flags rows whose simulation went unstable (MuJoCo's
  warning counters rose, it raised, or a non-finite observation came out). In
  that step such a row ends as terminated with reward 0 (every term 0) and a
  finite observation (non-finite entries become 0); the other rows are
  untouched. When it restarts follows the autoreset mode: SAME_STEP resets it
  within that step (``final_obs`` holds the last, finite observation),
  NEXT_STEP on the next ``step`` call (reward 0, like any finished row),
  DISABLED only at ``reset(options={"reset_mask": mask})``; until then it keeps
  stepping from the state MuJoCo left it in (MuJoCo resets an unstable row to
  the model's defaults, not to the task's initial state).
* Tasks with a critic-only observation put it in ``info["privileged_obs"]``
  (and ``info["final_privileged_obs"]`` in SAME_STEP), and describe it in
  ``privileged_observation_space``. Both observation spaces are float32 Boxes
  bounded by the largest finite float32 (``OBS_BOUND``): observations are
  always finite.
* Seeding: ``reset(seed=s)`` gives env ``i`` the stream of seed ``s + i``; the
  same seed gives bit-identical trajectories whatever the thread count.
* The first ``reset`` spreads the episode counters uniformly over
  ``[0, max_episode_steps)`` (``spread_episode_starts=True``) so that time-outs
  do not arrive in waves.
* Bad input raises: wrong action shape (``ValueError``), non-float dtype
  (``TypeError``), NaN/inf actions (``ValueError`` naming the rows).
* Order: ``step()`` before the first whole ``reset()`` (or ``set_state``) raises
  ``gymnasium.error.ResetNeeded``, as Gymnasium's ``OrderEnforcing`` does for a
  single env: there is no episode to step yet.
"""

from __future__ import annotations

from typing import Any, Callable

import gymnasium as gym
import mujoco
import mujoco.batch
import numba as nb
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from unilab_envs.core import compile_notice
from unilab_envs.core.actions import validate_actions
from unilab_envs.core.rng import seed_streams, stream_id, uniform
from unilab_envs.core.task import Task
from unilab_envs.core.state import StateError, batch_state, copy_attributes, restore_attributes, restore_batch_state
from unilab_envs.threads import numba_threads, resolve_num_threads

compile_notice.install()  # one line on stderr when the first kernel compiles (a cold Numba cache)

#: The bound of every observation and privileged-observation element: any finite float32.
#: Observations are never inf or NaN (a diverged row's non-finite entries become 0, see the
#: module docstring), so the spaces say so instead of declaring +/-inf.
OBS_BOUND = float(np.finfo(np.float32).max)


def observation_box(size: int) -> gym.spaces.Box:
    """The ``(size,)`` float32 space of finite observations, ``[-OBS_BOUND, OBS_BOUND]``."""
    return gym.spaces.Box(-OBS_BOUND, OBS_BOUND, (size,), np.float32)

#: the env's own per-env bookkeeping that get_state saves besides physics and task
_ENV_STATE = ("_rng", "seeds", "_seeded", "_episode_step", "_pending_reset", "_warning_total", "_obs", "_privileged_obs")


@nb.njit(cache=True)
def _spread_starts(episode_step, rng, max_steps):
    for i in range(episode_step.shape[0]):
        episode_step[i] = np.int64(uniform(rng, i) * max_steps)


def _as_autoreset_mode(mode: AutoresetMode | str) -> AutoresetMode:
    if isinstance(mode, AutoresetMode):
        return mode
    try:
        return AutoresetMode(mode)
    except ValueError:
        valid = ", ".join(m.value for m in AutoresetMode)
        raise ValueError(f"autoreset_mode must be one of {valid}, got {mode!r}") from None


def _episode_seeds(seed: int | list[int] | np.ndarray, num_envs: int) -> np.ndarray:
    if isinstance(seed, (int, np.integer)):
        if seed < 0:
            raise ValueError(f"seed must be non-negative, got {seed}")
        return int(seed) + np.arange(num_envs, dtype=np.int64)
    seeds = np.asarray(seed, dtype=np.int64)
    if seeds.shape != (num_envs,):
        raise ValueError(f"seed must be an int or one int per env ({num_envs}), got shape {seeds.shape}")
    return seeds


class UniLabVectorEnv(VectorEnv):
    """``num_envs`` simulations of one task, stepped together (see module docstring)."""

    metadata = {"render_modes": ["rgb_array"], "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        task_factory: Callable[..., Task],
        num_envs: int,
        *,
        max_episode_steps: int | None,
        render_mode: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
        seed: int | None = None,
        num_threads: int | None = None,
        spread_episode_starts: bool = True,
        copy: bool = True,
        render_width: int = 480,
        render_height: int = 360,
        **task_config: Any,
    ) -> None:
        if not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        if max_episode_steps is not None and max_episode_steps < 1:
            raise ValueError(f"max_episode_steps must be >= 1 or None, got {max_episode_steps}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.task: Task = task_factory(**task_config)
        self.num_envs = int(num_envs)
        self.max_episode_steps = max_episode_steps
        self.render_mode = render_mode
        self.autoreset_mode = _as_autoreset_mode(autoreset_mode)
        self.metadata = {
            **type(self).metadata,
            "autoreset_mode": self.autoreset_mode,
            "render_fps": int(round(1.0 / self.task.control_dt)),
        }
        self.spread_episode_starts = spread_episode_starts
        self.copy = copy
        self.num_threads = resolve_num_threads(num_threads)  # MuJoCo's pool and this env's Numba calls

        self.model: mujoco.MjModel = self.task.model
        self.frame_skip: int = self.task.frame_skip
        self.dt: float = self.task.control_dt
        self.batch = mujoco.batch.Batch(self.model, self.num_envs, nthread=self.num_threads)
        self.task.bind(self.batch, self.num_envs)

        n, o, p, a, k = self.num_envs, self.task.obs_size, self.task.privileged_obs_size, self.task.action_size, len(self.task.reward_names)
        self.single_observation_space = observation_box(o)
        self.single_action_space = gym.spaces.Box(-1.0, 1.0, (a,), np.float32)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, n)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, n)
        self.privileged_observation_space = observation_box(p) if p else None
        self.obs_groups: dict[str, slice] = dict(self.task.obs_groups)
        self.reward_names: tuple[str, ...] = tuple(self.task.reward_names)

        self._obs = np.zeros((n, o), np.float32)
        self._privileged_obs = np.zeros((n, p), np.float32)
        self._final_obs = np.zeros((n, o), np.float32)
        self._final_privileged_obs = np.zeros((n, p), np.float32)
        self._reward = np.zeros(n, np.float32)
        self._reward_terms = np.zeros((n, k), np.float32)
        self._terminated = np.zeros(n, bool)
        self._truncated = np.zeros(n, bool)
        self._diverged = np.zeros(n, bool)
        self._pending_reset = np.zeros(n, bool)  # NEXT_STEP: rows to reset on the next step
        self._warning_total = np.zeros(n, np.int64)
        self._episode_step = np.zeros(n, np.int64)
        self.seeds = np.zeros(n, np.int64)  # per-env episode seeds; wrappers derive their streams from them
        self._rng = np.zeros(n, np.uint64)
        self._seeded = False
        self._warnings = self.batch.warning  # live (N, nwarning, 2): [lastinfo, count]
        self._renderer = None
        self._render_size = (int(render_width), int(render_height))
        self._needs_reset = True  # no episode yet: step() refuses until a whole reset() (or set_state)
        if seed is not None:
            self._seed(seed)

    # --- seeding and reset -------------------------------------------------
    def _seed(self, seed: int | list[int] | np.ndarray) -> None:
        self.seeds = _episode_seeds(seed, self.num_envs)
        self._rng[:] = seed_streams(self.seeds, stream=stream_id("task"))
        self._seeded = True

    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None):
        """Reset all envs (or ``options["reset_mask"]``'s rows); return ``(obs, info)``."""
        with numba_threads(self.num_threads):
            return self._reset(seed, options)

    def _reset(self, seed, options):
        options = dict(options or {})
        reset_mask = options.pop("reset_mask", None)
        if options:
            raise ValueError(f"unknown reset options {sorted(options)}; the only option is 'reset_mask'")
        if seed is not None:
            self._seed(seed)
        elif not self._seeded:
            self._seed(int(np.random.SeedSequence().generate_state(1)[0] % (2**31)))
        if reset_mask is None:
            ids = np.arange(self.num_envs, dtype=np.int32)
        else:
            mask = np.asarray(reset_mask, dtype=bool)
            if mask.shape != (self.num_envs,):
                raise ValueError(f"reset_mask must have shape ({self.num_envs},), got {mask.shape}")
            ids = np.flatnonzero(mask).astype(np.int32)
        self._reset_rows(ids)
        if reset_mask is None and self.spread_episode_starts and self.max_episode_steps:
            spread_rng = seed_streams(self.seeds, stream=stream_id("episode_start_spread"))
            _spread_starts(self._episode_step, spread_rng, self.max_episode_steps)
        self._pending_reset[ids] = False
        if ids.size == self.num_envs:
            self._needs_reset = False
        self._last_done = np.zeros(0, np.int32)
        info = self._info(final=False)
        return self._out(self._obs), info

    def _reset_rows(self, ids: np.ndarray) -> None:
        """Reset rows ``ids`` (sorted int32): keyframe, task randomization, observation."""
        if ids.size == 0:
            return
        self.batch.reset(ids, keyframe=self.task.reset_keyframe, stage=mujoco.mjtStage.mjSTAGE_NONE)
        self.task.reset_envs(ids, self._rng)
        self.batch.forward(ids)
        self._episode_step[ids] = 0
        self._warning_total[ids] = self._warnings[ids, :, 1].sum(axis=1)
        self.task.observe(ids, self._obs, self._privileged_obs)

    # --- step ----------------------------------------------------------------
    def step(self, actions):
        """Advance every env one control step; return ``(obs, reward, terminated, truncated, info)``.

        Raises ``gymnasium.error.ResetNeeded`` before the first whole :meth:`reset`.
        """
        self.require_reset_done()
        with numba_threads(self.num_threads):
            return self._step(actions)

    def _step(self, actions):
        actions = validate_actions(actions, (self.num_envs, self.task.action_size))
        self.task.apply_actions(actions)
        self._diverged[:] = False
        try:
            self.batch.step(nstep=self.frame_skip, stage=self.task.step_stage)
        except mujoco.batch.SimulationError as error:
            self._diverged[error.ids] = True
        self._episode_step += 1
        self.task.compute(self._obs, self._privileged_obs, self._reward_terms, self._reward, self._terminated, self._episode_step, self._rng)
        self._check_divergence()
        if self.max_episode_steps is not None:
            np.greater_equal(self._episode_step, self.max_episode_steps, out=self._truncated)
        else:
            self._truncated[:] = False
        self._truncated &= ~self._terminated

        final = False
        if self.autoreset_mode is AutoresetMode.SAME_STEP:
            done = np.flatnonzero(self._terminated | self._truncated).astype(np.int32)
            if done.size:
                self._final_obs[done] = self._obs[done]
                self._final_privileged_obs[done] = self._privileged_obs[done]
                self._reset_rows(done)
                final = True
            self._last_done = done
        elif self.autoreset_mode is AutoresetMode.NEXT_STEP:
            pending = np.flatnonzero(self._pending_reset).astype(np.int32)
            if pending.size:
                self._reset_rows(pending)
                self._reward[pending] = 0.0
                self._reward_terms[pending] = 0.0
                self._terminated[pending] = False
                self._truncated[pending] = False
            np.logical_or(self._terminated, self._truncated, out=self._pending_reset)
        info = self._info(final=final)
        return (
            self._out(self._obs),
            self._out(self._reward),
            self._out(self._terminated),
            self._out(self._truncated),
            info,
        )

    def require_reset_done(self) -> None:
        """Raise ``gymnasium.error.ResetNeeded`` when no whole :meth:`reset` (nor :meth:`set_state`) came yet."""
        if self._needs_reset:
            raise gym.error.ResetNeeded(
                f"{type(self.task).__name__}: step() was called before reset(); call env.reset(seed=...) first "
                f"(a partial reset_mask reset does not start the other envs' episodes)")

    def _check_divergence(self) -> None:
        """Flag rows whose warning counters rose or whose observation, privileged
        observation or reward is not finite."""
        totals = self._warnings[:, :, 1].sum(axis=1)
        self._diverged |= totals > self._warning_total
        self._warning_total[:] = totals
        self._diverged |= ~np.isfinite(self._obs).all(axis=1)
        self._diverged |= ~np.isfinite(self._reward)
        if self._privileged_obs.shape[1]:
            self._diverged |= ~np.isfinite(self._privileged_obs).all(axis=1)
        if self._diverged.any():
            bad = self._diverged
            np.nan_to_num(self._obs, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
            np.nan_to_num(self._privileged_obs, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
            self._reward[bad] = 0.0
            self._reward_terms[bad] = 0.0
            self._terminated[bad] = True

    def _out(self, array: np.ndarray) -> np.ndarray:
        return array.copy() if self.copy else array

    def _info(self, *, final: bool) -> dict[str, Any]:
        terms = self._out(self._reward_terms)
        info: dict[str, Any] = {
            "reward_terms": {name: terms[:, k] for k, name in enumerate(self.reward_names)},
            "diverged": self._out(self._diverged),
        }
        if self.task.privileged_obs_size:
            info["privileged_obs"] = self._out(self._privileged_obs)
        if final:
            mask = np.zeros(self.num_envs, bool)
            mask[self._last_done] = True
            info["final_obs"] = self._out(self._final_obs)
            info["_final_obs"] = mask
            if self.task.privileged_obs_size:
                info["final_privileged_obs"] = self._out(self._final_privileged_obs)
        info.update({key: self._out(value) for key, value in self.task.task_info().items()})
        return info

    # --- state (exact resume) ----------------------------------------------
    def get_state(self) -> dict[str, Any]:
        """Everything the next steps depend on, as plain arrays (see ``unilab_envs.core.state``).

        ``physics``: every env's integration state rows, MuJoCo warning counters and
        per-env model fields; ``task``: the task's per-env arrays (commands, gait
        phase, last actions...); ``env``: RNG streams, seeds, episode counters,
        pending NEXT_STEP resets and the current observations. Take it between
        steps; :meth:`set_state` on an env of the same task and size continues
        bit-exactly.
        """
        return {
            "task_name": type(self.task).__name__,
            "num_envs": self.num_envs,
            "physics": batch_state(self.batch),
            "task": self.task.get_state(),
            "env": copy_attributes(self, _ENV_STATE),
        }

    def set_state(self, state: dict[str, Any]) -> None:
        """Load a :meth:`get_state` result; raise :class:`StateError` if it is another task's or size's."""
        name, n = state.get("task_name"), state.get("num_envs")
        if name != type(self.task).__name__ or n != self.num_envs:
            raise StateError(f"the saved env state is of task {name} with {n} envs; this env is "
                             f"{type(self.task).__name__} with {self.num_envs} envs: load it into an env made "
                             "like the one that saved it")
        restore_batch_state(self.batch, state["physics"])
        self.task.set_state(state["task"])
        restore_attributes(self, _ENV_STATE, state["env"], f"{type(self).__name__} state")
        self._needs_reset = False  # the saved episodes go on

    # --- extras ------------------------------------------------------------
    @property
    def episode_step(self) -> np.ndarray:
        """``(N,)`` control steps since each env's episode started (read-only view)."""
        view = self._episode_step.view()
        view.flags.writeable = False
        return view

    def render(self):
        """Env 0 as an ``(H, W, 3)`` uint8 frame when ``render_mode="rgb_array"``."""
        if self.render_mode != "rgb_array":
            return None
        if self._renderer is None:
            from unilab_envs.core.render import BatchRenderer

            self._renderer = BatchRenderer(self.batch, self.task.tracking_body, *self._render_size)
        return self._renderer.render(0)

    def close_extras(self, **kwargs: Any) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
