"""The learner registry: every learner UniLab trains, listed once (the contract: :mod:`trainers.common.learners`).

``unilab train`` / ``--resume`` / ``eval`` / ``export`` / ``ship`` / ``adapt`` ask :data:`LEARNERS` for a
run's learner by its kind (``run.yaml``) or by ``--algo``. A new learner is one more line here and a
``hooks.py`` in its package. Importing this module imports no learner.
"""

from __future__ import annotations

from trainers.common.learners import Learner, Registry

LEARNERS = Registry([
    Learner("ppo", ("ppo",), "trainers.ppo.hooks", "a bundled-PPO run",
            ppo_checkpoint=True, ships=True, measures_commands=True),
    Learner("sac", ("sac",), "trainers.offpolicy.hooks", "an off-policy run (--algo sac)", ships=True),
    Learner("td3", ("td3",), "trainers.offpolicy.hooks", "an off-policy run (--algo td3)", ships=True),
    Learner("distill", (), "trainers.distill.hooks", "a distilled student (unilab distill)",
            ppo_checkpoint=True, ships=True, measures_commands=True),
    Learner("sb3", ("sb3-ppo", "sb3-sac", "sb3-td3"), "trainers.sb3.hooks", "an SB3 run"),
])
