"""Stable-Baselines3 ``VecEnv`` over a batched Gymnasium ``VectorEnv``.

``SB3VecEnv(venv)`` lets SB3 (PPO, SAC, TD3, ``VecNormalize``, ``VecMonitor``, ...)
train on one of our natively batched envs, or on any Gymnasium ``VectorEnv`` whose
``metadata["autoreset_mode"]`` is ``SAME_STEP``, ``NEXT_STEP`` or ``DISABLED``.

The contract SB3 expects, and how each piece is produced
-------------------------------------------------------
``step_wait() -> (obs, rewards, dones, infos)`` with

- ``obs``      ``(N, *obs_shape)`` a fresh copy (SB3 keeps ``_last_obs`` across steps
  while our env rewrites its preallocated buffers in place). For a row that finished
  this step it is already the *reset* observation (SB3's same-step semantics).
- ``rewards``  ``(N,)`` float32 copy; ``dones`` ``(N,)`` bool, ``terminated | truncated``.
- ``infos``    a list of N dicts. Rows where nothing happened share ONE read-only
  empty dict (``EMPTY_INFO``); every row that finished gets its own fresh dict::

      {"terminal_observation": <raw last obs of the episode, (obs_dim,)>,
       "TimeLimit.truncated": truncated and not terminated,
       "episode": {"r": return, "l": length, "t": seconds},   # if episode_stats
       "is_success": bool}                                      # if the env reports it

  exactly what ``DummyVecEnv`` + ``Monitor`` build. ``"TimeLimit.truncated"`` is what
  makes SB3 bootstrap time-outs (PPO adds ``gamma * V(terminal_observation)``; the
  replay buffer stores ``timeouts``). Rows flagged ``info["diverged"]`` also get a
  fresh dict with ``"diverged": True``.

Why a shared empty dict is safe: every mutation SB3 makes is on rows that are done
(``VecNormalize``/``VecTransposeImage``/``VecFrameStack`` rewrite
``terminal_observation``; ``VecMonitor`` copies the dict before adding ``"episode"``),
and those rows always carry a private dict. Any other code that writes into a shared
row gets a ``TypeError`` naming the fix (``fresh_infos=True``), never silent
cross-env corruption.

All array work is vectorized; the only per-env Python is the list of info dicts:
``[EMPTY_INFO] * N`` (about 1 us at N = 1024) plus one dict per finished row.

Autoreset modes
---------------
- ``SAME_STEP`` (our default): the env already returned reset observations for done
  rows and the terminal ones in ``info["final_obs"]`` with mask ``info["_final_obs"]``,
  either a dense ``(N, obs_dim)`` array (ours) or an object array of per-env arrays
  (Gymnasium's ``SyncVectorEnv``). Nothing else to do.
- ``NEXT_STEP`` / ``DISABLED``: the env returns the *terminal* observation for done
  rows and would only reset them on the *next* ``step`` call (ignoring that step's
  action and returning reward 0). SB3 needs the reset observation now, so the adapter
  performs the reset eagerly for the done rows only, with Gymnasium's partial-reset
  API ``venv.reset(options={"reset_mask": dones})``: the terminal rows become
  ``terminal_observation``, the reset rows replace them in ``obs``, and the env's
  pending autoreset is cleared, so the next step steps every row with SB3's action.
  No transition is dropped, duplicated or given a reward of 0. Envs in these modes
  must therefore support ``reset_mask``: Gymnasium's Sync/Async vector envs and ours
  do; an env that silently ignored it would reset every row, so any other NEXT_STEP
  env is refused unless you vouch for it with ``reset_mask_ok=True`` (Gymnasium's
  native ``CartPoleVectorEnv``, for one, ignores it; ``make_sb3_env`` then falls back
  to a SAME_STEP ``SyncVectorEnv``).

Reward terms
------------
When ``info["reward_terms"]`` (term -> ``(N,)``) is present, the adapter accumulates
per-term sums (one vectorized reduction per term); ``pop_reward_terms()`` returns the
per-env-step means since the last call. ``callbacks.RewardTermsCallback`` sends them
to SB3's logger as ``reward/<term>``. Under a safety guard (``info["safety"]``,
``wrappers.Safety``) the adapter also sums its counts; ``pop_safety()`` returns them (and
the share of env steps in the safe mode) and the callback logs ``safety/<count>``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env.base_vec_env import (
    VecEnv,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
    tile_images,
)

__all__ = ["EMPTY_INFO", "SB3VecEnv", "supports_reset_mask"]


class _ReadOnlyInfo(dict):
    """An empty dict that refuses writes; shared by all rows where nothing happened."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(
            "This SB3 info dict is shared by every env row where nothing happened and is "
            "read-only. Copy it before adding keys (info = dict(info)), or build the adapter "
            "with SB3VecEnv(..., fresh_infos=True) to get one private dict per row."
        )

    __setitem__ = __delitem__ = update = setdefault = pop = popitem = clear = _refuse
    __ior__ = _refuse

    def __reduce__(self) -> tuple:
        return (_ReadOnlyInfo, ())


