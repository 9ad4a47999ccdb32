"""Start a new run from another run's weights (``unilab train --init-from RUN``).

Fine-tuning is how a robust policy is usually made: a policy that walks on the bare task
goes on learning under a sim-to-real profile, a payload or a new floor. ``--resume``
continues one run exactly (its env state, optimizer, counters) and refuses an env that
changed; ``--init-from`` starts a *new* run (iteration 0, a fresh optimizer, the new
config's envs) whose networks begin as the given run's:

* the actor and its log-std always (the std capped by the new ``policy.max_std``);
* the critic and its normalizer when the critic's input has the same size (a profile
  that adds privileged groups changes it: the critic then starts fresh);
* the observation normalizer unless ``init_fresh_normalizer`` is set. Keeping it keeps
  the actor's input scale; a fresh one re-learns statistics under the new profile's noise
  (the old ones, from tens of millions of bare-task samples, would barely move).

The observation history (``obs_history``) is part of what the actor reads, so the new run
takes the given run's (:func:`inherit_history`) when its config sets none, and refuses one
that differs. A run trained without a history may be given one: its networks are widened
(:mod:`trainers.ppo.widen`) so the new run starts acting exactly as the given run did.

A run with a state estimator (``policy.estimator``) from a run without one gets that run's actor
transplanted (:mod:`trainers.ppo.transplant`): the groups this run moves to the critic
(``env_kwargs.critic_only_groups``) and estimates are read from the estimate, with the old weights
rescaled to its raw units, so with the true values in place of the estimate the new actor acts as the
old one (``policy.estimator.warmup_iterations`` lets it do so while the estimator learns). The critic
is carried when its input is the old one's columns in another order, else it starts fresh.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np

from ..common.checkpoint import CheckpointError, load_checkpoint
from .algorithm import PPO
from .checkpoint_format import CKPT_FORMAT, CKPT_VERSION, check_compatible
from .transplant import transplant_for_estimator


def _checkpoint_path(path: str | Path) -> Path:
    path = Path(path)
    return path / "checkpoint.pt" if path.is_dir() else path


def history_mismatch(saved: dict | None, wanted: dict | None, what: str) -> str | None:
    """The message for a run whose ``obs_history`` differs from its checkpoint's, else ``None``."""
    if (saved or None) == (wanted or None):
        return None
    def show(h):
        return "none" if not h else f"{{groups: {list(h['groups'])}, length: {h['length']}}}"
    return (f"{what} was trained with obs_history {show(saved)}, this run has {show(wanted)}: the policy reads "
            f"its observation with that history; set obs_history as the checkpoint's config has it")


def inherit_history(cfg, is_main: bool = True):
    """``cfg`` with the ``--init-from`` run's ``obs_history`` when ``cfg`` sets none (a note on stderr);
    :class:`CheckpointError` when both set one and they differ."""
    from unilab_robot.deploy.history import history_config


    path = _checkpoint_path(cfg.init_from)
    try:
        saved = load_checkpoint(path, CKPT_FORMAT, CKPT_VERSION, required=("config",))["config"].get("obs_history")
    except CheckpointError:  # a resumed run whose source is gone; a new run hears of it from initialize_from
        return cfg
    if not saved and cfg.obs_history is not None:
        if is_main:
            print(f"[unilab] --init-from {path}: no obs_history there; this run adds {cfg.obs_history.to_dict()}, "
                  f"whose columns start at zero weight (the policy acts as that run's)", file=sys.stderr, flush=True)
        return cfg
    if saved and cfg.obs_history is None:
        cfg = dataclasses.replace(cfg, obs_history=history_config(saved))
        if is_main:
            print(f"[unilab] --init-from {path}: obs_history {dict(saved)} (the policy's observation, as that run's)",
                  file=sys.stderr, flush=True)
        return cfg
    mine = None if cfg.obs_history is None else cfg.obs_history.to_dict()
    message = history_mismatch(saved, mine, f"--init-from {path}")
    if message:
        raise CheckpointError(message)
    return cfg


