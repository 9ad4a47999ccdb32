"""``algo.bf16_cpu``: the off-policy update under bf16 autocast on a CPU with native bf16 (``precision_device``).

One update under bf16 agrees with float32 within bf16's precision (8 significant bits): the critic loss
within 3%, the critic's gradient within 8% (relative L2) and pointing the same way (cosine >= 0.997);
measured on this test's Go1-sized learner (512-256-128 critics with layer norm): loss 1.4% apart,
gradient 5.2% apart, cosine 0.9987. The
weights, Adam's moments and acting stay float32, a bf16 run learns, a CPU without bf16 trains in float32
and says so, and the default is float32 on every CPU.
"""

from __future__ import annotations

import copy
import warnings

import pytest
import torch

from tests.trainers.conftest import POINT_REACH_ID
from tests.trainers.test_offpolicy_learning import RUN, reaches
from trainers.offpolicy.config import load_offpolicy_config
from trainers.offpolicy.evaluate import evaluate_offpolicy, load_actor
from trainers.offpolicy.learner import OffPolicyLearner, precision_device
from trainers.offpolicy.replay import Batch
from trainers.offpolicy.runner import OffPolicyRunner
from trainers.common import mixed_precision

bf16_cpu = pytest.mark.skipif(not mixed_precision.cpu_has_bf16(), reason="this CPU has no native bf16")

LOSS_RTOL = 0.03
GRAD_REL_L2 = 0.08
GRAD_MIN_COSINE = 0.997
OBS, EXTRA, ACTION, BATCH = 50, 25, 12, 256  # Go1's observation, privileged extras and actions


def go1_sized_learner(bf16_cpu_on: bool) -> OffPolicyLearner:
    cfg = load_offpolicy_config("sac", "UniLab/Go1Joystick-v0", overrides=[f"algo.bf16_cpu={str(bf16_cpu_on).lower()}"])
    torch.manual_seed(0)
    return OffPolicyLearner(OBS, EXTRA, ACTION, cfg.algo, cfg.nets, torch.device("cpu"))


def random_batch() -> Batch:
    g = torch.Generator().manual_seed(1)
    return Batch(obs=torch.randn(BATCH, OBS, generator=g), action=torch.rand(BATCH, ACTION, generator=g) * 2 - 1,
                 reward=torch.randn(BATCH, generator=g), next_obs=torch.randn(BATCH, OBS, generator=g),
                 discount=torch.full((BATCH,), 0.97 ** 3), critic_obs=torch.randn(BATCH, EXTRA, generator=g),
                 next_critic_obs=torch.randn(BATCH, EXTRA, generator=g))


def critic_gradient_of_one_update(learner: OffPolicyLearner, batch: Batch) -> tuple[dict, torch.Tensor]:
    """The update's stats and the critic's gradient as the optimizer saw it."""
    seen, step = [], learner.critic_opt.step
    learner.critic_opt.step = lambda *a, **k: (seen.append(torch.cat([p.grad.flatten() for p in learner.critic.parameters()])),
                                               step(*a, **k))[1]
    stats = learner.update(batch)
    return stats, seen[0]


@bf16_cpu
def test_a_bf16_update_matches_float32_within_bf16_precision():
    fp32 = go1_sized_learner(False)
    bf16 = copy.deepcopy(fp32)
    bf16.precision_device = "cpu"
    assert fp32.precision_device is None
    batch = random_batch()
    stats32, grad32 = critic_gradient_of_one_update(fp32, batch)
    stats16, grad16 = critic_gradient_of_one_update(bf16, batch)
    assert stats16["loss/critic"] == pytest.approx(stats32["loss/critic"], rel=LOSS_RTOL)
    assert not torch.equal(grad16, grad32), "autocast did not change anything: is bf16 on?"
    rel = float((grad16 - grad32).norm() / grad32.norm())
    cosine = float(torch.nn.functional.cosine_similarity(grad16, grad32, dim=0))
    assert grad16.dtype == torch.float32 and rel < GRAD_REL_L2 and cosine > GRAD_MIN_COSINE, (rel, cosine)


@bf16_cpu
def test_weights_moments_and_acting_stay_float32():
    learner = go1_sized_learner(True)
    assert learner.precision_device == "cpu"
    learner.update(random_batch())
    assert {p.dtype for p in learner.parameters()} == {torch.float32}
    moments = [v for opt in (learner.actor_opt, learner.critic_opt) for s in opt.state.values() for v in s.values()
               if v.dim() > 0]
    assert moments and {m.dtype for m in moments} == {torch.float32}
    assert learner.act(torch.randn(4, OBS), explore=True).dtype == torch.float32


def test_float32_by_default_and_on_a_cpu_without_bf16(monkeypatch):
    algo = load_offpolicy_config("sac", "UniLab/Go1Joystick-v0").algo
    assert algo.bf16_cpu is False and precision_device(algo, torch.device("cpu")) is None
    monkeypatch.setattr(mixed_precision, "cpu_has_bf16", lambda: False)
    asked = load_offpolicy_config("sac", "UniLab/Go1Joystick-v0", overrides=["algo.bf16_cpu=true"]).algo
    with pytest.warns(UserWarning, match="algo.bf16_cpu: this cpu has no native bf16 arithmetic.*training in float32"):
        assert precision_device(asked, torch.device("cpu")) is None


@bf16_cpu
def test_a_bf16_cpu_run_learns(point_reach, tmp_path, capsys, monkeypatch):
    """The off-policy learning test's PointReach run, under bf16: it reaches as the float32 run does; its actor
    loads on a CPU without bf16 with no warning (acting is float32)."""
    cfg = load_offpolicy_config("sac", POINT_REACH_ID, overrides=[*RUN, f"out={tmp_path}", "algo.bf16_cpu=true"])
    OffPolicyRunner(cfg).train()
    assert "updates under bf16 autocast" in capsys.readouterr().out
    result = evaluate_offpolicy(tmp_path, episodes=32, num_envs=16, seed=3, progress=False)
    assert reaches(result), result
    monkeypatch.setattr(mixed_precision, "cpu_has_bf16", lambda: False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_actor(tmp_path)
