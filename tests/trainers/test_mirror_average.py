"""``policy.mirror_average``: a deterministic policy that is exactly its own mirror image, training unchanged."""

import types

import numpy as np
import pytest
import torch
from tests.trainers.conftest import POINT_REACH_ID

from trainers import cli
from trainers.ppo.models import EmpiricalNormalizer, InferencePolicy

SWAP = types.SimpleNamespace(obs_perm=np.array([1, 0, 2]), obs_sign=np.array([1.0, 1.0, -1.0]),
                             act_perm=np.array([1, 0]), act_sign=np.array([1.0, 1.0]))


def _lopsided_actor():
    actor = torch.nn.Linear(3, 2, bias=False)
    actor.weight.data = torch.tensor([[0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])  # a(o) = (o2, 0)
    return actor


def test_the_average_of_a_lopsided_actor_and_its_mirror_by_hand():
    obs = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, -2.0]])
    plain = InferencePolicy(EmpiricalNormalizer(3, enabled=False), _lopsided_actor())
    averaged = InferencePolicy(EmpiricalNormalizer(3, enabled=False), _lopsided_actor(), SWAP)
    torch.testing.assert_close(plain(obs), torch.stack([obs[:, 2], torch.zeros(2)], 1))
    # m(o) = (o1, o0, -o2): a(m(o)) = (-o2, 0), mirrored back (0, -o2); the average (o2 / 2, -o2 / 2)
    torch.testing.assert_close(averaged(obs), torch.stack([obs[:, 2] / 2, -obs[:, 2] / 2], 1))


def test_it_is_equivariant_whatever_the_normalizer():
    torch.manual_seed(0)
    norm = EmpiricalNormalizer(3)
    norm.update_from_moments(EmpiricalNormalizer.moments(torch.randn(64, 3) * torch.tensor([1.0, 3.0, 0.5]) + 2.0))
    actor = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.ELU(), torch.nn.Linear(8, 2))
    policy = InferencePolicy(norm, actor, SWAP)
    obs = torch.randn(16, 3)
    mirrored_obs = obs[:, SWAP.obs_perm] * torch.tensor(SWAP.obs_sign, dtype=torch.float32)
    torch.testing.assert_close(policy(mirrored_obs), policy(obs)[:, SWAP.act_perm], rtol=1e-6, atol=1e-6)


def test_a_go1_run_trains_the_same_and_its_policy_onnx_and_eval_are_symmetric(tmp_path):
    """Same seed with the flag off and on: identical weights (the flag does not enter training); the
    flagged run's loaded policy is exactly its mirror image on real Go1 observations, and its ONNX agrees."""
    import onnxruntime as ort

    from tests.trainers.go1_states import go1_observations, train_tiny_go1
    from trainers.ppo.evaluate import export_onnx, load_policy

    def train(flag):
        return train_tiny_go1(tmp_path / f"m{flag}", "algo.symmetry_coef=0.1", f"policy.mirror_average={flag}")

    plain, averaged = train("false"), train("true")
    weights = [torch.load(r / "checkpoint.pt", weights_only=False)["algo"]["policy"] for r in (plain, averaged)]
    for name, tensor in weights[0].items():
        assert torch.equal(tensor, weights[1][name]), name

    obs, mirror = go1_observations(32)
    mirrored_obs = mirror.observation(obs).astype(np.float32)

    base, _, _ = load_policy(plain / "checkpoint.pt")
    policy, cfg, _ = load_policy(averaged / "checkpoint.pt")
    assert cfg.policy.mirror_average
    with torch.no_grad():
        act, act_m = policy(torch.as_tensor(obs)).numpy(), policy(torch.as_tensor(mirrored_obs)).numpy()
        expected = 0.5 * (base(torch.as_tensor(obs)).numpy()
                          + mirror.action(base(torch.as_tensor(mirrored_obs)).numpy()))
    np.testing.assert_allclose(act, expected, atol=1e-6)
    np.testing.assert_allclose(act_m, mirror.action(act), atol=1e-6)
    assert np.abs(base(torch.as_tensor(mirrored_obs)).detach().numpy()
                  - mirror.action(base(torch.as_tensor(obs)).detach().numpy())).max() > 1e-3  # the plain one is not

    onnx = ort.InferenceSession(str(export_onnx(averaged / "checkpoint.pt")), providers=["CPUExecutionProvider"])
    low, high = -1.0, 1.0  # Go1's action space; the ONNX output is the clipped mean
    np.testing.assert_allclose(onnx.run(None, {"obs": obs})[0], np.clip(act, low, high), atol=1e-5)


def test_a_task_without_a_mirror_map_is_refused(tmp_path, capsys):
    assert cli.main(["train", "--task", POINT_REACH_ID, "--num-envs", "8", "--total-steps", "64", "--no-progress",
                     "--out", str(tmp_path / "r"), "policy.mirror_average=true"]) == 2
    err = capsys.readouterr().err
    assert "policy.mirror_average" in err and "no left/right mirror map" in err and "set it to false" in err