@dataclasses.dataclass(frozen=True)
class Transplanted:
    """What :func:`transplant` did: ``read``, what the new actor reads of the old one's columns (for the summary),
    and ``critic``: whether the critic was carried."""

    read: str
    critic: bool


def transplant(ckpt: dict, path: Path, env, estimator, history: bool, eps: float) -> tuple[dict, Transplanted | None]:
    """``ckpt`` transplanted onto this run's state estimator (:mod:`trainers.ppo.transplant`) when this run has one
    (``estimator``, its columns filled in) and the checkpoint's actor has none; ``(ckpt, None)`` otherwise.
    ``history``: this run has an ``obs_history``. :class:`CheckpointError` (one line) for what cannot be done: a
    run whose actor read groups this run moves to the critic without estimating them, a history, an actor that
    is not a plain MLP, observations that do not match by group."""
    from .obs_layout import match_columns, run_layout, saved_layout

    config, policy = ckpt["config"], ckpt["algo"]["policy"]
    had_estimator = any(k.startswith("actor.estimator.") for k in policy)
    if estimator is None or had_estimator:
        try:
            old, new = saved_layout(env, config, ckpt["dims"]), run_layout(env)
        except ValueError:  # another layout: the size check says so
            return ckpt, None
        moved = [] if old is None or new is None else [g for g in old.policy if g not in new.policy]
        if moved and estimator is None:
            raise CheckpointError(f"--init-from {path}: that run's actor reads {moved}, which this run moves to the "
                                  f"critic (env_kwargs.critic_only_groups); give this run a state estimator of them "
                                  f"(policy.estimator: {{targets: {moved}}}) to transplant its actor, or keep them")
        if moved:
            raise CheckpointError(f"--init-from {path}: that run's actor has a state estimator and reads {moved}, "
                                  f"which this run moves to the critic; init from a run without an estimator")
        return ckpt, None
    where = f"--init-from {path}: transplanting its actor onto this run's state estimator"
    if history or config.get("obs_history"):
        raise CheckpointError(f"{where} with an obs_history is not supported; init from a run without one, into a run "
                              f"without one (set obs_history: null)")
    if "actor.0.weight" not in policy or (config.get("policy") or {}).get("recurrent"):
        raise CheckpointError(f"{where} needs a plain MLP actor (that one has an image encoder or a GRU); init from "
                              f"a run with a plain one")
    new = run_layout(env)
    try:
        old = saved_layout(env, config, ckpt["dims"])
    except ValueError as e:
        raise CheckpointError(f"{where}: {e}") from None
    if old is None or new is None:  # a task without a layout per config: the same observation, or nothing
        if int(ckpt["dims"]["obs"]) != int(env.single_observation_space.shape[-1]):
            raise CheckpointError(f"{where}: this task does not say where its groups were in that run's observation "
                                  f"({ckpt['dims']['obs']} columns, this run's {env.single_observation_space.shape[-1]})")
        from .envs import env_dims
        obs = int(ckpt["dims"]["obs"])
        same = ckpt["dims"].get("privileged") == env_dims(env).privileged
        match_obs, match_est = np.arange(obs), np.full(estimator.size, -1)
        match_critic, moved = (np.arange(env_dims(env).privileged or obs) if same else None), ()
    else:
        try:
            m = match_columns(old, new, estimator.targets, estimator.sizes)
        except ValueError as e:
            raise CheckpointError(f"{where}: {e}") from None
        match_obs, match_est, match_critic, moved = m.obs_src, m.estimate_src, m.critic_src, m.moved
    normalized = bool((config.get("policy") or {}).get("obs_normalization", True))
    ckpt = transplant_for_estimator(ckpt, match_obs, match_est, match_critic, normalized, eps)
    read = (f"its {', '.join(moved)} columns read the estimate" if moved else
            "the estimate's columns start at zero weight")
    return ckpt, Transplanted(read, match_critic is not None)


