"""Tiny end-to-end runs that must learn (CPU, small budgets)."""

import dataclasses

import pytest
from tests.trainers.conftest import POINT_REACH_ID

import unilab_envs  # noqa: F401  (registers UniLab/*)
from trainers.ppo import Runner, train
from trainers.ppo.config import TrainConfig, deep_merge, from_dict, load_config
from trainers.ppo.evaluate import evaluate

QUIET = {"log": {"tensorboard": False, "progress": False, "plot": False, "save_interval": 1000}}


def _untrained(cfg, tmp_path):
    """Checkpoint of the untrained policy (initial weights, normalizer seeded from reset obs)."""
    runner = Runner(dataclasses.replace(cfg, out=str(tmp_path / "untrained")))
    try:
        runner.collector.reset(seed=cfg.seed)
        runner.algo.update_normalizers(*runner.collector.initial_moments())
        return runner.save()
    finally:
        runner.close()


def test_point_reach_learns(tmp_path):
    cfg = from_dict(TrainConfig, deep_merge(QUIET, {
        "task": POINT_REACH_ID, "num_envs": 16, "total_steps": 16 * 32 * 20, "seed": 0, "out": str(tmp_path),
        "algo": {"num_steps": 32, "gamma": 0.95},
        "policy": {"actor_hidden": [32, 32], "critic_hidden": [32, 32]}}))
    res = train(cfg)
    ev = evaluate(res.checkpoint, episodes=32, num_envs=16)
    assert ev.success_rate >= 0.9, ev.summary()
    assert ev.mean_length < 15, ev.summary()


@pytest.mark.slow
def test_pendulum_improves_over_untrained(tmp_path):
    cfg = load_config("Pendulum-v1", out=str(tmp_path / "run"), total_steps=40_000,
                      overrides=["log.progress=false", "log.plot=false"])
    res = train(cfg)
    trained = evaluate(res.checkpoint, episodes=8, num_envs=8)
    # the untrained policy: iteration-0 weights
    untrained = evaluate(_untrained(cfg, tmp_path), episodes=8, num_envs=8)
    assert trained.mean_return > untrained.mean_return + 200, (trained.summary(), untrained.summary())


def test_ur5_reach_improves_over_untrained(tmp_path):
    cfg = load_config("UniLab/UR5Reach-v0", out=str(tmp_path / "run"), total_steps=64 * 32 * 40, num_envs=64,
                      overrides=["log.progress=false", "log.plot=false", "log.tensorboard=false"])
    res = train(cfg)
    trained = evaluate(res.checkpoint, episodes=16, num_envs=16)
    untrained = evaluate(_untrained(cfg, tmp_path), episodes=16, num_envs=16)
    # measured: return -2.07 -> 2.91, success 0% -> 38% after 82k steps
    assert trained.mean_return > untrained.mean_return + 1.0, (trained.summary(), untrained.summary())
    assert trained.success_rate >= untrained.success_rate + 0.15, (trained.summary(), untrained.summary())
