"""A distilled student's hooks in the learner registry (:mod:`trainers.learners`; the contract:
:mod:`trainers.common.learners`). A student is a bundled-PPO run (its checkpoint is PPO's format), so
``unilab eval`` / ``export`` / ``ship`` read it as PPO does, and ``unilab train --resume`` goes on
training it with PPO (the folder then holds a PPO run). ``unilab distill`` makes one
(:mod:`trainers.distill.cli`)."""

from __future__ import annotations

from ..ppo.hooks import check_commands, evaluate, export, run_config, slim_checkpoint, train  # noqa: F401  (the hooks)
