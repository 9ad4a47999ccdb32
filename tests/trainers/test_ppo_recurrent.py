"""Recurrent PPO (``policy.recurrent: gru``): the update replays the rollout's states, exact resume,
and the options a recurrent actor refuses."""

import pytest
import torch
from tests.trainers.test_ppo_checkpoint import _flat_state, tiny_cfg

from trainers.common.logging import read_csv
from trainers.ppo import train
from trainers.ppo.config import ConfigError, deep_merge
from trainers.ppo.runner import Runner

GRU = {"policy": {"recurrent": "gru", "recurrent_hidden": 8, "actor_hidden": [16], "critic_hidden": [16, 16]}}


@pytest.mark.parametrize("mode", ["SameStep", "NextStep"])
def test_the_update_recomputes_the_means_the_rollout_acted_on(tmp_path, mode):
    """Whole env sequences from the stored first states, zeroed at the stored episode starts, give back
    every mean the collector sampled around (episodes of 5 steps end inside a 16-step rollout)."""
    cfg = tiny_cfg(tmp_path, **GRU, env_kwargs={"autoreset_mode": mode, "max_episode_steps": 5})
    runner = Runner(cfg)
    try:
        runner.collector.reset(seed=0)
        runner.algo.update_normalizers(*runner.collector.initial_moments())
        for _ in range(2):  # the second rollout starts from carried, non-zero states
            runner.collector.collect(runner.storage)
        s = runner.storage
        assert s.starts.sum() > 0 and s.hidden0.abs().sum() > 0
        T, N = s.starts.shape
        with torch.no_grad():
            means = runner.algo.policy.sequence_mean(s.obs.reshape(T * N, -1), s.hidden0, s.starts)
        torch.testing.assert_close(means.view(T, N, -1), s.action_means, rtol=1e-5, atol=1e-6)
        for mb in s.minibatches(2, 1, torch.Generator().manual_seed(0)):  # the minibatches: env sequences
            assert mb.hidden.shape == (N // 2, 8) and mb.starts.shape == (T, N // 2) and mb.obs.shape[0] == T * N // 2
    finally:
        runner.close()


@pytest.mark.parametrize("mode, overlap", [("SameStep", False), ("NextStep", False), ("SameStep", True)])
def test_a_resumed_gru_run_equals_the_straight_run(tmp_path, mode, overlap):
    """Resume == straight, bit for bit, for a GRU actor: the checkpoint carries each env's hidden state and
    the resets due at the next step, besides everything an MLP run's carries."""
    over = {**GRU, "env_kwargs": {"autoreset_mode": mode, "max_episode_steps": 10}, "overlap": overlap}
    full = train(tiny_cfg(tmp_path / "full", **over))
    middle = tmp_path / "full" / "checkpoint_2.pt"
    saved = torch.load(middle, weights_only=True)
    assert saved["collector"]["hidden"].abs().sum() > 0  # carried states, not zeros
    resumed = train(tiny_cfg(tmp_path / "resumed", **over), resume=middle)
    assert resumed.iterations == full.iterations == 4
    a, b = _flat_state(full.checkpoint), _flat_state(resumed.checkpoint)
    assert a.keys() == b.keys() and "/collector/hidden" in a
    for k in a:
        if isinstance(a[k], torch.Tensor):
            assert torch.equal(a[k], b[k]), k
        else:
            assert a[k] == b[k], k
    la, lb = read_csv(tmp_path / "full" / "progress.csv"), read_csv(tmp_path / "resumed" / "progress.csv")
    assert la["loss/value"][2:] == lb["loss/value"] and la["loss/policy"][2:] == lb["loss/policy"]


@pytest.mark.parametrize("over, message", [
    ({"algo": {"symmetry_coef": 0.5}}, "algo.symmetry_coef with policy.recurrent"),
    ({"policy": {"mirror_average": True}}, "policy.mirror_average with policy.recurrent"),
    ({"num_envs": 2, "algo": {"num_minibatches": 4}}, r"algo.num_minibatches \(4\) must be <= num_envs \(2\)"),
    ({"policy": {"recurrent": "lstm"}}, r"policy.recurrent must be one of \[None, 'gru'\]"),
])
def test_what_a_recurrent_actor_refuses_is_said_in_one_line(tmp_path, over, message):
    with pytest.raises(ConfigError, match=message):
        tiny_cfg(tmp_path, **deep_merge(GRU, over))


def test_distilling_from_a_recurrent_teacher_is_refused_in_one_line(tmp_path):
    """(Into a recurrent student it is supported: tests/trainers/test_distill_recurrent.py.)"""
    gru = train(tiny_cfg(tmp_path / "gru", **GRU, total_steps=8 * 16))
    from trainers.distill.observations import GroupError
    from trainers.distill.teacher import Teacher

    with pytest.raises(GroupError, match="is recurrent .* distilling from a recurrent teacher is not supported yet"):
        Teacher(gru.out_dir)