def initialize_from(algo: PPO, dims, task: str, path: str | Path, fresh_normalizer: bool = False,
                    history_sources=None, env=None, estimator=None, held: int = 0) -> str:
    """Load ``path``'s actor (and what fits of the rest) into ``algo``; returns a one-line summary.

    ``history_sources``: this run's observation history, as the current-frame column each
    history column is a past frame of (:attr:`wrappers.history.ObservationHistory.history_sources`);
    a checkpoint trained without a history is widened to it (:func:`~trainers.ppo.widen.widen_for_history`).
    ``env``, ``estimator``: this run's env (its observation groups) and ``policy.estimator`` (its columns filled
    in): a checkpoint without an estimator is transplanted onto this run's (module docstring).
    ``held``: how many first iterations this run holds the actor (:mod:`trainers.ppo.warmup`); without a
    warm-up, a summary whose critic is fresh or a distilled student's (never trained) says how to hold it.

    Raises :class:`CheckpointError` when the checkpoint is of another task, observation or
    action size, or network shape, or cannot be transplanted.
    """

    path = _checkpoint_path(path)
    ckpt = load_checkpoint(path, CKPT_FORMAT, CKPT_VERSION, required=("config", "dims", "algo"), map_location=algo.device)
    if ckpt["config"].get("task") != task:
        raise CheckpointError(f"--init-from {path} was trained on {ckpt['config'].get('task')!r}, this run is {task!r}")
    transplanted = None
    if env is not None:
        ckpt, transplanted = transplant(ckpt, path, env, estimator, history_sources is not None,
                                        getattr(algo.obs_normalizer, "eps", 1e-8))
    widened = 0
    if history_sources is not None and not ckpt["config"].get("obs_history"):
        from .widen import widen_for_history
        widened = len(history_sources)
        ckpt = widen_for_history(ckpt, history_sources)
    check_compatible(ckpt, dims, path, critic=False)
    saved = ckpt["algo"]
    same_critic = ckpt["dims"].get("privileged") == dims.privileged and (transplanted is None or transplanted.critic)
    weights = {k: v for k, v in saved["policy"].items() if same_critic or not k.startswith("critic.")}
    try:
        missing, unexpected = algo.policy.load_state_dict(weights, strict=False)
        if not fresh_normalizer:
            algo.obs_normalizer.load_state_dict(saved["obs_normalizer"])
        if same_critic and algo.critic_normalizer is not None and saved.get("critic_normalizer") is not None:
            algo.critic_normalizer.load_state_dict(saved["critic_normalizer"])
    except (RuntimeError, KeyError) as e:
        raise CheckpointError(f"--init-from {path}: its networks do not fit this run's (policy.* differs?): "
                              f"{str(e).splitlines()[0]}") from None
    fresh_ok = ("critic.", "actor.estimator.") if transplanted else ("critic.",)  # the estimator starts fresh
    if unexpected or any(not k.startswith(fresh_ok) for k in missing):
        raise CheckpointError(f"--init-from {path}: its networks do not fit this run's (missing {missing}, "
                              f"unexpected {unexpected})")
    algo.policy.bound_std_()
    actor = "actor" if transplanted is None else f"actor (transplanted: {transplanted.read})"
    distilled = "distill" in ckpt  # a DAgger student (trainers.distill): its critic was never trained
    critic = ("critic (untrained: a distilled student's)" if distilled else
              "critic" if transplanted is None else "critic (its columns matched by group)")
    parts = [actor] + ([critic] if same_critic else []) + ([] if fresh_normalizer else ["observation normalizer"])
    why = ("its input size changed" if transplanted is None else
           "its input is not a permutation of that run's")
    fresh = ([] if transplanted is None else ["state estimator"]) + ([] if same_critic else [f"critic ({why})"]) + (
        ["observation normalizer"] if fresh_normalizer else [])
    return (f"initialized from {path} ({int(ckpt.get('env_steps', 0))} steps): {', '.join(parts)}"
            + (f"; widened: {widened} history columns at zero weight" if widened else "")
            + (f"; fresh: {', '.join(fresh)}" if fresh else "")
            + ("; set algo.critic_warmup_iterations (e.g. 40) to hold the actor while the critic learns"
               if (distilled or not same_critic) and not held else ""))