EMPTY_INFO: dict = _ReadOnlyInfo()


def _autoreset_mode(venv: VectorEnv) -> AutoresetMode:
    mode = venv.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
    return mode if isinstance(mode, AutoresetMode) else AutoresetMode(mode)


def supports_reset_mask(venv: VectorEnv) -> bool:
    """Whether ``venv`` is known to honour ``reset(options={"reset_mask": m})``."""
    from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv

    base = venv.unwrapped
    return isinstance(base, (SyncVectorEnv, AsyncVectorEnv)) or bool(getattr(base, "supports_reset_mask", False)) \
        or type(base).__module__.startswith("unilab_envs.")


def _layers(venv: VectorEnv) -> list[Any]:
    """The vector wrapper chain, outermost first, ending at the unwrapped env."""
    chain, env = [], venv
    while True:
        chain.append(env)
        inner = getattr(env, "env", None)
        if inner is None or inner is env or not isinstance(inner, VectorEnv):
            return chain
        env = inner


class SB3VecEnv(VecEnv):
    """SB3 ``VecEnv`` over a batched Gymnasium ``VectorEnv`` (see the module docstring).

    :param venv: the batched env (ours, or any Gymnasium ``VectorEnv``) with Box or
        Discrete single spaces.
    :param episode_stats: track episode return/length (vectorized) and put SB3's
        ``info["episode"]`` on done rows, so SB3 logs ``rollout/ep_rew_mean`` without a
        ``VecMonitor`` (which loops over envs in Python). ``env_is_wrapped(Monitor)``
        reports ``True`` then. Turn off when stacking ``VecMonitor`` yourself.
    :param fresh_infos: give every row its own empty info dict instead of the shared
        read-only one (for third-party code that writes into every info dict).
    :param reset_mask_ok: vouch that a NEXT_STEP/DISABLED env not known to this module
        honours ``reset(options={"reset_mask": m})``.
    """

    def __init__(self, venv: VectorEnv, *, episode_stats: bool = True, fresh_infos: bool = False,
                 reset_mask_ok: bool = False):
        if not isinstance(venv, VectorEnv):
            raise TypeError(f"SB3VecEnv wraps a gymnasium.vector.VectorEnv, got {type(venv).__name__}")
        obs_space, act_space = venv.single_observation_space, venv.single_action_space
        for name, space in (("observation", obs_space), ("action", act_space)):
            if not isinstance(space, (spaces.Box, spaces.Discrete)):
                raise TypeError(f"SB3VecEnv supports Box/Discrete spaces, the {name} space is {space}")
        self.venv = venv
        self.autoreset_mode = _autoreset_mode(venv)
        if self.autoreset_mode != AutoresetMode.SAME_STEP and not (reset_mask_ok or supports_reset_mask(venv)):
            raise ValueError(
                f"{type(venv.unwrapped).__name__} autoresets in {self.autoreset_mode.value} mode and is not known to "
                "support reset(options={'reset_mask': ...}), which SB3VecEnv needs to give SB3 same-step resets. "
                "Use a SAME_STEP env (e.g. gym.make_vec(id, n, vectorization_mode='sync', "
                "vector_kwargs={'autoreset_mode': AutoresetMode.SAME_STEP})), or pass reset_mask_ok=True."
            )
        self.episode_stats = episode_stats
        self.fresh_infos = fresh_infos
        super().__init__(venv.num_envs, obs_space, act_space)
        self.metadata = {**dict(venv.metadata), **self.metadata}
        self._act_dtype = act_space.dtype
        self._act_shape = (self.num_envs, *act_space.shape)
        self._actions: np.ndarray | None = None
        self._ep_return = np.zeros(self.num_envs, dtype=np.float64)
        self._ep_length = np.zeros(self.num_envs, dtype=np.int64)
        self._t_start = time.time()
        self._term_sums: dict[str, float] = {}
        self._term_keys: tuple[str, ...] = ()
        self._term_names: tuple[str, ...] = ()
        self._term_buf = np.empty((0, self.num_envs), np.float32)
        self._term_acc = np.zeros(0, np.float64)
        self._term_steps = 0
        self._safety: dict[str, float] = {}  # the guard's counts since pop_safety()
        self._safety_steps = 0
        self.diverged_count = 0

    # ------------------------------------------------------------------ stepping
    def reset(self) -> VecEnvObs:
        obs, info = self.venv.reset(seed=self._seed_arg(), options=self._options_arg())
        self._reset_seeds()
        self._reset_options()
        self._ep_return[:] = 0.0
        self._ep_length[:] = 0
        self.reset_infos = [EMPTY_INFO] * self.num_envs
        return np.array(obs, copy=True)

    def step_async(self, actions: np.ndarray) -> None:
        actions = np.asarray(actions, dtype=self._act_dtype)
        if isinstance(self.action_space, spaces.Box):
            actions = actions.reshape(self._act_shape)
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise RuntimeError("step_wait() called without a pending step_async()")
        actions, self._actions = self._actions, None
        obs, reward, terminated, truncated, info = self.venv.step(actions)
        obs = np.array(obs, copy=True)
        reward = np.asarray(reward, dtype=np.float32).copy()
        terminated = np.asarray(terminated, dtype=bool)
        truncated = np.asarray(truncated, dtype=bool)
        dones = terminated | truncated

        terms = info.get("reward_terms")
        if terms:
            self._accumulate_terms(terms)
        if "safety" in info:
            self._accumulate_safety(info["safety"])
        if self.episode_stats:
            self._ep_return += reward
            self._ep_length += 1

        infos: list[dict] = [{} for _ in range(self.num_envs)] if self.fresh_infos else [EMPTY_INFO] * self.num_envs
        done_idx = np.flatnonzero(dones)
        if done_idx.size:
            terminal = self._terminal_obs(obs, info, dones, done_idx)
            timeout = (truncated & ~terminated)[done_idx].tolist()
            success = self._done_values(info, "is_success", done_idx)
            if self.episode_stats:
                ep_r = np.round(self._ep_return[done_idx], 6).tolist()
                ep_l = self._ep_length[done_idx].tolist()
                ep_t = round(time.time() - self._t_start, 6)
                self._ep_return[done_idx] = 0.0
                self._ep_length[done_idx] = 0
            for j, i in enumerate(done_idx.tolist()):
                row = {"terminal_observation": terminal[j], "TimeLimit.truncated": timeout[j]}
                if self.episode_stats:
                    row["episode"] = {"r": ep_r[j], "l": ep_l[j], "t": ep_t}
                if success is not None:
                    row["is_success"] = success[j]
                infos[i] = row
        diverged = info.get("diverged")
        if diverged is not None and np.any(diverged):
            for i in np.flatnonzero(diverged).tolist():
                infos[i] = dict(infos[i])
                infos[i]["diverged"] = True
                self.diverged_count += 1
        return obs, reward, dones, infos

    def _terminal_obs(self, obs: np.ndarray, info: dict, dones: np.ndarray, done_idx: np.ndarray) -> np.ndarray:
        """Terminal observations of the done rows, ``(k, *obs_shape)``, a fresh array.

        SAME_STEP reads ``info["final_obs"]``; NEXT_STEP/DISABLED take them from ``obs``
        and reset the done rows eagerly, writing the reset observations into ``obs``.
        """
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            final = info.get("final_obs")
            if final is None:
                raise KeyError("SAME_STEP env reported done rows but no info['final_obs']")
            if final.dtype == object:  # Gymnasium SyncVectorEnv: per-env arrays, None elsewhere
                return np.stack([np.asarray(final[i]) for i in done_idx.tolist()])
            return np.array(final[done_idx], copy=True)
        terminal = obs[done_idx]  # fancy indexing copies
        reset_obs, _ = self.venv.reset(options={"reset_mask": dones.copy()})
        obs[done_idx] = np.asarray(reset_obs)[done_idx]
        return terminal

    @staticmethod
    def _done_values(info: dict, key: str, done_idx: np.ndarray) -> list | None:
        """``info[key]`` at the done rows as Python values, preferring Gymnasium's
        ``final_info`` (SAME_STEP Sync envs put the terminal step's info there)."""
        final_info = info.get("final_info")
        if isinstance(final_info, dict) and key in final_info:
            values, mask = final_info[key], final_info.get(f"_{key}")
        elif key in info:
            values, mask = info[key], info.get(f"_{key}")
        else:
            return None
        values = np.asarray(values)[done_idx]
        if mask is not None and not np.all(np.asarray(mask)[done_idx]):
            return None
        return values.tolist()

    def _accumulate_terms(self, terms: dict) -> None:
        """Add each term's sum over envs: one stack into a reused (K, N) buffer and one
        float64 reduction (15 separate np.sum calls cost ~10x more at N = 1024)."""
        keys = tuple(terms)
        if keys != self._term_keys:
            self._term_keys = keys
            self._flush_term_names(tuple(k for k in keys if not k.startswith("_")))
        np.stack([terms[k] for k in self._term_names], out=self._term_buf)
        self._term_acc += self._term_buf.sum(axis=1, dtype=np.float64)
        self._term_steps += self.num_envs

    def _flush_term_names(self, names: tuple[str, ...]) -> None:
        for k, v in zip(self._term_names, self._term_acc.tolist()):
            self._term_sums[k] = self._term_sums.get(k, 0.0) + v
        self._term_names = names
        self._term_buf = np.empty((len(names), self.num_envs), np.float32)
        self._term_acc = np.zeros(len(names), np.float64)

    def _accumulate_safety(self, safety: dict) -> None:
        from unilab_robot.deploy.safety import COUNTS

        for key in (*COUNTS, "latched"):
            self._safety[key] = self._safety.get(key, 0.0) + float(np.sum(safety[key]))
        self._safety_steps += self.num_envs

    def pop_safety(self) -> dict[str, float]:
        """The safety guard's totals since the last call: joint-steps each limit moved, watchdog trips, and
        ``latched``, the share of env steps in the safe mode; empty without a guard. Resets them."""
        if not self._safety_steps:
            return {}
        out = {**self._safety, "latched": self._safety["latched"] / self._safety_steps}
        self._safety, self._safety_steps = {}, 0
        return out

    def pop_reward_terms(self) -> dict[str, float]:
        """Per-env-step mean of each reward term since the last call; resets the sums."""
        if not self._term_steps:
            return {}
        self._flush_term_names(self._term_names)
        means = {k: v / self._term_steps for k, v in self._term_sums.items()}
        self._term_sums, self._term_steps = {}, 0
        return means

    # ------------------------------------------------------------------ seeding, options
    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """SB3 semantics: env i is seeded with ``seed + i`` at the next ``reset()``."""
        if seed is None:
            seed = int(np.random.randint(0, np.iinfo(np.uint32).max, dtype=np.uint32))
        self._seeds = [seed + i for i in range(self.num_envs)]
        return self._seeds

    def _seed_arg(self) -> int | list[int | None] | None:
        seeds = self._seeds
        if all(s is None for s in seeds):
            return None
        if seeds[0] is not None and seeds == list(range(seeds[0], seeds[0] + self.num_envs)):
            return seeds[0]  # a batched env takes one int and derives per-env streams
        return list(seeds)

    def _options_arg(self) -> dict | None:
        opts = [o for o in self._options if o]
        if not opts:
            return None
        if len(opts) != self.num_envs or any(o != opts[0] for o in opts):
            raise ValueError("a batched env resets with one options dict; set_options() must give all envs the same")
        return dict(opts[0])

    # ------------------------------------------------------------------ attributes
    def _indices(self, indices: VecEnvIndices) -> list[int]:
        return list(self._get_indices(indices))

    def _owner(self, name: str) -> Any | None:
        """The outermost vector layer defining ``name``; a Sync/Async base env is
        skipped, so that its sub-envs answer (DummyVecEnv semantics)."""
        layers = _layers(self.venv)
        if self._sub_envs() is not None or hasattr(layers[-1], "call"):
            layers = layers[:-1]
        for layer in layers:
            if name in dir(layer):
                return layer
        return None

    def _sub_envs(self) -> list[gym.Env] | None:
        return getattr(self.venv.unwrapped, "envs", None)

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """An attribute of the batched env (the same object for every index), or, for
        Gymnasium Sync/Async envs, of each sub-env."""
        idx = self._indices(indices)
        owner = self._owner(attr_name)
        if owner is not None:
            return [getattr(owner, attr_name)] * len(idx)
        subs = self._sub_envs()
        if subs is not None:
            return [subs[i].get_wrapper_attr(attr_name) for i in idx]
        base = self.venv.unwrapped
        if hasattr(base, "get_attr") and hasattr(base, "call"):
            values = base.get_attr(attr_name)
            return [values[i] for i in idx]
        raise AttributeError(f"{type(self.venv).__name__} has no attribute {attr_name!r}")

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set on the batched env (whole batch only), or on the given Sync sub-envs."""
        idx = self._indices(indices)
        subs = self._sub_envs()
        if subs is not None and self._owner(attr_name) is None:
            for i in idx:
                subs[i].set_wrapper_attr(attr_name, value)
            return
        if len(idx) != self.num_envs:
            raise ValueError(
                f"{attr_name!r} is an attribute of the whole batched env; set it for all envs "
                "(indices=None) or write rows of its (N, ...) array directly"
            )
        setattr(self._owner(attr_name) or self.venv, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs) -> list[Any]:
        """Call a method of the batched env ONCE (it acts on the whole batch) and return
        its result for every index; Sync sub-envs are called one by one."""
        idx = self._indices(indices)
        owner = self._owner(method_name)
        if owner is not None:
            result = getattr(owner, method_name)(*method_args, **method_kwargs)
            return [result] * len(idx)
        subs = self._sub_envs()
        if subs is not None:
            return [subs[i].get_wrapper_attr(method_name)(*method_args, **method_kwargs) for i in idx]
        base = self.venv.unwrapped
        if hasattr(base, "call"):
            results = base.call(method_name, *method_args, **method_kwargs)
            return [results[i] for i in idx]
        raise AttributeError(f"{type(self.venv).__name__} has no method {method_name!r}")

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        """True where ``wrapper_class`` is in the vector wrapper chain (or wraps the Sync
        sub-env); ``Monitor`` is reported when the adapter keeps episode stats."""
        from stable_baselines3.common.env_util import is_wrapped

        idx = self._indices(indices)
        if self.episode_stats and wrapper_class is Monitor:
            return [True] * len(idx)
        if any(isinstance(layer, wrapper_class) for layer in _layers(self.venv)):
            return [True] * len(idx)
        subs = self._sub_envs()
        if subs is not None:
            return [is_wrapped(subs[i], wrapper_class) for i in idx]
        return [False] * len(idx)

    # ------------------------------------------------------------------ rendering, closing
    def get_images(self) -> Sequence[np.ndarray | None]:
        frames = self.venv.render()
        if frames is None:
            return [None] * self.num_envs
        if isinstance(frames, np.ndarray) and frames.ndim == 3:
            return [frames]
        return list(frames)

    def render(self, mode: str | None = None) -> np.ndarray | None:
        """One RGB frame: the env's own frame, or SB3's tiling of per-env frames."""
        if mode not in (None, "rgb_array") or self.render_mode != "rgb_array":
            return super().render(mode=mode)
        images = [im for im in self.get_images() if im is not None]
        if not images:
            return None
        return images[0] if len(images) == 1 else tile_images(images)

    def close(self) -> None:
        self.venv.close()

    def __repr__(self) -> str:
        return f"SB3VecEnv({self.venv!r}, autoreset_mode={self.autoreset_mode.value})"

