"""The PPO options that express SB3 / rl-baselines3-zoo settings: reward normalization,
per-minibatch advantage normalization, PyTorch's default init, Adam's epsilon, and the
flush of subnormal floats while training."""

import math
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from stable_baselines3.common.running_mean_std import RunningMeanStd
from tests.trainers.conftest import POINT_REACH_ID
from torch import nn

from trainers.common.denormals import denormals_flushed
from trainers.ppo import load_config, train
from trainers.ppo import losses as L
from trainers.ppo.config import ConfigError, PolicyConfig, TrainConfig, deep_merge, from_dict
from trainers.ppo.models import ActorCritic
from trainers.ppo.reward_norm import RewardNormalizer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from cheetah_vs_sb3 import sb3_settings  # noqa: E402


def test_reward_normalizer_by_hand():
    """gamma 0.5, one env: returns 1, 2.5, then reset; scale from the running variance of the returns."""
    norm = RewardNormalizer(1, gamma=0.5, clip=100.0, eps=0.0)
    valid, not_done = np.array([True]), np.array([False])
    out1 = norm(np.array([1.0]), not_done, valid)
    # prior (mean 0, var 1, count 1e-4) merged with the sample {1}
    n = 1e-4 + 1
    mean1 = 1 / n
    var1 = (1e-4 * 1 + 0 + 1 * 1e-4 * 1 / n) / n
    assert out1[0] == pytest.approx(1 / math.sqrt(var1), rel=1e-6)
    out2 = norm(np.array([2.0]), np.array([True]), valid)  # return 0.5 * 1 + 2 = 2.5, then the episode ends
    n2 = n + 1
    delta = 2.5 - mean1
    var2 = (var1 * n + delta * delta * n / n2) / n2
    assert out2[0] == pytest.approx(2 / math.sqrt(var2), rel=1e-6)
    assert norm.returns[0] == 0.0  # restarted


def test_reward_normalizer_equals_sb3_vecnormalize_rule():
    """The same reward stream through SB3's RunningMeanStd-based rule gives the same rewards."""
    rng = np.random.default_rng(0)
    num_envs, gamma, clip = 3, 0.98, 10.0
    ours = RewardNormalizer(num_envs, gamma, clip)
    rms, returns = RunningMeanStd(shape=()), np.zeros(num_envs)
    for _ in range(200):
        reward = rng.normal(2.0, 3.0, num_envs)
        done = rng.random(num_envs) < 0.05
        returns = returns * gamma + reward                              # SB3 VecNormalize.step_wait
        rms.update(returns)
        expected = np.clip(reward / np.sqrt(rms.var + 1e-8), -clip, clip)
        returns[done] = 0.0
        got = ours(reward, done, np.ones(num_envs, dtype=bool))
        np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_reward_normalizer_skips_masked_rows_and_clips():
    norm = RewardNormalizer(2, gamma=0.9, clip=0.5)
    out = norm(np.array([100.0, 7.0]), np.array([False, False]), np.array([True, False]))
    assert norm.returns[1] == 0.0 and norm.count == pytest.approx(1e-4 + 1)  # the masked row adds nothing
    assert out[0] == 0.5  # clipped


def test_minibatch_advantage_normalization_by_hand():
    adv = torch.tensor([1.0, 2.0, 3.0, 6.0])
    mean, std = 3.0, math.sqrt((4 + 1 + 0 + 9) / 4)
    torch.testing.assert_close(L.normalized_advantages(adv, None), (adv - mean) / (std + 1e-8))
    masked = L.normalized_advantages(adv, torch.tensor([1.0, 1.0, 1.0, 0.0]))  # the last row is not counted
    torch.testing.assert_close(masked[:3], torch.tensor([-1.0, 0.0, 1.0]) / (math.sqrt(2 / 3) + 1e-8))


def test_ortho_init_off_is_pytorchs_default_init():
    cfg = PolicyConfig(actor_hidden=(8, 8), critic_hidden=(8,), activation="relu", ortho_init=False)
    torch.manual_seed(5)
    policy = ActorCritic(3, 3, 2, cfg)
    torch.manual_seed(5)
    reference = [nn.Linear(3, 8), nn.Linear(8, 8), nn.Linear(8, 2), nn.Linear(3, 8), nn.Linear(8, 1)]
    ours = [m for m in policy.modules() if isinstance(m, nn.Linear)]
    assert len(ours) == len(reference)
    for a, b in zip(ours, reference):
        assert torch.equal(a.weight, b.weight) and torch.equal(a.bias, b.bias)
    assert all(isinstance(m, nn.ReLU) for m in policy.actor if not isinstance(m, nn.Linear))


