"""The warm-ups that hold the actor at the start of a run (:attr:`PPO.actor_held <trainers.ppo.algorithm.PPO>`).

Two settings hold it, each counted from the run's first iteration (a resume inside one goes on holding):

* ``algo.critic_warmup_iterations``: the critic learns the returns of the policy as it is before the
  actor moves. A fine-tune (``--init-from``) of a distilled student starts with an untrained critic,
  and a profile that adds privileged groups starts a fresh one; their first advantages are noise, and
  PPO steps on noise walk a good policy away from where it was.
* ``policy.estimator.warmup_iterations``: the actor also reads its state estimator's targets' true values
  in place of the estimate while the estimator learns (:func:`trainers.ppo.estimator.warmup_line`).

The actor is held while either lasts.
"""

from __future__ import annotations


def held_iterations(critic_warmup: int, estimator_warmup: int) -> int:
    """How many first iterations hold the actor: the longer of the two warm-ups."""
    return max(critic_warmup, estimator_warmup)


def warmup_span(iteration: int, warmup: int) -> str:
    """The iterations left of a warm-up of ``warmup`` at the start of iteration ``iteration + 1`` (1-based, for
    a line): ``"iteration 30"`` or ``"iterations 8-30"``."""
    return f"iteration {warmup}" if iteration + 1 == warmup else f"iterations {iteration + 1}-{warmup}"


def over_after(warmup: int) -> str:
    """``"over after 1 iteration"`` / ``"over after N iterations"``."""
    return f"over after {warmup} iteration{'s' if warmup > 1 else ''}"


def critic_warmup_line(iteration: int, warmup: int) -> str | None:
    """What a run says at the start of iteration ``iteration + 1`` about ``algo.critic_warmup_iterations``
    (``warmup``): the warm-up line at its first iteration (or a resume inside it), the end line once it is
    over, ``None`` otherwise."""
    if iteration == warmup and warmup > 0:
        return f"[unilab] critic warm-up {over_after(warmup)}: the actor learns"
    if iteration < warmup:
        return (f"[unilab] critic warm-up (actor and its std held) for {warmup_span(iteration, warmup)}: the critic "
                f"learns the returns of the policy as it is (an adaptive learning rate is held)")
    return None
