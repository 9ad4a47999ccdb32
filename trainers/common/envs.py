"""The one place both trainers build their vector env: task id -> ``gym.make_vec`` -> ``Sim2Real``.

The bundled PPO (``trainers.ppo.runner``, ``trainers.ppo.evaluate``) and the SB3 side
(``trainers.sb3.env.make_sb3_env``) both call :func:`make_vec_env`, so a run's
``sim2real`` setting wraps the same stack whichever trainer (or evaluator) builds it.

``sim2real`` is what ``wrappers.Sim2Real(env, profile=...)`` accepts: a packaged profile
name (``go1_real``), the path of a YAML profile, an inline mapping of sections (which
may ``extends: go1_real`` and override some of its keys), or the typed
:class:`~unilab_robot.profiles.Profile` they resolve to; ``None`` leaves the env bare. A run's
config stores the first three (what the user gave); each entry point resolves it once
(:func:`check_sim2real`, :func:`resolve_sim2real`) and hands the ``Profile`` on, which
:func:`make_vec_env` and ``Sim2Real`` take as it is.

A task registered outside UniLab is named in Gymnasium's ``"module:Id"`` form
(``my_dog_joystick:MyLab/MyDogJoystick-v0``): :func:`import_task_module` imports ``module``
first, with the current directory importable (a console script's ``sys.path`` lacks it), and a
run records the task as given, so ``eval`` / ``export`` / ``play`` of that run import it again.

``obs_history`` (a run's ``obs_history``: ``{groups: [...], length: K}``) is part of the
policy's observation, not of the profile: :class:`wrappers.history.ObservationHistory` wraps
the env outside the sim-to-real stack, whatever ``sim2real`` is (``none`` included), so
training, evaluation and export feed the policy the same stacked frames.
"""

from __future__ import annotations

import difflib
import importlib
import os
import sys
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from unilab_robot.profiles import Profile, resolve

Sim2RealSpec = str | Mapping[str, Any] | None  # a name, a YAML path, a mapping or a Profile (a Mapping too)

#: ``evaluate(..., sim2real=AS_TRAINED)``: wrap the env as the run was trained
AS_TRAINED = "as-trained"


class Sim2RealError(ValueError):
    """A ``sim2real`` setting does not resolve to a profile for the task; the message says what to use."""


def import_task_module(task: str) -> str:
    """The Gymnasium id of ``task``; for ``"module:Id"``, ``module`` is imported first (its
    ``gym.register`` runs), as ``gym.make`` does, with the current directory appended to
    ``sys.path`` (a console script's lacks it; appended, so a file here does not shadow an
    installed package). ``ValueError`` saying where to run when the module is not found."""
    module, sep, name = task.partition(":")
    if not sep:
        return task
    if not module or not name or ":" in name:
        raise ValueError(f"task {task!r}: the module form is 'module:Id' (e.g. my_dog_joystick:MyLab/MyDogJoystick-v0)")
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.append(here)
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is None or not (module == e.name or module.startswith(e.name + ".")):
            raise  # the module was found; something it imports was not
        raise ValueError(f"task {task!r}: no module {module!r} in the current directory ({here}) or on sys.path: "
                         f"run from the folder holding {module.replace('.', '/')}.py, or add that folder to "
                         f"PYTHONPATH") from None
    return name