def test_ortho_init_on_keeps_the_gains():
    policy = ActorCritic(3, 3, 2, PolicyConfig(actor_hidden=(8,), critic_hidden=(8,)))
    head = policy.actor[-1].weight  # [2, 8], orthogonal rows scaled by 0.01
    torch.testing.assert_close(head @ head.T, 1e-4 * torch.eye(2), atol=1e-9, rtol=0)
    assert torch.count_nonzero(policy.actor[0].bias) == 0


@pytest.mark.parametrize("data, msg", [
    ({"algo": {"advantage_scope": "batch"}}, "algo.advantage_scope must be one of"),
    ({"algo": {"reward_clip": 0}}, "algo.reward_clip must be > 0"),
    ({"algo": {"adam_eps": 0}}, r"algo.adam_eps must be in \(0, 1\)"),
    ({"policy": {"ortho_init": "no"}}, "policy.ortho_init must be true or false"),
])
def test_bad_option_values_are_rejected(data, msg):
    with pytest.raises(ConfigError, match=msg):
        from_dict(TrainConfig, data)


def test_tuned_halfcheetah_config_maps_to_the_zoo_setting_in_sb3():
    cfg = load_config("HalfCheetah-v5", config_file="trainers/configs/halfcheetah_tuned.yaml")
    normalize, ppo = sb3_settings(cfg)
    assert normalize == {"norm_obs": True, "norm_reward": True, "clip_obs": 10.0, "clip_reward": 10.0, "gamma": 0.98}
    kwargs = {k: v for k, v in ppo.items() if k != "policy_kwargs"}
    assert kwargs == {"n_steps": 512, "batch_size": 64, "n_epochs": 20, "learning_rate": 2.0633e-05, "gamma": 0.98,
                      "gae_lambda": 0.92, "clip_range": 0.1, "clip_range_vf": None, "normalize_advantage": True,
                      "ent_coef": 0.000401762, "vf_coef": 0.58096, "max_grad_norm": 0.8}
    pk = ppo["policy_kwargs"]
    assert pk["net_arch"] == {"pi": [256, 256], "vf": [256, 256]} and pk["activation_fn"] is nn.ReLU
    assert pk["log_std_init"] == pytest.approx(-2.0) and pk["ortho_init"] is False
    assert pk["optimizer_kwargs"] == {"eps": 1e-5} and cfg.num_envs == 1


def _tiny(out, **over) -> TrainConfig:
    base = {"task": POINT_REACH_ID, "num_envs": 8, "total_steps": 8 * 16 * 4, "seed": 3, "out": str(out),
            "algo": {"num_steps": 16, "num_epochs": 2, "num_minibatches": 2, "reward_normalization": True,
                     "advantage_scope": "minibatch", "adam_eps": 1e-5},
            "policy": {"actor_hidden": [16, 16], "critic_hidden": [16, 16], "ortho_init": False},
            "log": {"tensorboard": False, "progress": False, "plot": False, "save_interval": 2, "keep_every": 2}}
    return from_dict(TrainConfig, deep_merge(base, over))


def test_resume_with_reward_normalization_is_exact(tmp_path):
    full = train(_tiny(tmp_path / "full"))
    resumed = train(_tiny(tmp_path / "resumed"), resume=tmp_path / "full" / "checkpoint_2.pt")
    a = torch.load(full.checkpoint, weights_only=True)
    b = torch.load(resumed.checkpoint, weights_only=True)
    for k in ("returns", "moments"):
        assert torch.equal(a["reward_norm"][k], b["reward_norm"][k]), k
    assert a["reward_norm"]["moments"][2] > 8 * 16 * 4 * 0.99  # every transition counted
    for k, v in a["algo"]["policy"].items():
        assert torch.equal(v, b["algo"]["policy"][k]), k


def test_training_flushes_subnormals_and_restores_the_setting(tmp_path):
    seen = []
    assert not denormals_flushed()
    train(_tiny(tmp_path / "run", total_steps=8 * 16), callback=lambda runner, stats: seen.append(denormals_flushed()))
    assert seen == [True] and not denormals_flushed()
