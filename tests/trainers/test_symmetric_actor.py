"""``policy.symmetric_actor``: training's Gaussian mean is the deployed mirror average."""

import types

import numpy as np
import pytest
import torch
from tests.trainers.conftest import POINT_REACH_ID

from trainers import cli
from trainers.ppo.config import ConfigError, PolicyConfig
from trainers.ppo.models import EmpiricalNormalizer, InferencePolicy
from trainers.ppo.symmetry import MirrorAveragedMean

SWAP = types.SimpleNamespace(obs_perm=np.array([1, 0, 2]), obs_sign=np.array([1.0, 1.0, -1.0]),
                             act_perm=np.array([1, 0]), act_sign=np.array([1.0, 1.0]))


class _Policy(torch.nn.Module):
    def __init__(self, actor):
        super().__init__()
        self.actor = actor

    def action_mean(self, obs):
        return self.actor(obs)


def test_a_lopsided_actor_is_averaged_by_hand():
    actor = torch.nn.Linear(3, 2, bias=False)
    actor.weight.data = torch.tensor([[0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])  # a(o) = (o2, 0)
    obs = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, -2.0]])
    mean = MirrorAveragedMean(SWAP, torch.device("cpu"))(_Policy(actor), EmpiricalNormalizer(3, enabled=False), obs)
    # a(m(o)) = (-o2, 0), mirrored back (0, -o2): the average is (o2 / 2, -o2 / 2)
    torch.testing.assert_close(mean, torch.stack([obs[:, 2] / 2, -obs[:, 2] / 2], 1))


def test_training_mean_equals_the_deployed_average_whatever_the_normalizer():
    torch.manual_seed(0)
    norm = EmpiricalNormalizer(3)
    norm.update_from_moments(EmpiricalNormalizer.moments(torch.randn(64, 3) * torch.tensor([1.0, 3.0, 0.5]) + 2.0))
    actor = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.ELU(), torch.nn.Linear(8, 2))
    raw = torch.randn(16, 3) * 0.5 + 2.0  # inside the normalizer's clip
    training = MirrorAveragedMean(SWAP, torch.device("cpu"))(_Policy(actor), norm, norm.normalize(raw))
    deployed = InferencePolicy(norm, actor, SWAP)(raw)
    torch.testing.assert_close(training, deployed, rtol=1e-5, atol=1e-5)


def test_it_needs_the_deployed_average():
    with pytest.raises(ConfigError, match="policy.mirror_average: true"):
        PolicyConfig(symmetric_actor=True)


def test_a_go1_run_samples_around_the_average_and_trains_other_weights(tmp_path):
    """Same seed with the flag off and on: the flagged run's rollout means are exactly mirror
    equivariant (its stored Gaussian means), the weights differ from the plain run's."""
    from tests.trainers.go1_states import go1_observations, train_tiny_go1
    from trainers.ppo.evaluate import load_policy
    from trainers.ppo.runner import build_learner

    def train(flag):
        return train_tiny_go1(tmp_path / f"s{flag}", "policy.mirror_average=true", f"policy.symmetric_actor={flag}")

    plain, symmetric = train("false"), train("true")
    weights = [torch.load(r / "checkpoint.pt", weights_only=False)["algo"]["policy"] for r in (plain, symmetric)]
    assert any(not torch.equal(t, weights[1][k]) for k, t in weights[0].items())

    # the learner rebuilt from the run's config has the deployed (averaged) action as its Gaussian mean
    obs, mirror = go1_observations(32)
    policy, cfg, _ = load_policy(symmetric / "checkpoint.pt")
    assert cfg.policy.symmetric_actor
    state = torch.load(symmetric / "checkpoint.pt", weights_only=False)["algo"]
    dims = types.SimpleNamespace(obs=obs.shape[1], privileged=state["policy"]["critic.0.weight"].shape[1], act=12)
    algo = build_learner(dims, cfg, torch.device("cpu"), mirror=mirror)
    algo.load_state_dict(state)
    with torch.no_grad():
        mean = algo.action_mean(algo.obs_normalizer(torch.as_tensor(obs)))
        deployed = policy(torch.as_tensor(obs))
        mirrored = algo.action_mean(algo.obs_normalizer(torch.as_tensor(mirror.observation(obs), dtype=torch.float32)))
    np.testing.assert_allclose(mean.numpy(), deployed.numpy(), atol=1e-5)
    np.testing.assert_allclose(mirrored.numpy(), mirror.action(mean.numpy()), atol=1e-5)


def test_a_task_without_a_mirror_map_is_refused(tmp_path, capsys):
    assert cli.main(["train", "--task", POINT_REACH_ID, "--num-envs", "8", "--total-steps", "64", "--no-progress",
                     "--out", str(tmp_path / "r"), "policy.mirror_average=true", "policy.symmetric_actor=true"]) == 2
    assert "no left/right mirror map" in capsys.readouterr().err
