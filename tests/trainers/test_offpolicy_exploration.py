"""Correlated exploration noise (``algo.exploration_correlation``): the AR(1) step by hand, its statistics (unit
variance, lag-k correlation rho^k, a restarted env forgets), the actor using the draw it is given, the config's
bounds, and exact resume with the noise's state in the checkpoint."""

from __future__ import annotations

import math

import pytest
import torch

from trainers.offpolicy.config import load_offpolicy_config
from trainers.offpolicy.exploration import CorrelatedNoise, correlated_step
from trainers.offpolicy.networks import Actor
from trainers.offpolicy.runner import OffPolicyRunner
from unilab_envs.config import ConfigError


def test_one_step_by_hand():
    out = correlated_step(torch.tensor([2.0, -1.0]), torch.tensor([1.0, 0.5]), 0.6)
    torch.testing.assert_close(out, torch.tensor([0.6 * 2 + 0.8 * 1, 0.6 * -1 + 0.8 * 0.5]))


def _series(noise: CorrelatedNoise, steps: int) -> torch.Tensor:
    return torch.stack([noise.next().clone() for _ in range(steps)])  # (steps, envs, dims)


def test_the_noise_keeps_unit_variance_and_remembers_rho_to_the_k():
    torch.manual_seed(0)
    rho, envs = 0.9, 20000
    x = _series(CorrelatedNoise(envs, 2, rho, torch.device("cpu")), 12)
    assert x[-1].mean().abs() < 0.03 and abs(x[-1].var().item() - 1.0) < 0.03  # the marginal stays N(0, 1)
    for lag in (1, 5, 10):
        corr = (x[-1] * x[-1 - lag]).mean().item()
        assert corr == pytest.approx(rho ** lag, abs=0.03), lag
    white = (x[-1, :, 0] * x[-1, :, 1]).mean().item()  # the action dims are independent of each other
    assert abs(white) < 0.03


def test_a_restarted_env_forgets_its_episode_and_the_others_do_not():
    torch.manual_seed(1)
    noise = CorrelatedNoise(20000, 1, 0.95, torch.device("cpu"))
    before = _series(noise, 5)[-1]
    noise.restart(list(range(10000)))
    after = noise.next()
    forgot = (after[:10000] * before[:10000]).mean().item()
    kept = (after[10000:] * before[10000:]).mean().item()
    assert abs(forgot) < 0.04 and kept == pytest.approx(0.95, abs=0.04)
    assert abs(after[:10000].var().item() - 1.0) < 0.05


def test_the_sac_actor_explores_with_the_draw_it_is_given():
    torch.manual_seed(2)
    actor = Actor(3, 2, (8,), layer_norm=False, stochastic=True)
    obs, draw = torch.randn(4, 3), torch.randn(4, 2)
    a1, logp1 = actor.sample(obs, draw)
    a2, logp2 = actor.sample(obs, draw)
    torch.testing.assert_close(a1, a2)
    torch.testing.assert_close(logp1, logp2)
    out = actor.net(obs)
    log_std = -5.0 + 3.5 * (torch.tanh(out[:, 2:]) + 1.0)
    torch.testing.assert_close(a1, torch.tanh(out[:, :2] + log_std.exp() * draw))


def test_the_config_keeps_the_correlation_below_one():
    for bad in ("1.0", "-0.1"):
        with pytest.raises(ConfigError, match="exploration_correlation must be in"):
            load_offpolicy_config("sac", "UniLab/UR5Reach-v0", overrides=[f"algo.exploration_correlation={bad}"])
    with pytest.raises(ValueError, match=r"in \(0, 1\)"):
        CorrelatedNoise(2, 2, 0.0, torch.device("cpu"))


TINY = ["num_envs=8", "algo.learning_starts=160", "algo.batch_size=32", "algo.buffer_size=2000",
        "nets.actor_hidden=[16]", "nets.critic_hidden=[16]", "log.progress=false", "log.tensorboard=false", "log.plot=false",
        "log.every_steps=160", "log.checkpoint_every_steps=100000", "torch_threads=1", "log.save_replay=true",
        "algo.exploration_correlation=0.9"]


@pytest.mark.parametrize("kind", ["sac", "td3"])
def test_a_resumed_run_carries_the_noise_and_continues_bit_for_bit(kind, tmp_path):
    def config(out, steps):
        return load_offpolicy_config(kind, "UniLab/UR5Reach-v0", overrides=[*TINY, f"out={tmp_path / out}", f"total_steps={steps}"])

    whole = OffPolicyRunner(config("whole", 480))
    whole.train()
    OffPolicyRunner(config("half", 320)).train()
    resumed = OffPolicyRunner(config("half", 480), resume=tmp_path / "half" / "checkpoint.pt")
    assert resumed.noise.value is not None
    resumed.train()
    torch.testing.assert_close(resumed.noise.value, whole.noise.value, rtol=0, atol=0)
    for key, value in whole.learner.state_dict().items():
        torch.testing.assert_close(resumed.learner.state_dict()[key], value, rtol=0, atol=0, msg=key)
    assert math.isfinite(float(whole.noise.value.sum()))
