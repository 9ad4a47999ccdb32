"""The mirror loss (``algo.symmetry_coef``): its value by hand, and a Go1 actor that learns to be symmetric."""

import types

import numpy as np
import pytest
import torch
from tests.trainers.conftest import POINT_REACH_ID

from trainers import cli
from trainers.ppo.config import PolicyConfig
from trainers.ppo.models import ActorCritic, EmpiricalNormalizer
from trainers.ppo.symmetry import MirrorAveragedMean, SymmetryLoss, mirror_normalized

SWAP = types.SimpleNamespace(obs_perm=np.array([1, 0, 2]), obs_sign=np.array([1.0, 1.0, -1.0]),
                             act_perm=np.array([1, 0]), act_sign=np.array([1.0, 1.0]))


def _linear_policy(weight):
    policy = ActorCritic(3, 3, 2, PolicyConfig(actor_hidden=(4,), critic_hidden=(4,)))
    policy.actor = torch.nn.Linear(3, 2, bias=False)
    policy.actor.weight.data = torch.tensor(weight, dtype=torch.float32)
    return policy


def test_mirror_of_normalized_observations_is_its_own_inverse():
    torch.manual_seed(0)
    norm = EmpiricalNormalizer(3)
    norm.update_from_moments(EmpiricalNormalizer.moments(torch.randn(64, 3) * torch.tensor([1.0, 3.0, 0.5]) + 2.0))
    loss = SymmetryLoss(SWAP, 1.0, torch.device("cpu"))
    x = torch.randn(8, 3) * 0.5
    torch.testing.assert_close(mirror_normalized(loss.mirror, norm, mirror_normalized(loss.mirror, norm, x)), x, rtol=1e-5, atol=1e-5)


def test_an_equivariant_actor_has_zero_loss_and_another_its_hand_computed_loss():
    norm = EmpiricalNormalizer(3, enabled=False)
    loss = SymmetryLoss(SWAP, 1.0, torch.device("cpu"))
    obs = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0]])
    # a(o) = W o with W mapping (o0, o1, o2) -> (o0 + 2 o1, 2 o0 + o1): swapping o0, o1 swaps the outputs
    fair = _linear_policy([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0]])
    assert float(loss(fair, norm, obs, fair.action_mean(obs), None).detach()) == pytest.approx(0.0)
    # a(o) = (o2, 0): the mirrored obs has -o2, so a(m(o)) = (-o2, 0) against m(a(o)) = (0, o2)
    lopsided = _linear_policy([[0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    expected = float(((obs[:, 2] ** 2) * 2).mean())
    assert float(loss(lopsided, norm, obs, lopsided.action_mean(obs), None).detach()) == pytest.approx(expected)


def test_go1_actor_becomes_more_symmetric_with_the_loss(tmp_path):
    """Same seed and steps with the loss off and on: the trained actor's mirror error, measured on the
    same Go1 observations, is several times lower with the loss; the loss is logged."""
    import csv

    from tests.trainers.go1_states import go1_observations
    from trainers.ppo.evaluate import load_policy

    obs, mirror = go1_observations(64)

    def mirror_error(coef):
        out = tmp_path / f"c{coef}"
        assert cli.main(["train", "--task", "UniLab/Go1Joystick-v0", "--num-envs", "32", "--total-steps", "5120",
                         "--out", str(out), "--no-progress", "algo.num_steps=16", "log.tensorboard=false",
                         "log.plot=false", f"algo.symmetry_coef={coef}", "policy.actor_hidden=[32,32]",
                         "policy.critic_hidden=[32,32]"]) == 0
        policy, _, _ = load_policy(out / "checkpoint.pt")
        with torch.no_grad():
            act = policy(torch.as_tensor(obs)).numpy()
            act_m = policy(torch.as_tensor(mirror.observation(obs), dtype=torch.float32)).numpy()
        rows = list(csv.DictReader(open(out / "progress.csv")))
        return float(np.square(act_m - mirror.action(act)).sum(1).mean()), rows

    free, rows_free = mirror_error(0.0)
    bound, rows = mirror_error(1.0)
    assert "loss/symmetry" not in rows_free[0] or rows_free[0]["loss/symmetry"] == ""
    assert float(rows[-1]["loss/symmetry"]) >= 0.0
    assert bound < 0.3 * free


def test_a_task_without_a_mirror_map_is_refused(tmp_path, capsys):
    assert cli.main(["train", "--task", POINT_REACH_ID, "--num-envs", "8", "--total-steps", "64", "--no-progress",
                     "--out", str(tmp_path / "r"), "algo.symmetry_coef=0.5"]) == 2
    assert "no left/right mirror map" in capsys.readouterr().err
