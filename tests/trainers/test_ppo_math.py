"""GAE and PPO loss pieces against hand-computed numbers."""

import math

import pytest
import torch

from trainers.ppo import losses as L
from trainers.ppo.gae import compute_gae


def _t(rows):
    return torch.tensor(rows, dtype=torch.float32)


def test_gae_hand_computed():
    # 3 steps x 3 envs, gamma 0.9, lambda 0.8 (gamma * lambda = 0.72)
    # env 0: never done; env 1: truncated at t=1 (bootstrap from final value 10);
    # env 2: terminated at t=1 (final value 10 must be ignored: no bootstrap)
    rewards = _t([[1, 1, 1], [2, 1, 1], [3, 1, 1]])
    values = _t([[0.5, 0, 1], [1.0, 0, 1], [1.5, 0, 1]])
    terminated = torch.tensor([[0, 0, 0], [0, 0, 1], [0, 0, 0]], dtype=torch.bool)
    truncated = torch.tensor([[0, 0, 0], [0, 1, 0], [0, 0, 0]], dtype=torch.bool)
    final_values = _t([[0, 0, 0], [0, 10, 10], [0, 0, 0]])
    last_values = _t([2.0, 0.0, 5.0])
    adv, ret = compute_gae(rewards, values, terminated, truncated, final_values, last_values, 0.9, 0.8)
    expected = _t([
        # env 0: deltas 1.4, 2.35, 3.3 -> A2 = 3.3, A1 = 2.35 + .72 * 3.3, A0 = 1.4 + .72 * A1
        [1.4 + 0.72 * (2.35 + 0.72 * 3.3), 1 + 0.72 * 10, 0.9 + 0.72 * 0],
        [2.35 + 0.72 * 3.3, 1 + 0.9 * 10, 1 + 0 - 1],
        [3.3, 1.0, 1 + 0.9 * 5 - 1],
    ])
    assert torch.allclose(adv, expected, atol=1e-5)
    assert torch.allclose(ret, expected + values, atol=1e-5)
    # spot values written out
    assert adv[0, 0].item() == pytest.approx(4.80272, abs=1e-5)
    assert adv[0, 1].item() == pytest.approx(8.2, abs=1e-5)
    assert adv[1, 2].item() == pytest.approx(0.0, abs=1e-6)


def test_gae_terminated_and_truncated_is_a_termination():
    r = _t([[1.0]])
    v = _t([[0.0]])
    both = torch.tensor([[True]])
    adv, _ = compute_gae(r, v, both, both, _t([[100.0]]), _t([100.0]), 0.99, 0.95)
    assert adv.item() == pytest.approx(1.0)


def test_gae_lambda_one_is_discounted_return_minus_value():
    T = 5
    r = torch.arange(1, T + 1, dtype=torch.float32).unsqueeze(1)
    v = torch.full((T, 1), 0.3)
    z = torch.zeros(T, 1, dtype=torch.bool)
    adv, ret = compute_gae(r, v, z, z, torch.zeros(T, 1), _t([2.0]), 0.9, 1.0)
    mc = sum(0.9 ** k * (k + 1) for k in range(T)) + 0.9 ** T * 2.0
    assert ret[0, 0].item() == pytest.approx(mc, rel=1e-5)


def test_gaussian_log_prob_entropy_kl_match_torch_distributions():
    torch.manual_seed(0)
    a, m, m2 = torch.randn(6, 3), torch.randn(6, 3), torch.randn(6, 3)
    ls, ls2 = torch.randn(3) * 0.3, torch.randn(3) * 0.3
    d, d2 = torch.distributions.Normal(m, ls.exp()), torch.distributions.Normal(m2, ls2.exp())
    assert torch.allclose(L.gaussian_log_prob(a, m, ls), d.log_prob(a).sum(-1), atol=1e-5)
    assert torch.allclose(L.gaussian_entropy(ls), d.entropy()[0].sum(), atol=1e-5)
    assert torch.allclose(L.gaussian_kl(m, ls, m2, ls2), torch.distributions.kl_divergence(d, d2).sum(-1), atol=1e-5)
    # by hand: a = (0.5, -1), mean 0, std (1, 2)
    c = 0.5 * math.log(2 * math.pi)
    got = L.gaussian_log_prob(_t([[0.5, -1.0]]), _t([[0.0, 0.0]]), _t([0.0, math.log(2.0)]))
    assert got.item() == pytest.approx(-0.125 - 0.125 - math.log(2.0) - 2 * c, abs=1e-6)


def test_clipped_surrogate_by_hand():
    logp = _t([math.log(1.5), math.log(0.5), 0.0])
    old = torch.zeros(3)
    adv = _t([2.0, -1.0, 1.0])
    # row 0: ratio 1.5, A 2 -> min(3.0, 1.2 * 2) = 2.4; row 1: ratio 0.5, A -1 -> min(-0.5, -0.8) = -0.8; row 2: 1
    assert L.clipped_surrogate_loss(logp, old, adv, 0.2).item() == pytest.approx(-(2.4 - 0.8 + 1.0) / 3, abs=1e-6)
    mask = _t([1.0, 0.0, 1.0])
    assert L.clipped_surrogate_loss(logp, old, adv, 0.2, mask).item() == pytest.approx(-1.7, abs=1e-6)


def test_clipped_value_loss_by_hand():
    v, old, ret = _t([1.0, 0.0]), _t([0.5, 0.5]), _t([2.0, 0.0])
    # row 0: max((1-2)^2, (0.7-2)^2) = 1.69; row 1: max(0, (0.3-0)^2) = 0.09
    assert L.clipped_value_loss(v, old, ret, 0.2).item() == pytest.approx((1.69 + 0.09) / 2, abs=1e-6)
    assert L.clipped_value_loss(v, old, ret, None).item() == pytest.approx(0.5, abs=1e-6)


def test_adaptive_learning_rate_rule():
    assert L.adaptive_learning_rate(1e-3, 0.05, 0.01) == pytest.approx(1e-3 / 1.5)
    assert L.adaptive_learning_rate(1e-3, 0.001, 0.01) == pytest.approx(1.5e-3)
    assert L.adaptive_learning_rate(1e-3, 0.01, 0.01) == 1e-3
    assert L.adaptive_learning_rate(1e-5, 1.0, 0.01) == 1e-5
    assert L.adaptive_learning_rate(1e-2, 0.0001, 0.01) == 1e-2
