"""A CI-sized learning regression under a sim-to-real profile, with a control that must fail it.

UR5Reach under ``ur5_real`` with the perturbation-aware critic (``privileged_critic: true``):
after 82k steps the trained actor must beat the run's *initial* actor, both read through the
trained normalizer (so the normalizer alone cannot pass it) and both evaluated deterministically
in the same wrapped env on the same starts. The same run at learning rate 1e-9 must not.
Measured (seed 0, 32 episodes): initial actor return -1.99, success 0% -> trained 2.60, 65.6%;
at lr 1e-9: -2.01, 0% -> -2.01, 0%.
"""

from __future__ import annotations

import copy

import pytest
import torch

import unilab_envs  # noqa: F401  (registers UniLab/*)
from trainers.common.checkpoint import load_checkpoint, save_checkpoint
from trainers.ppo import Runner, load_config
from trainers.ppo.evaluate import evaluate
from trainers.ppo.runner import CKPT_FORMAT, CKPT_VERSION

REACH = "UniLab/UR5Reach-v0"
QUIET = ["log.progress=false", "log.plot=false", "log.tensorboard=false", "log.csv=false"]
PROFILE = "sim2real={extends: ur5_real, privileged_critic: true}"


def _initial_and_trained(tmp_path, lr: float):
    """``(initial, trained)`` evaluations of one run: its iteration-0 actor and its last actor, both
    under the trained normalizer, in the run's own wrapped env."""
    overrides = [*QUIET, PROFILE] + ([f"algo.learning_rate={lr}", "algo.schedule=fixed"] if lr < 1e-3 else [])
    cfg = load_config(REACH, out=str(tmp_path / f"lr{lr}"), num_envs=64, total_steps=64 * 32 * 40, seed=0,
                      overrides=overrides)
    runner = Runner(cfg)
    try:
        initial = copy.deepcopy(runner.algo.policy.state_dict())
        runner.learn()
    finally:
        runner.close()
    path = tmp_path / f"lr{lr}" / "checkpoint.pt"
    ckpt = load_checkpoint(path, CKPT_FORMAT, CKPT_VERSION)
    ckpt["algo"]["policy"] = initial
    first = save_checkpoint({k: v for k, v in ckpt.items() if k not in ("format", "version")},
                            tmp_path / f"lr{lr}_initial.pt", CKPT_FORMAT, CKPT_VERSION)
    return [evaluate(p, episodes=32, num_envs=32, progress=False) for p in (first, path)]


@pytest.mark.slow
def test_reach_under_its_profile_learns_and_a_frozen_learner_does_not(tmp_path):
    torch.set_num_threads(1)
    before, after = _initial_and_trained(tmp_path, 1e-3)
    report = f"initial {before.summary()} | trained {after.summary()}"
    assert after.mean_return > before.mean_return + 1.0, report
    assert after.success_rate >= before.success_rate + 0.15, report
    frozen_before, frozen_after = _initial_and_trained(tmp_path, 1e-9)
    report = f"initial {frozen_before.summary()} | lr 1e-9 {frozen_after.summary()}"
    assert not (frozen_after.mean_return > frozen_before.mean_return + 1.0), report
    assert not (frozen_after.success_rate >= frozen_before.success_rate + 0.15), report
