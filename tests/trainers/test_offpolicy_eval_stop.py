"""The off-policy learner's ``stop.eval`` rule: stop once the deterministic actor's evaluation passes.

Its config (defaults, overrides, refusals), the rule itself with a scripted evaluation (when it evaluates,
the gate on the training success, the step it stops at, what it logs), and the real evaluation on a tiny run:
it scores what ``unilab eval`` scores and leaves the training itself untouched."""

from __future__ import annotations

import csv
import math
from dataclasses import replace

import pytest
import torch

from trainers.common.evaluation import EvalResult
from trainers.offpolicy.config import OffPolicyConfig, OffPolicyEvalStop, load_offpolicy_config
from trainers.offpolicy.evaluate import evaluate_offpolicy
from trainers.offpolicy.runner import OffPolicyRunner
from unilab_envs.config import ConfigError, from_dict

TINY = ["num_envs=8", "total_steps=960", "algo.learning_starts=320", "algo.batch_size=64", "algo.buffer_size=4000",
        "nets.actor_hidden=[32,32]", "nets.critic_hidden=[32,32]", "log.progress=false", "log.tensorboard=false",
        "log.plot=false", "log.every_steps=320", "log.checkpoint_every_steps=100000", "torch_threads=1",
        "stop.success_rate=null", "stop.eval=null"]
TASK = "UniLab/UR5Reach-v0"


def _config(tmp_path, stop_eval: dict | None = None):
    """The tiny run (the recipe's stop rules off), with ``stop.eval`` from its defaults and ``stop_eval``."""
    cfg = load_offpolicy_config("sac", TASK, overrides=[*TINY, f"out={tmp_path}"])
    return cfg if stop_eval is None else replace(cfg, stop=replace(cfg.stop, eval=OffPolicyEvalStop(**stop_eval)))


def test_the_config_fills_stop_eval_from_one_key_and_refuses_bad_values():
    assert from_dict(OffPolicyConfig, {"stop": {"eval": {"success_rate": 0.9}}}).stop.eval == OffPolicyEvalStop(success_rate=0.9)
    assert OffPolicyConfig().stop.eval is None  # off unless asked for
    assert load_offpolicy_config("sac", TASK).stop.eval.success_rate == 0.99  # the reach recipe's rule
    assert load_offpolicy_config("sac", TASK, overrides=["stop.eval=null"]).stop.eval is None
    for bad, match in (("stop.eval.success_rate=0", "success_rate"), ("stop.eval.episodes=0", "episodes"),
                       ("stop.eval.from_training_success=1.5", "from_training_success"),
                       ("stop.eval.sucess_rate=0.9", "success_rate")):
        with pytest.raises(ConfigError, match=match):
            load_offpolicy_config("sac", TASK, overrides=[bad])


def _scripted(runner: OffPolicyRunner, successes: list[float], calls: list[int]) -> None:
    """``runner.evaluate`` answers ``successes`` in turn (10 env steps each) and notes the env step of each call."""
    def evaluate():
        calls.append(runner.env_steps)
        rate = successes[len(calls) - 1]
        return EvalResult(episodes=4, mean_return=rate, std_return=0.0, mean_length=75.0, success_rate=rate,
                          fall_rate=0.0, video=None), 10
    runner.evaluate = evaluate


@pytest.mark.parametrize("log_every, logged", [
    (160, [(160, 0.5, 10), (320, 0.94, 20), (480, 0.96, 30)]),  # the stop falls on a logged step: one row for it
    (320, [(320, 0.94, 20), (480, 0.96, 30)]),                  # between logged steps: the stop adds its own row
])
def test_the_run_stops_at_the_first_evaluation_that_reaches_the_rate_and_logs_it(tmp_path, log_every, logged):
    cfg = _config(tmp_path, dict(success_rate=0.95, every_steps=160))
    cfg = replace(cfg, log=replace(cfg.log, every_steps=log_every))
    runner, calls = OffPolicyRunner(cfg), []
    _scripted(runner, [0.5, 0.94, 0.96, 1.0, 1.0, 1.0], calls)
    result = runner.train()
    assert calls == [160, 320, 480] and result.env_steps == 480
    assert result.stop_reason.startswith("evaluation success 96.0% >= 95.0%")
    with open(tmp_path / "progress.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(int(r["step"]), float(r["eval/success"]), int(float(r["eval/env_steps"]))) for r in rows] == logged
    assert all(r["time/steps_per_s"] and r["reward/total"] for r in rows)  # the stop's row is a full row


def test_the_gate_on_the_training_success_skips_evaluations(tmp_path):
    # an untrained actor never reaches 100% training success: no evaluation, the run goes to total_steps
    cfg = _config(tmp_path, dict(success_rate=0.5, every_steps=160, from_training_success=1.0))
    runner, calls = OffPolicyRunner(cfg), []
    _scripted(runner, [1.0] * 10, calls)
    result = runner.train()
    assert calls == [] and result.env_steps == 960 and result.stop_reason is None
    with open(tmp_path / "progress.csv", newline="") as f:
        assert all(math.isnan(float(r["eval/success"])) for r in csv.DictReader(f))  # the column is there, empty


def test_the_evaluation_scores_what_unilab_eval_scores_and_leaves_training_untouched(tmp_path):
    plain = OffPolicyRunner(_config(tmp_path / "plain"))
    plain.train()
    rule = dict(success_rate=1.0, every_steps=320, episodes=8, num_envs=4, seed=99)
    evaluated = OffPolicyRunner(_config(tmp_path / "evaluated", rule))
    result = evaluated.train()
    assert result.env_steps == 960  # an untrained actor does not reach 100%
    a, b = plain.learner.state_dict(), evaluated.learner.state_dict()
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=0, msg=key)
    again, steps = evaluated.evaluate()
    # 3 evaluations of the same episodes; each: 4 envs, 2 counted 75-step episodes after a skipped (partial) first one
    assert 4 * 2 * 75 < steps <= 4 * 3 * 75 and evaluated.eval_stats["eval/env_steps"] == 3 * steps
    scored = evaluate_offpolicy(tmp_path / "evaluated", episodes=8, num_envs=4, seed=99, progress=False)
    assert again.success_rate == evaluated.eval_stats["eval/success"] == scored.success_rate
    assert again.mean_return == pytest.approx(scored.mean_return, abs=1e-5)
