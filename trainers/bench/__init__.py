"""``unilab bench``: performance ratios measured side by side in one run, one table.

Rows (each the median of per-repetition ratios, reference and candidate alternating in one
process, with its interquartile range; ``ratio >= budget`` passes, see ``docs/architecture.md``,
"Performance budget", and :mod:`.stats`):

1. post-processing on a live G1 batch (8192 envs, obs 101 + privileged 45, act 29, 17
   terms): the G1 task's own fused Numba kernel vs NumPy doing the same computation at
   the same precision, on one thread (the budget) and on row-shard threads, beside the
   memory floor, each call timed right after a physics step as in the env (:mod:`.postprocess`);
2. env step vs the ``mujoco.batch`` floor, per task (:mod:`.env_speed`);
3. rollout storage: SB3 ``RolloutBuffer`` vs ours, fill + GAE + minibatches (:mod:`.storage`);
4. PPO update: SB3 ``PPO.train()`` vs ours, fp32 and bf16 autocast on CUDA (:mod:`.update`);
5. end to end: training steps/s vs env-only steps/s, bundled PPO on Go1 (:mod:`.end_to_end`);
6. (opt-in) two-half overlapped collection vs the plain collector (:mod:`.overlap`);
7. (opt-in) the off-policy learner's replay buffer on its device vs a host NumPy buffer copied per
   batch, SB3-style: time per update and sampling alone; the learner's updates/s (:mod:`.replay`).

    unilab bench --quick            # or: python -m trainers.bench --rows 1,4 --out runs/bench
"""

from .cli import main

__all__ = ["main"]
