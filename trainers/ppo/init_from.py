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
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from ..common.checkpoint import CheckpointError, load_checkpoint
from .algorithm import PPO
from .checkpoint_format import CKPT_FORMAT, CKPT_VERSION, check_compatible


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


def initialize_from(algo: PPO, dims, task: str, path: str | Path, fresh_normalizer: bool = False,
                    history_sources=None) -> str:
    """Load ``path``'s actor (and what fits of the rest) into ``algo``; returns a one-line summary.

    ``history_sources``: this run's observation history, as the current-frame column each
    history column is a past frame of (:attr:`wrappers.history.ObservationHistory.history_sources`);
    a checkpoint trained without a history is widened to it (:func:`~trainers.ppo.widen.widen_for_history`).

    Raises :class:`CheckpointError` when the checkpoint is of another task, observation or
    action size, or network shape.
    """

    path = _checkpoint_path(path)
    ckpt = load_checkpoint(path, CKPT_FORMAT, CKPT_VERSION, required=("config", "dims", "algo"), map_location=algo.device)
    if ckpt["config"].get("task") != task:
        raise CheckpointError(f"--init-from {path} was trained on {ckpt['config'].get('task')!r}, this run is {task!r}")
    widened = 0
    if history_sources is not None and not ckpt["config"].get("obs_history"):
        from .widen import widen_for_history
        widened = len(history_sources)
        ckpt = widen_for_history(ckpt, history_sources)
    check_compatible(ckpt, dims, path, critic=False)
    saved = ckpt["algo"]
    same_critic = ckpt["dims"].get("privileged") == dims.privileged
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
    if unexpected or any(not k.startswith("critic.") for k in missing):
        raise CheckpointError(f"--init-from {path}: its networks do not fit this run's (missing {missing}, "
                              f"unexpected {unexpected})")
    algo.policy.bound_std_()
    parts = ["actor"] + (["critic"] if same_critic else []) + ([] if fresh_normalizer else ["observation normalizer"])
    fresh = ([] if same_critic else ["critic (its input size changed)"]) + (["observation normalizer"] if fresh_normalizer else [])
    return (f"initialized from {path} ({int(ckpt.get('env_steps', 0))} steps): {', '.join(parts)}"
            + (f"; widened: {widened} history columns at zero weight" if widened else "")
            + (f"; fresh: {', '.join(fresh)}" if fresh else ""))
