"""``algo.critic_warmup_iterations``: the actor and its std are held (bit for bit) for the run's first
iterations while the critic learns, an adaptive rate is held, the run says when the warm-up starts and
ends; a feed-forward and a recurrent actor alike, and with a state estimator the longer warm-up holds."""

import pytest
import torch
from tests.trainers.test_ppo_checkpoint import tiny_cfg

from trainers.common.logging import read_csv
from trainers.ppo.config import ConfigError
from trainers.ppo.runner import Runner
from trainers.ppo.warmup import critic_warmup_line, held_iterations

WARMUP = 2
GRU = {"recurrent": "gru", "recurrent_hidden": 8, "actor_hidden": [16], "critic_hidden": [16, 16]}


def _snapshot(runner) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in runner.algo.policy.state_dict().items()}


@pytest.mark.parametrize("policy", [{}, GRU], ids=["mlp", "gru"])
def test_the_critic_warm_up_holds_the_actor_while_the_critic_learns(tmp_path, capsys, policy):
    """PointReach, 4 iterations with a critic warm-up of 2 under the adaptive schedule: every actor weight and
    the std are bit-identical through the warm-up while the critic changes at each iteration; the rate is held;
    then the actor learns. The log marks the held iterations and the run says both lines once."""
    cfg = tiny_cfg(tmp_path, algo={"num_steps": 16, "num_epochs": 2, "num_minibatches": 2,
                                   "critic_warmup_iterations": WARMUP},
                   policy=policy, log={"save_interval": 100, "keep_every": 0})
    assert cfg.algo.schedule == "adaptive"
    runner = Runner(cfg)
    seen = []
    try:
        start = _snapshot(runner)
        runner.learn(callback=lambda runner, stats: seen.append(_snapshot(runner)) and False)
    finally:
        runner.close()
    actor = [k for k in start if not k.startswith("critic.")]
    assert "log_std" in actor and any(k.startswith("actor.") for k in actor)
    before = start
    for it in range(WARMUP):
        assert all(torch.equal(seen[it][k], start[k]) for k in actor), it
        assert any(not torch.equal(seen[it][k], before[k]) for k in seen[it] if k.startswith("critic.")), it
        before = seen[it]
    assert any(not torch.equal(seen[WARMUP][k], start[k]) for k in actor)
    log = read_csv(tmp_path / "progress.csv")
    assert log["policy/held"] == [1.0] * WARMUP + [0.0] * (4 - WARMUP)
    assert log["learning_rate"][:WARMUP] == [cfg.algo.learning_rate] * WARMUP
    assert log["learning_rate"][WARMUP] != cfg.algo.learning_rate
    out = capsys.readouterr().out
    assert out.count("critic warm-up (actor and its std held) for iterations 1-2") == 1, out
    assert out.count("critic warm-up over after 2 iterations: the actor learns") == 1, out


def test_with_an_estimator_the_longer_warm_up_holds_and_the_truth_is_read_only_in_its_own(tmp_path, capsys):
    """Estimator warm-up 1, critic warm-up 3: the actor is held for 3 iterations and reads the true offset only
    in the first; the estimator's end line says the actor is still held."""
    cfg = tiny_cfg(tmp_path, env_kwargs={"named_groups": True}, log={"save_interval": 100, "keep_every": 0},
                   algo={"num_steps": 16, "num_epochs": 2, "num_minibatches": 2, "critic_warmup_iterations": 3},
                   policy={"estimator": {"targets": ["offset"], "hidden": [16], "warmup_iterations": 1}})
    runner = Runner(cfg)
    try:
        runner.learn()
    finally:
        runner.close()
    log = read_csv(tmp_path / "progress.csv")
    assert log["policy/held"] == [1.0, 1.0, 1.0, 0.0]
    assert log["estimator/warmup"] == [1.0, 0.0, 0.0, 0.0]
    assert log["loss/policy"][:3] != [0.0] * 3  # logged (it is computed) although no step follows it
    out = capsys.readouterr().out
    assert "the actor reads the estimate of offset (held on by algo.critic_warmup_iterations)" in out, out
    assert out.count("critic warm-up over after 3 iterations: the actor learns") == 1, out


def test_the_warm_up_lines_and_span_by_hand():
    assert held_iterations(0, 0) == 0 and held_iterations(5, 2) == 5 and held_iterations(1, 4) == 4
    assert critic_warmup_line(0, 0) is None
    assert "for iterations 1-30:" in critic_warmup_line(0, 30)
    assert "for iterations 8-30:" in critic_warmup_line(7, 30)  # a resume inside the warm-up
    assert "for iteration 30:" in critic_warmup_line(29, 30)
    assert critic_warmup_line(30, 30) == "[unilab] critic warm-up over after 30 iterations: the actor learns"
    assert critic_warmup_line(1, 1) == "[unilab] critic warm-up over after 1 iteration: the actor learns"
    assert critic_warmup_line(31, 30) is None


def test_a_negative_warm_up_is_refused_in_one_line(tmp_path):
    with pytest.raises(ConfigError, match=r"algo.critic_warmup_iterations must be >= 0 \(0: no warm-up\), got -1"):
        tiny_cfg(tmp_path, algo={"critic_warmup_iterations": -1})
