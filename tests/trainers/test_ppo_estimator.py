"""A learned state estimator in the bundled PPO (``policy.estimator``): its config and refusals, the detached
estimate the actor reads, the raw targets it regresses, that it learns (and a frozen one does not), its error in
eval, and the ONNX's second output equal to the torch estimator. On PointReach with named groups: its privileged
``offset`` (goal - pos) is what the estimator estimates."""

import numpy as np
import pytest
import torch
from tests.trainers.test_ppo_checkpoint import tiny_cfg

from trainers.ppo.config import ConfigError, TrainConfig, deep_merge, from_dict
from trainers.ppo.runner import Runner

NAMED = {"env_kwargs": {"named_groups": True}}
EST = {"policy": {"estimator": {"targets": ["offset"], "hidden": [32]}}}


def est_cfg(out, **over) -> TrainConfig:
    return tiny_cfg(out, **deep_merge(deep_merge(NAMED, EST), over))


# --------------------------------------------------------------------------- config


def test_the_section_parses_typed_and_is_filled_in_from_the_env(tmp_path):
    cfg = from_dict(TrainConfig, {"policy": {"estimator": {"targets": ["linvel"], "hidden": [128, 64], "coef": 2}}})
    est = cfg.policy.estimator
    assert (est.targets, est.hidden, est.coef, est.columns, est.size) == (("linvel",), (128, 64), 2.0, (), 0)
    assert from_dict(TrainConfig, {}).policy.estimator is None  # off by default
    runner = Runner(est_cfg(tmp_path))
    try:  # the critic input is obs (4) then privileged (offset 0:2, distance 2:3): offset sits at columns 4, 5
        est = runner.cfg.policy.estimator
        assert (est.columns, est.sizes, runner.algo.policy.target_columns) == ((4, 5), (2,), (4, 5))
        assert runner.algo.policy.estimator_labels == ("offset_0", "offset_1")
    finally:
        runner.close()


@pytest.mark.parametrize("over, message", [
    ({"policy": {"estimator": {"tagets": ["linvel"]}}}, r"unknown config key 'policy.estimator.tagets'"),
    ({"policy": {"estimator": {"coef": 0}}}, r"policy.estimator.coef must be > 0"),
    ({"policy": {"estimator": {"warmup_iterations": -1}}}, r"policy.estimator.warmup_iterations must be >= 0"),
    ({"policy": {"estimator": {"targets": []}}}, r"policy.estimator.targets must be distinct group names"),
    ({"policy": {"estimator": {"columns": [4, 5], "sizes": [3]}}}, r"filled in from the env when the run starts"),
    ({"policy": {"estimator": {}, "recurrent": "gru"}}, r"policy.estimator with policy.recurrent is not supported"),
])
def test_what_the_config_refuses_is_said_in_one_line(over, message):
    with pytest.raises(ConfigError, match=message) as e:
        from_dict(TrainConfig, over)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("over, message", [
    ({"policy": {"estimator": {"targets": ["pos"]}}}, r"the actor already reads 'pos'.*critic_only_groups: \[pos\]"),
    ({"policy": {"estimator": {"targets": ["nope"]}}}, r"'nope' is not in .*privileged observation \(its groups: "
                                                       r"\['offset', 'distance'\]\)"),
    ({"env_kwargs": {"named_groups": False}}, r"has no named privileged observation groups"),
])
def test_a_target_the_env_cannot_give_is_refused_in_one_line(tmp_path, over, message):
    with pytest.raises(ConfigError, match=message) as e:
        Runner(est_cfg(tmp_path, **over))
    assert "\n" not in str(e.value)


