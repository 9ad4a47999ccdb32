"""SAC's entropy temperature: one update moves ``log_alpha`` by Adam's first step on the loss
``-log_alpha * (log pi(a|s) + target_entropy)``, computed here by hand from the actor's own draw."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from trainers.offpolicy.config import OffPolicyAlgo, OffPolicyNets
from trainers.offpolicy.learner import OffPolicyLearner
from trainers.offpolicy.networks import LOG_STD_MAX, LOG_STD_MIN
from trainers.offpolicy.replay import Batch

B, OBS, ACT = 64, 2, 3
MEAN = np.array([0.3, -0.2, 0.0])


def _learner(log_std_pre: float, **algo) -> OffPolicyLearner:
    """A SAC learner whose actor ignores its input: mean ``MEAN``, log-std from the pre-activation ``log_std_pre``."""
    learner = OffPolicyLearner(OBS, 0, ACT, OffPolicyAlgo(batch_size=B, n_step=1, alpha=0.05, **algo),
                               OffPolicyNets(actor_hidden=(8,), critic_hidden=(8,), obs_norm=False), torch.device("cpu"))
    last = learner.actor.net[-1]
    with torch.no_grad():
        last.weight.zero_()
        last.bias.copy_(torch.tensor([*MEAN, *[log_std_pre] * ACT]))
    return learner


def _batch() -> Batch:
    g = torch.Generator().manual_seed(1)
    return Batch(obs=torch.randn(B, OBS, generator=g), action=torch.rand(B, ACT, generator=g) * 2 - 1,
                 reward=torch.randn(B, generator=g), next_obs=torch.randn(B, OBS, generator=g), discount=torch.full((B,), 0.97))


def _log_prob_by_hand(noise: np.ndarray, log_std_pre: float) -> np.ndarray:
    """log pi of tanh(mean + std * noise) per sample: the Gaussian's log-density minus log(1 - tanh(u)^2) per dim."""
    log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (math.tanh(log_std_pre) + 1.0)
    pre = MEAN + math.exp(log_std) * noise
    gaussian = (-0.5 * noise**2 - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
    return gaussian - np.log(1.0 - np.tanh(pre) ** 2).sum(-1)


@pytest.mark.parametrize("log_std_pre, direction", [(0.0, -1), (-3.0, +1)], ids=["wide-falls", "narrow-rises"])
def test_one_update_moves_log_alpha_by_adams_first_step_on_the_temperature_loss(log_std_pre, direction):
    torch.manual_seed(5)
    learner = _learner(log_std_pre)
    before = learner.log_alpha.item()
    torch.manual_seed(11)
    stats = learner.update(_batch())
    torch.manual_seed(11)  # the update's draws: the next action's noise (target), then the actor's (its loss)
    torch.randn(B, ACT)
    log_prob = _log_prob_by_hand(torch.randn(B, ACT).double().numpy(), log_std_pre)
    target_entropy = -float(ACT)  # -action_dim * entropy_scale (1.0)
    grad = -(log_prob.mean() + target_entropy)  # d loss / d log_alpha
    lr = learner.algo.critic_lr
    assert learner.log_alpha.item() == pytest.approx(before - lr * grad / (abs(grad) + 1e-8), abs=1e-7)
    assert np.sign(learner.log_alpha.item() - before) == direction  # above the target entropy alpha falls, below it rises
    assert stats["entropy"] == pytest.approx(-log_prob.mean(), rel=1e-4)
    assert stats["loss/alpha"] == pytest.approx(-before * (log_prob.mean() + target_entropy), rel=1e-4)
    assert stats["alpha"] == pytest.approx(math.exp(learner.log_alpha.item()), rel=1e-6)


def test_the_target_entropy_scales_with_the_action_size_and_a_fixed_alpha_stays():
    assert _learner(0.0, entropy_scale=0.5).target_entropy == -1.5
    fixed = _learner(-3.0, autotune_alpha=False)
    before = fixed.log_alpha.item()
    stats = fixed.update(_batch())
    assert fixed.log_alpha.item() == before == pytest.approx(math.log(0.05)) and "loss/alpha" not in stats
