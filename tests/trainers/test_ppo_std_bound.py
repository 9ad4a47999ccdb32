"""``policy.max_std``: a ceiling on the action std that holds through every update."""

import math

import pytest
import torch
from tests.trainers.conftest import PointReach

from trainers.ppo.collector import Collector
from trainers.ppo.config import AlgoConfig, ConfigError, PolicyConfig, TrainConfig, from_dict
from trainers.ppo.envs import env_dims
from trainers.ppo.runner import build_learner
from trainers.ppo.storage import RolloutStorage


def _stds_after_updates(max_std, updates=6):
    """Per-dimension stds after PPO updates whose entropy bonus pushes the std up hard."""
    env = PointReach(num_envs=16, privileged=False)
    cfg = TrainConfig(num_envs=16, algo=AlgoConfig(num_steps=8, num_minibatches=2, entropy_coef=1.0, schedule="fixed",
                                                   learning_rate=0.05),
                      policy=PolicyConfig(actor_hidden=(8,), critic_hidden=(8,), init_std=0.5, max_std=max_std))
    dims = env_dims(env)
    algo = build_learner(dims, cfg, torch.device("cpu"))
    gen = torch.Generator().manual_seed(0)
    storage = RolloutStorage(8, 16, dims.obs, dims.privileged, dims.act, "cpu")
    col = Collector(env, algo, torch.device("cpu"), gen, privileged=False)
    col.reset(seed=0)
    for _ in range(updates):
        col.collect(storage)
        algo.update(storage, gen)
    return torch.exp(algo.policy.log_std.detach())


def test_the_ceiling_holds_where_the_entropy_bonus_would_raise_the_std():
    free = _stds_after_updates(None)
    bounded = _stds_after_updates(0.6)
    assert free.min() > 0.7  # the bonus alone drives the std well past 0.6
    assert bounded.max() <= 0.6 + 1e-6
    assert torch.allclose(bounded, torch.full_like(bounded, 0.6), atol=1e-5)


def test_max_std_below_init_std_is_refused():
    with pytest.raises(ConfigError, match="max_std"):
        from_dict(TrainConfig, {"policy": {"init_std": 0.8, "max_std": 0.5}})
    assert math.isclose(from_dict(TrainConfig, {"policy": {"max_std": 0.8, "init_std": 0.8}}).policy.max_std, 0.8)