def test_distilling_into_an_estimator_student_and_widening_one_are_refused(tmp_path, capsys):
    from trainers import cli
    from trainers.ppo.widen import widen_for_history

    assert cli.main(["distill", "--teacher", "policies/go1_rough", "--out", str(tmp_path / "s"),
                     "policy.estimator.targets=[linvel]"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "distilling into a student with a state estimator is not supported yet" in err[0], err
    ckpt = {"dims": {"obs": 4}, "algo": {"policy": {"actor.estimator.0.weight": torch.zeros(8, 4)}}}
    with pytest.raises(ValueError, match="whose actor has a state estimator"):
        widen_for_history(ckpt, np.array([0, 1]))


# --------------------------------------------------------------------------- the networks and the targets


def test_the_actor_reads_the_estimate_detached_and_the_supervised_loss_trains_only_the_estimator(tmp_path):
    runner = Runner(est_cfg(tmp_path))
    try:
        policy = runner.algo.policy
        obs = torch.randn(5, 4)
        with torch.no_grad():  # by hand: the head reads the observation followed by the estimate
            want = policy.actor.head(torch.cat([obs, policy.actor.estimator(obs)], dim=-1))
        mean = policy.action_mean(obs)
        torch.testing.assert_close(mean, want)
        mean.square().sum().backward()  # the policy's gradient
        assert all(p.grad is None for p in policy.actor.estimator.parameters())
        assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in policy.actor.head.parameters())
        policy.zero_grad(set_to_none=True)
        policy.estimate(obs).square().sum().backward()  # the supervised loss's
        assert all(p.grad is not None for p in policy.actor.estimator.parameters())
        assert all(p.grad is None for p in (*policy.actor.head.parameters(), *policy.critic.parameters()))
    finally:
        runner.close()


@pytest.mark.parametrize("mode", ["SameStep", "NextStep"])
def test_the_targets_are_the_raw_privileged_values_of_each_step(tmp_path, mode):
    """Without an observation normalizer the stored observation is raw, so the goal offset is obs[2:4] - obs[0:2]."""
    cfg = est_cfg(tmp_path, policy={"obs_normalization": False},
                  env_kwargs={"autoreset_mode": mode, "max_episode_steps": 5})
    runner = Runner(cfg)
    try:
        runner.collector.reset(seed=0)
        runner.algo.update_normalizers(*runner.collector.initial_moments())
        runner.collector.collect(runner.storage)
        s = runner.storage
        torch.testing.assert_close(s.targets, s.obs[..., 2:4] - s.obs[..., 0:2], atol=1e-6, rtol=0)
        stats = runner.algo.update(s, runner.generator)
        assert {"loss/estimator", "estimator/rmse_offset_0", "estimator/rmse_offset_1"} <= set(stats)
    finally:
        runner.close()


def test_the_error_statistics_by_hand():
    from trainers.ppo.estimator import axis_labels, rmse_stats
    from trainers.ppo.losses import estimator_loss

    est = torch.tensor([[1.0, 0.0], [3.0, 2.0], [9.0, 9.0]])
    truth = torch.tensor([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]])
    mask = torch.tensor([1.0, 1.0, 0.0])  # the third row is a reset step: left out
    # column 0: errors 1, 3 -> mean square 5; column 1: 0, 2 -> 2
    got = rmse_stats(est, truth, mask, ("a", "b"))
    assert got == pytest.approx({"estimator/rmse_a": 5 ** 0.5, "estimator/rmse_b": 2 ** 0.5})
    # rows: (1 + 0) / 2 = 0.5 and (9 + 4) / 2 = 6.5 -> 3.5
    assert float(estimator_loss(est, truth, mask)) == pytest.approx(3.5)
    assert axis_labels(("linvel", "height", "feet"), (3, 1, 4)) == (
        "linvel_x", "linvel_y", "linvel_z", "height", "feet_0", "feet_1", "feet_2", "feet_3")


# --------------------------------------------------------------------------- learning


