"""``algo.amp`` on the CPU learner: bf16 autocast where the CPU has bf16 (``trainers.common.mixed_precision``).

One minibatch step under bf16 agrees with float32 within bf16's precision (8 significant bits):
losses within 2%, the gradient within 5% (relative L2) and pointing the same way (cosine >= 0.998);
measured on this test's learner: loss 0.003% apart, gradient 2.0% apart, cosine 0.99980. What
must stay float32 stays float32, a bf16 run learns, and a CPU without bf16 trains in float32 and
says so.
"""

import copy

import pytest
import torch
from tests.trainers.conftest import POINT_REACH_ID

from trainers.ppo import losses as L
from trainers.common import mixed_precision
from trainers.ppo import train
from trainers.ppo.config import AlgoConfig, LogConfig, PolicyConfig, TrainConfig
from trainers.ppo.envs import EnvDims
from trainers.ppo.evaluate import evaluate
from trainers.ppo.runner import build_learner
from trainers.ppo.storage import RolloutStorage

bf16_cpu = pytest.mark.skipif(not mixed_precision.cpu_has_bf16(), reason="this CPU has no native bf16")

LOSS_RTOL = 0.02
GRAD_REL_L2 = 0.05
GRAD_MIN_COSINE = 0.998


def learner_and_rollout(amp: bool, T=16, N=64, O=50, P=75, A=12):
    """A Go1-sized learner (privileged critic) on the CPU and a random rollout with its log-probs."""
    cfg = TrainConfig(task="t", num_envs=N, device="cpu", seed=0,
                      algo=AlgoConfig(num_steps=T, num_epochs=1, num_minibatches=1, schedule="fixed", amp=amp),
                      policy=PolicyConfig(actor_hidden=(256, 128, 64), critic_hidden=(256, 128, 64)))
    algo = build_learner(EnvDims(O, A, P), cfg, torch.device("cpu"))
    g = torch.Generator().manual_seed(1)
    st = RolloutStorage(T, N, O, P, A, "cpu")
    for name in ("obs", "critic_obs", "actions", "rewards", "values", "final_values"):
        getattr(st, name).copy_(torch.randn(getattr(st, name).shape, generator=g))
    st.action_means.copy_(st.actions + 0.1 * torch.randn(st.actions.shape, generator=g))
    st.log_probs.copy_(L.gaussian_log_prob(st.actions, st.action_means, algo.policy.log_std.detach()))
    st.terminated.copy_(torch.rand(T, N, generator=g) < 0.05)
    st.old_log_std.copy_(algo.policy.log_std.detach())
    st.compute_returns(0.99, 0.95)
    return algo, st


def losses_and_gradient(algo, st):
    mb = next(iter(st.minibatches(1, 1, torch.Generator().manual_seed(2), advantages=st.advantages)))
    loss, _, stats = algo.losses(mb, st.old_log_std)
    algo.optimizer.zero_grad(set_to_none=True)
    loss.backward()
    return loss.detach(), stats, torch.cat([p.grad.flatten() for p in algo.params])


@bf16_cpu
def test_a_bf16_step_matches_float32_within_bf16_precision():
    fp32_algo, st = learner_and_rollout(amp=False)
    bf16_algo = copy.deepcopy(fp32_algo)
    bf16_algo.amp_device = "cpu"
    loss32, stats32, grad32 = losses_and_gradient(fp32_algo, st)
    loss16, stats16, grad16 = losses_and_gradient(bf16_algo, st)
    assert loss16.dtype == torch.float32 and grad16.dtype == torch.float32
    torch.testing.assert_close(loss16, loss32, rtol=LOSS_RTOL, atol=1e-4)
    torch.testing.assert_close(stats16[:2], stats32[:2], rtol=LOSS_RTOL, atol=1e-4)  # policy and value loss
    assert not torch.equal(grad16, grad32), "autocast did not change anything: is bf16 on?"
    rel = float((grad16 - grad32).norm() / grad32.norm())
    cosine = float(torch.nn.functional.cosine_similarity(grad16, grad32, dim=0))
    assert rel < GRAD_REL_L2 and cosine > GRAD_MIN_COSINE, (rel, cosine)


@bf16_cpu
def test_what_ppo_is_sensitive_to_stays_float32():
    algo, st = learner_and_rollout(amp=True)
    assert algo.amp and algo.amp_device == "cpu"
    obs_n, critic_n = algo.normalize(st.obs[0], st.critic_obs[0])
    actions, means, log_probs, values = algo.act(obs_n, critic_n, torch.Generator().manual_seed(0))
    assert {t.dtype for t in (obs_n, actions, means, log_probs, values)} == {torch.float32}
    assert {p.dtype for p in algo.params} == {torch.float32}
    algo.update(st, torch.Generator().manual_seed(0))
    moments = [v for s in algo.optimizer.state.values() for v in s.values() if v.dim() > 0]
    assert moments and {m.dtype for m in moments} == {torch.float32}


def test_a_cpu_without_bf16_trains_in_float32_and_says_so(monkeypatch):
    monkeypatch.setattr(mixed_precision, "cpu_has_bf16", lambda: False)
    with pytest.warns(UserWarning, match="no native bf16 arithmetic.*training in float32"):
        algo, _ = learner_and_rollout(amp=True)
    assert not algo.amp
    assert mixed_precision.amp_device_type(False, torch.device("cpu")) is None


@bf16_cpu
def test_a_bf16_cpu_run_learns(tmp_path):
    cfg = TrainConfig(task=POINT_REACH_ID, num_envs=16, total_steps=16 * 32 * 20, seed=0, out=str(tmp_path),
                      algo=AlgoConfig(num_steps=32, gamma=0.95, amp=True),
                      policy=PolicyConfig(actor_hidden=(32, 32), critic_hidden=(32, 32)),
                      log=LogConfig(tensorboard=False, progress=False, plot=False))
    result = evaluate(train(cfg).checkpoint, episodes=32, num_envs=16)
    assert result.success_rate >= 0.9, result.summary()
    assert result.mean_length < 15, result.summary()
