"""A recurrent actor learns what a feed-forward one cannot: ``CueRecall`` (tests/trainers/memory_env.py) shows a
cue at an episode's first step only and pays for answering it at every later step. A GRU remembers it; an MLP
sees the same observation whatever the cue. Both are judged by ``unilab eval``'s function (deterministic
policy, each env's state reset where its episodes start)."""

import pytest
from tests.trainers.memory_env import CUE_RECALL_ID

from trainers.ppo import train
from trainers.ppo.config import TrainConfig, from_dict
from trainers.ppo.evaluate import evaluate


def cue_cfg(out, recurrent) -> TrainConfig:
    return from_dict(TrainConfig, {
        "task": CUE_RECALL_ID, "num_envs": 64, "total_steps": 64 * 16 * 30, "seed": 0, "out": str(out),
        "torch_threads": 2,
        "algo": {"num_steps": 16, "num_epochs": 5, "num_minibatches": 4, "gamma": 0.9, "learning_rate": 3e-3},
        "policy": {"recurrent": recurrent, "recurrent_hidden": 16, "actor_hidden": [32], "critic_hidden": [32, 32],
                   "init_std": 0.5},
        "log": {"tensorboard": False, "csv": False, "progress": False, "plot": False, "save_interval": 1000}})


@pytest.mark.parametrize("recurrent", ["gru", None], ids=["gru", "mlp"])
def test_only_a_recurrent_actor_recalls_a_cue_shown_once(tmp_path, recurrent):
    run = train(cue_cfg(tmp_path, recurrent))
    result = evaluate(run.checkpoint, episodes=64, num_envs=16, seed=7)
    if recurrent:
        assert result.success_rate >= 0.95, result.success_rate
        assert result.mean_return > -0.5, result.mean_return  # per-step error ~0 after the first step
    else:
        assert result.success_rate == 0.0, result.success_rate
        assert result.mean_return < -6.0, result.mean_return  # |a - c| = 1 at each of the 7 later steps
