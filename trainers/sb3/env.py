"""``make_sb3_env``: task id -> batched env -> vector wrappers -> SB3 adapter -> VecNormalize."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from gymnasium.vector import AutoresetMode, VectorEnv
from stable_baselines3.common.vec_env import VecEnv, VecMonitor, VecNormalize

from trainers.common.envs import Sim2RealSpec, check_task, make_vec_env
from trainers.sb3.adapter import SB3VecEnv, supports_reset_mask

__all__ = ["make_batched_env", "make_sb3_env"]

VectorWrapperFn = Callable[[VectorEnv], VectorEnv]


def _register_unilab() -> None:
    try:
        import unilab_envs  # noqa: F401  (registers UniLab/* ids)
    except ImportError as exc:  # pragma: no cover - unilab_envs ships with this package
        warnings.warn(f"could not import unilab_envs ({exc}); only Gymnasium ids are available")


def _is_unilab(task_id: str) -> bool:
    _register_unilab()
    entry = check_task(task_id).vector_entry_point  # "module:Id" imports the module first
    return isinstance(entry, str) and entry.startswith("unilab_envs.")


def make_batched_env(task_id: str, num_envs: int, sim2real: Sim2RealSpec = None, **kwargs: Any) -> VectorEnv:
    """``trainers.common.envs.make_vec_env`` (the bundled PPO's builder, ``sim2real`` wrappers
    included): a natively batched task (its ``vector_entry_point``) when the adapter can
    use it (SAME_STEP, or NEXT_STEP with ``reset_mask``), else Gymnasium's
    ``SyncVectorEnv`` in SAME_STEP mode over the single env."""
    _register_unilab()
    if check_task(task_id).vector_entry_point is not None:
        venv = make_vec_env(task_id, num_envs, kwargs, sim2real=sim2real)
        mode = venv.metadata.get("autoreset_mode")
        if mode in (AutoresetMode.SAME_STEP, AutoresetMode.SAME_STEP.value) or supports_reset_mask(venv):
            return venv
        venv.close()
    return make_vec_env(task_id, num_envs, kwargs, vectorization_mode="sync", sim2real=sim2real)


def make_sb3_env(
    task_id: str,
    num_envs: int,
    wrappers: Sequence[VectorWrapperFn] = (),
    *,
    seed: int | None = None,
    normalize: bool | dict[str, Any] = False,
    sim2real: Sim2RealSpec = None,
    monitor: bool = False,
    fresh_infos: bool = False,
    **kwargs: Any,
) -> VecEnv:
    """An SB3 ``VecEnv`` for ``task_id`` with ``num_envs`` batched envs.

    :param wrappers: vector-wrapper factories applied in order to the batched env
        (after ``sim2real``).
    :param sim2real: ``wrappers.Sim2Real`` profile (name, YAML path or mapping) the
        batched env is wrapped in, as ``trainers.common.envs.make_vec_env`` does for the
        bundled PPO; ``None``: the bare env.
    :param seed: seeds the first ``reset()`` through SB3's ``seed()`` (env i gets
        ``seed + i``, for our envs and Gymnasium's alike).
    :param normalize: wrap in ``VecNormalize``; a dict gives its kwargs
        (``norm_obs``, ``norm_reward``, ``gamma``, ``clip_obs``, ...).
    :param monitor: stack SB3's ``VecMonitor`` for episode stats instead of the
        adapter's vectorized ones (same ``info["episode"]`` either way).
    :param kwargs: forwarded to ``gym.make_vec`` (task config, ``max_episode_steps``,
        ``render_mode``, ...). Without wrappers, our envs are built with ``copy=False``
        (the adapter copies everything SB3 keeps, so the env's own copies are waste).
    """
    if not wrappers and sim2real is None and _is_unilab(task_id):
        kwargs.setdefault("copy", False)  # the adapter copies what SB3 keeps; skip the env's own copies
    venv = make_batched_env(task_id, num_envs, sim2real=sim2real, **kwargs)
    for wrap in wrappers:
        venv = wrap(venv)
    env: VecEnv = SB3VecEnv(venv, episode_stats=not monitor, fresh_infos=fresh_infos)
    if seed is not None:
        env.seed(seed)
    if monitor:
        env = VecMonitor(env)
    if normalize:
        env = VecNormalize(env, **(normalize if isinstance(normalize, dict) else {}))
    return env
