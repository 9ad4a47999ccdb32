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
"""

from __future__ import annotations

from pathlib import Path

from ..common.checkpoint import CheckpointError, load_checkpoint
from .algorithm import PPO


def initialize_from(algo: PPO, dims, task: str, path: str | Path, fresh_normalizer: bool = False) -> str:
    """Load ``path``'s actor (and what fits of the rest) into ``algo``; returns a one-line summary.

    Raises :class:`CheckpointError` when the checkpoint is of another task, observation or
    action size, or network shape.
    """
    from .runner import CKPT_FORMAT, CKPT_VERSION, check_compatible

    path = Path(path)
    if path.is_dir():
        path = path / "checkpoint.pt"
    ckpt = load_checkpoint(path, CKPT_FORMAT, CKPT_VERSION, required=("config", "dims", "algo"), map_location=algo.device)
    if ckpt["config"].get("task") != task:
        raise CheckpointError(f"--init-from {path} was trained on {ckpt['config'].get('task')!r}, this run is {task!r}")
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
            + (f"; fresh: {', '.join(fresh)}" if fresh else ""))
