"""CUDA paths of the bundled PPO (skipped without a GPU): graphed update == eager update,
checkpoint round trip in graph mode, bf16 autocast, a short CUDA training run that learns."""

import copy

import pytest
import torch
from tests.trainers.conftest import POINT_REACH_ID

from trainers.ppo import losses as L
from trainers.ppo.config import AlgoConfig, PolicyConfig, TrainConfig
from trainers.ppo.envs import EnvDims
from trainers.ppo.runner import build_learner
from trainers.ppo.storage import RolloutStorage

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


def test_adaptive_lr_tensor_matches_float_rule():
    for lr in (1e-5, 1e-3, 1e-2):
        for kl in (0.0, 0.001, 0.004, 0.01, 0.03, 1.0):
            got = L.adaptive_learning_rate_tensor(torch.tensor(lr), torch.tensor(kl), 0.01).item()
            assert got == pytest.approx(L.adaptive_learning_rate(lr, kl, 0.01), rel=1e-6)


def _learner(graph, schedule="adaptive", amp=False, T=16, N=64, O=10, P=6, A=3):
    cfg = TrainConfig(task="t", num_envs=N, device="cuda", seed=0,
                      algo=AlgoConfig(num_steps=T, num_epochs=3, num_minibatches=4, schedule=schedule,
                                      cuda_graph=graph, amp=amp),
                      policy=PolicyConfig(actor_hidden=(32, 32), critic_hidden=(32, 32)))
    algo = build_learner(EnvDims(O, A, P), cfg, torch.device("cuda"))
    g = torch.Generator().manual_seed(1)
    st = RolloutStorage(T, N, O, P, A, "cuda")
    for name in ("obs", "critic_obs", "actions", "rewards", "values", "final_values"):
        getattr(st, name).copy_(torch.randn(getattr(st, name).shape, generator=g))
    st.action_means.copy_(st.actions + 0.1 * torch.randn(st.actions.shape, generator=g).cuda())
    st.log_probs.copy_(L.gaussian_log_prob(st.actions, st.action_means, algo.policy.log_std.detach()))
    st.terminated.copy_(torch.rand(T, N, generator=g) < 0.05)
    st.truncated.copy_(torch.rand(T, N, generator=g) < 0.05)
    st.old_log_std.copy_(algo.policy.log_std.detach())
    return algo, st


@cuda
@pytest.mark.parametrize("schedule", ["adaptive", "fixed"])
def test_graphed_update_equals_eager(schedule):
    (eager, st_e), (graphed, st_g) = _learner(False, schedule), _learner(True, schedule)
    assert graphed.graphed is not None and eager.graphed is None
    for it in range(3):
        ge, gg = torch.Generator("cuda").manual_seed(it), torch.Generator("cuda").manual_seed(it)
        se, sg = eager.update(st_e, ge), graphed.update(st_g, gg)
        for k in se:
            assert se[k] == pytest.approx(sg[k], rel=1e-3, abs=1e-5), k
    for pe, pg in zip(eager.policy.parameters(), graphed.policy.parameters()):
        torch.testing.assert_close(pe, pg, rtol=1e-4, atol=1e-5)
    assert eager.learning_rate == pytest.approx(graphed.learning_rate, rel=1e-5)


@cuda
def test_graph_mode_checkpoint_roundtrip_and_eager_interop():
    a, st = _learner(True)
    a.update(st, torch.Generator("cuda").manual_seed(0))
    state = copy.deepcopy(a.state_dict())  # as if read from a file: no tensors shared with `a`
    b, _ = _learner(True)
    b.load_state_dict(state)
    c, _ = _learner(False)
    c.load_state_dict(state)  # a graph-mode checkpoint resumes in eager mode too
    outs = []
    for algo in (a, b, c):
        algo.update(st, torch.Generator("cuda").manual_seed(5))
        outs.append(torch.cat([p.detach().flatten() for p in algo.policy.parameters()]))
    torch.testing.assert_close(outs[0], outs[1], rtol=1e-5, atol=1e-6)  # same mode: same kernels
    torch.testing.assert_close(outs[0], outs[2], rtol=1e-3, atol=5e-5)  # graph vs eager kernels


@cuda
def test_bf16_graphed_update_runs_and_stays_finite():
    algo, st = _learner(True, amp=True)
    s = algo.update(st, torch.Generator("cuda").manual_seed(0))
    assert all(torch.isfinite(torch.tensor(v)) for v in s.values())


@cuda
def test_cuda_training_learns_point_reach(tmp_path):
    from trainers.ppo import train
    from trainers.ppo.config import from_dict
    from trainers.ppo.evaluate import evaluate
    cfg = from_dict(TrainConfig, {
        "task": POINT_REACH_ID, "num_envs": 16, "total_steps": 16 * 32 * 20, "seed": 0, "out": str(tmp_path),
        "device": "cuda", "algo": {"num_steps": 32, "gamma": 0.95, "amp": True},
        "policy": {"actor_hidden": [32, 32], "critic_hidden": [32, 32]},
        "log": {"tensorboard": False, "progress": False, "plot": False}})
    res = train(cfg)
    ev = evaluate(res.checkpoint, episodes=32, num_envs=16)
    assert ev.success_rate >= 0.9, ev.summary()