def _train(out, **over):
    cfg = est_cfg(out, **deep_merge({"total_steps": 8 * 16 * 30, "algo": {"schedule": "fixed"},
                                     "log": {"save_interval": 100, "keep_every": 0}}, over))
    runner = Runner(cfg)
    try:
        result = runner.learn()
        std = runner.storage.targets.reshape(-1, 2).std(0)
    finally:
        runner.close()
    rmse = torch.tensor([result.stats["estimator/rmse_offset_0"], result.stats["estimator/rmse_offset_1"]])
    return result, rmse, std


def test_the_estimator_learns_the_offset_and_a_frozen_one_does_not(tmp_path):
    """30 iterations: the last rollout's RMSE is a small fraction of the offset's own std (the error of the best
    constant guess); at a learning rate of ~0 it stays near that std."""
    result, rmse, std = _train(tmp_path / "learns")
    assert (rmse < 0.2 * std).all(), (rmse, std)
    _, frozen, frozen_std = _train(tmp_path / "frozen", algo={"learning_rate": 1e-9})
    assert (frozen > 0.7 * frozen_std).all(), (frozen, frozen_std)

    from trainers.ppo.evaluate import evaluate

    ev = evaluate(result.checkpoint, episodes=8, num_envs=4, env_kwargs={"named_groups": True}, progress=False)
    assert set(ev.estimator_rmse) == {"estimator/rmse_offset_0", "estimator/rmse_offset_1"}
    assert max(ev.estimator_rmse.values()) < 0.2 * float(std.max())
    from trainers.common.evaluation import estimator_rmse_line

    assert estimator_rmse_line(ev.estimator_rmse).startswith("estimator RMSE in the targets' units: offset_0 ")


def test_eval_measures_the_error_against_the_privileged_observation_by_hand():
    from trainers.common.evaluation import run_episodes
    from trainers.ppo.estimator import MeteredActions

    from tests.trainers.conftest import make_point_reach

    env = make_point_reach(2, max_episode_steps=3, named_groups=True)
    seen = []

    class Half:  # acts zero and estimates the offset as half the goal
        def action_and_estimate(self, obs):
            seen.append(obs.numpy().copy())
            return torch.zeros((2, 2)), obs[:, 2:4] * 0.5

    meter = MeteredActions(Half(), np.array([0, 1]), ("x", "y"))
    run_episodes(env, meter, episodes=2, seed=0, skip_first=False)
    obs = np.concatenate(seen)  # actions of zero: the point stays, so each row's offset is goal - pos of its obs
    err = obs[:, 2:4] * 0.5 - (obs[:, 2:4] - obs[:, 0:2])
    want = np.sqrt(np.mean(np.square(err.astype(np.float64)), axis=0))
    got = meter.rmse()
    assert got["estimator/rmse_x"] == pytest.approx(want[0], rel=1e-5)
    assert got["estimator/rmse_y"] == pytest.approx(want[1], rel=1e-5)


# --------------------------------------------------------------------------- export


def test_the_onnx_gives_the_torch_policys_action_and_estimate(tmp_path):
    import onnxruntime as ort

    from trainers.common.onnx_export import describe_onnx
    from trainers.ppo import train
    from trainers.ppo.evaluate import export_onnx, load_policy

    run = train(est_cfg(tmp_path, total_steps=8 * 16 * 3))
    path = export_onnx(run.checkpoint)
    info = describe_onnx(path)
    assert [(t.name, t.shape) for t in info.outputs] == [("actions", ("batch", 2)), ("estimate", ("batch", 2))]
    assert "output estimate float32 [batch, 2]: the learned state estimator's estimate of offset" in info.summary()
    policy, _, _ = load_policy(run.checkpoint)
    obs = np.random.default_rng(0).normal(0, 2, (256, 4)).astype(np.float32)
    actions, estimate = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"obs": obs})
    with torch.no_grad():
        want_actions = policy(torch.from_numpy(obs)).clamp(-1, 1).numpy()
        want_estimate = policy.estimate(torch.from_numpy(obs)).numpy()
    np.testing.assert_allclose(actions, want_actions, atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(estimate, want_estimate, atol=1e-5, rtol=1e-5)