def check_task(task: str) -> gym.envs.registration.EnvSpec:
    """The registered spec of ``task`` (``"module:Id"`` imports ``module`` first: :func:`import_task_module`);
    ``ValueError`` naming the closest ids when it is unknown."""
    name = import_task_module(task)
    if name.startswith("UniLab/"):
        import unilab_envs  # noqa: F401  (registers the suite)
    try:
        return gym.spec(name)
    except gym.error.Error:
        pass
    try:
        import unilab_envs  # noqa: F401  (so a typo of a UniLab id finds its neighbours)
    except ImportError:  # pragma: no cover - unilab_envs ships with this package
        pass
    close = difflib.get_close_matches(name, list(gym.registry), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    where = f"{task.partition(':')[0]} registers no {name!r}; " if name != task else ""
    raise ValueError(f"unknown task {task!r}: {where}{hint}`unilab tasks` lists the UniLab ids; "
                     f"any registered Gymnasium id works, or 'module:Id' for one your module registers")


def check_sim2real(sim2real: Sim2RealSpec, task: str) -> Profile | None:
    """Resolve ``sim2real`` (without building an env; a ``Profile`` is taken as it is) and check it is for ``task``.

    Returns the :class:`~unilab_robot.profiles.Profile` (``None`` for a bare env). Raises
    :class:`Sim2RealError` with a message that says what to change.
    """
    if sim2real is None:
        return None
    if not isinstance(sim2real, (str, Mapping)) or (isinstance(sim2real, str) and not sim2real.strip()):
        raise Sim2RealError(f"sim2real must be a profile name, a YAML path or a mapping, got {sim2real!r}")
    try:
        profile = resolve(sim2real)
        profile.check_fits(task)
    except (ValueError, TypeError, OSError) as e:
        raise Sim2RealError(str(e)) from None
    return profile


def wrap_sim2real(env: gym.vector.VectorEnv, sim2real: Sim2RealSpec | Profile) -> gym.vector.VectorEnv:
    """``wrappers.Sim2Real(env, profile=sim2real)``, or ``env`` itself when ``sim2real`` is ``None``.

    The wrappers seed their per-env streams from the base env's per-env seeds, so each
    of several envs (e.g. the two halves of ``overlap=true``) is wrapped on its own and
    every row keeps its stream.
    """
    if sim2real is None:
        return env
    from wrappers import Sim2Real

    return Sim2Real(env, profile=sim2real)


def resolve_sim2real(requested: Sim2RealSpec, trained: Sim2RealSpec) -> Profile | None:
    """The profile an evaluation uses, resolved once: the run's for :data:`AS_TRAINED`, none for
    ``None``/``"none"``; :class:`Sim2RealError` when it does not resolve.

    Curricula are training devices: with a push curriculum (``random_push: {levels: L}``)
    every env would start an evaluation at level 0, where pushes are the weakest, and with a
    profile ``curriculum`` every section would start weak, so the evaluation runs the whole
    profile instead (pushes from the whole ``magnitude`` range, every section at level 1).
    """
    if isinstance(requested, str) and requested == AS_TRAINED:
        requested = trained
    if requested is None or (isinstance(requested, str) and requested.strip().lower() in ("none", "null", "")):
        return None
    return without_curricula(requested)


def without_curricula(sim2real: Sim2RealSpec) -> Profile:
    """The resolved profile at full strength (:meth:`~unilab_robot.profiles.Profile.at_full_strength`): without
    its ``curriculum`` and with ``random_push`` ``levels: 0`` (pushes from the whole ``magnitude`` range)."""
    try:
        return resolve(sim2real).at_full_strength()
    except (ValueError, TypeError, OSError) as e:
        raise Sim2RealError(str(e)) from None


def make_vec_env(task: str, num_envs: int, env_kwargs: dict | None = None,
                 vectorization_mode: str | None = None, render_mode: str | None = None,
                 sim2real: Sim2RealSpec = None, obs_history: Any = None) -> gym.vector.VectorEnv:
    """``gym.make_vec`` with UniLab's conventions, wrapped in ``Sim2Real`` when ``sim2real`` is set
    and, outside it, in ``ObservationHistory`` when ``obs_history`` is set.

    ``UniLab/*`` ids import :mod:`unilab_envs` (which registers them). A task with a
    ``vector_entry_point`` gets its native batched env; other Gymnasium ids get a
    ``SyncVectorEnv`` in SAME_STEP autoreset mode (so truncations bootstrap from the
    true final observation without a wasted reset step).
    """
    spec = check_task(task)
    profile = check_sim2real(sim2real, task)  # before the env: a wrong-robot profile is said plainly
    mode = vectorization_mode or ("vector_entry_point" if spec.vector_entry_point is not None else "sync")
    vector_kwargs = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP} if mode in ("sync", "async") else {}
    kwargs = dict(env_kwargs or {})
    if render_mode is not None:
        kwargs["render_mode"] = render_mode
    env = gym.make_vec(task, num_envs=num_envs, vectorization_mode=mode, vector_kwargs=vector_kwargs, **kwargs)
    env = wrap_sim2real(env, profile)
    try:
        return with_history(env, obs_history)
    except ValueError:  # ConfigError: an unknown group, a task without named groups
        env.close()
        raise


def final_rows(final: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Rows ``rows`` of SAME_STEP's ``info["final_obs"]`` (or ``"final_privileged_obs"``): a dense ``(N, D)``
    array (UniLab's) or Gymnasium's object array of per-env arrays."""
    if final.dtype == object:
        return np.stack([np.asarray(final[i], dtype=np.float32) for i in rows])
    return final[rows]


def with_history(env: gym.vector.VectorEnv, obs_history: Any) -> gym.vector.VectorEnv:
    """``env`` wrapped in ``obs_history``'s ``ObservationHistory``; ``env`` itself when ``obs_history``
    is ``None`` or ``env`` already is one (a caller's env built with the history)."""
    if obs_history is None:
        return env
    from wrappers.history import ObservationHistory, wrap_history

    return env if isinstance(env, ObservationHistory) else wrap_history(env, obs_history)


def env_groups(env: gym.vector.VectorEnv) -> tuple[dict[str, slice], dict[str, slice]]:
    """``(policy groups, privileged groups)`` of ``env``: name -> slice of its observation / of
    ``info["privileged_obs"]`` (empty for an env that names none)."""
    base = env.unwrapped
    task = getattr(base, "task", None)
    policy = getattr(base, "obs_groups", None) or getattr(task, "obs_groups", None) or {}
    privileged = getattr(base, "privileged_obs_groups", None) or getattr(task, "privileged_obs_groups", None) or {}
    return dict(policy), dict(privileged)


def autoreset_mode(env: gym.vector.VectorEnv) -> gym.vector.AutoresetMode:
    """The env's autoreset mode (NEXT_STEP when it states none); ``ValueError`` for DISABLED."""
    mode = env.metadata.get("autoreset_mode", gym.vector.AutoresetMode.NEXT_STEP)
    mode = gym.vector.AutoresetMode(mode) if not isinstance(mode, gym.vector.AutoresetMode) else mode
    if mode == gym.vector.AutoresetMode.DISABLED:
        raise ValueError("PPO needs an autoresetting vector env (SAME_STEP or NEXT_STEP), got DISABLED")
    return mode
