"""``--init-from RUN`` with an ``obs_history`` RUN did not have: the networks widen and act as RUN's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from trainers import cli
from trainers.common.checkpoint import load_checkpoint
from trainers.ppo.config import PolicyConfig
from trainers.ppo.models import ActorCritic, EmpiricalNormalizer
from trainers.ppo.runner import CKPT_FORMAT, CKPT_VERSION
from trainers.ppo.widen import insert_statistics, insert_zero_columns, widen_for_history

GO1 = "UniLab/Go1Joystick-v0"
QUIET = ["--task", GO1, "--num-envs", "2", "--no-progress", "algo.num_steps=8", "algo.num_minibatches=1",
         "policy.actor_hidden=[16]", "policy.critic_hidden=[16]", "log.tensorboard=false", "log.plot=false",
         "env_kwargs.num_threads=1"]
HISTORY = ["obs_history.groups=[gyro,joint_vel]", "obs_history.length=3"]


def test_zero_columns_and_statistics_are_inserted_where_asked():
    w = torch.arange(6.0).reshape(2, 3)
    torch.testing.assert_close(insert_zero_columns(w, 2, 2), torch.tensor([[0.0, 1.0, 0.0, 0.0, 2.0], [3.0, 4.0, 0.0, 0.0, 5.0]]))
    state = {"mean": torch.tensor([1.0, 2.0, 3.0]), "var": torch.tensor([4.0, 5.0, 6.0]), "count": torch.tensor(7.0)}
    out = insert_statistics(state, 2, torch.tensor([1, 0]))
    torch.testing.assert_close(out["mean"], torch.tensor([1.0, 2.0, 2.0, 1.0, 3.0]))
    torch.testing.assert_close(out["var"], torch.tensor([4.0, 5.0, 5.0, 4.0, 6.0]))
    assert out["count"] is state["count"]


def _networks(ckpt: dict) -> tuple[ActorCritic, EmpiricalNormalizer, EmpiricalNormalizer]:
    """The checkpoint's actor-critic and normalizers, as the trainer builds them."""
    dims, algo = ckpt["dims"], ckpt["algo"]
    policy = ActorCritic(dims["obs"], dims["privileged"], dims["act"], PolicyConfig(actor_hidden=(16,), critic_hidden=(16,)))
    policy.load_state_dict(algo["policy"])
    obs_norm, critic_norm = EmpiricalNormalizer(dims["obs"]), EmpiricalNormalizer(dims["privileged"])
    obs_norm.load_state_dict(algo["obs_normalizer"])
    critic_norm.load_state_dict(algo["critic_normalizer"])
    return policy, obs_norm, critic_norm


@pytest.fixture(scope="module")
def plain_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("widen") / "plain"
    assert cli.main(["train", *QUIET, "--total-steps", "32", "--out", str(out), "sim2real={extends: go1_real, privileged_critic: true}"]) == 0
    return out


def test_widened_networks_compute_what_the_run_did_whatever_the_history_holds(plain_run):
    ckpt = load_checkpoint(plain_run / "checkpoint.pt", CKPT_FORMAT, CKPT_VERSION)
    obs, priv = ckpt["dims"]["obs"], ckpt["dims"]["privileged"]
    assert priv and priv > obs  # the critic reads the observation, then the perturbations
    sources = np.array([3, 4, 5, 0, 7, 3])
    wide = widen_for_history(ckpt, sources)
    assert wide["dims"] == {**ckpt["dims"], "obs": obs + 6, "privileged": priv + 6}
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(5, obs, generator=gen) * 3
    extras = torch.randn(5, priv - obs, generator=gen)
    past = torch.randn(5, 6, generator=gen) * 5  # anything: the new columns weigh nothing yet
    (policy, obs_norm, critic_norm), (wide_policy, wide_obs_norm, wide_critic_norm) = _networks(ckpt), _networks(wide)
    with torch.no_grad():
        act_old = policy.action_mean(obs_norm(x))
        act_new = wide_policy.action_mean(wide_obs_norm(torch.cat([x, past], 1)))
        v_old = policy.value(critic_norm(torch.cat([x, extras], 1)))
        v_new = wide_policy.value(wide_critic_norm(torch.cat([x, past, extras], 1)))
    torch.testing.assert_close(act_new, act_old, rtol=1e-6, atol=1e-5)  # summation order only
    torch.testing.assert_close(v_new, v_old, rtol=1e-6, atol=1e-5)  # summation order only
    old, new = ckpt["algo"], wide["algo"]
    # a past frame starts with the statistics of the column it is a past frame of
    torch.testing.assert_close(new["obs_normalizer"]["mean"][obs:], old["obs_normalizer"]["mean"][sources])
    torch.testing.assert_close(new["critic_normalizer"]["var"][obs:obs + 6], old["critic_normalizer"]["var"][sources])
    torch.testing.assert_close(new["critic_normalizer"]["mean"][obs + 6:], old["critic_normalizer"]["mean"][obs:])


def test_cli_fine_tunes_a_plain_run_with_a_history_and_evaluates_it(plain_run, tmp_path, capsys):
    fine = tmp_path / "fine"
    assert cli.main(["train", *QUIET, "--total-steps", "16", "--out", str(fine), "--init-from", str(plain_run),
                     "sim2real={extends: go1_real, privileged_critic: true}", *HISTORY]) == 0
    err = capsys.readouterr().err
    # 2 past frames of gyro (3) and joint_vel (12); the critic came along, it was not restarted
    assert "widened: 30 history columns at zero weight" in err and "fresh: critic" not in err, err
    ckpt = load_checkpoint(fine / "checkpoint.pt", CKPT_FORMAT, CKPT_VERSION)
    plain = load_checkpoint(plain_run / "checkpoint.pt", CKPT_FORMAT, CKPT_VERSION)
    assert ckpt["dims"]["obs"] == plain["dims"]["obs"] + 30
    assert ckpt["config"]["obs_history"] == {"groups": ["gyro", "joint_vel"], "length": 3}
    assert cli.main(["eval", str(fine), "--episodes", "2"]) == 0
    assert "episodes 2" in capsys.readouterr().out
