"""A policy that reads ``linvel`` turned into one with a state estimator (``--init-from`` into a run with
``policy.estimator`` and ``critic_only_groups: [linvel]``, :mod:`trainers.ppo.transplant`), and the estimator's
warm-up (``policy.estimator.warmup_iterations``: the actor held, reading the true values, while the critic and
the estimator learn). The transplant on the Go1 (a tiny learner with random weights and normalizer statistics,
its observations from the env); the warm-up on PointReach (its privileged goal offset)."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch
from tests.trainers.test_ppo_checkpoint import tiny_cfg

from trainers.common.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from trainers.common.logging import read_csv
from trainers.ppo.config import TrainConfig, deep_merge, from_dict
from trainers.ppo.init_from import initialize_from
from trainers.ppo.obs_layout import Layout, match_columns
from trainers.ppo.runner import CKPT_FORMAT, CKPT_VERSION, Runner

GO1 = "UniLab/Go1Joystick-v0"
MOVED = {"env_kwargs": {"critic_only_groups": ["linvel"]}}
ESTIMATOR = {"policy": {"estimator": {"targets": ["linvel"], "hidden": [16]}}}


def go1_cfg(out, **over) -> TrainConfig:
    base = {"task": GO1, "num_envs": 4, "total_steps": 4 * 8 * 2, "seed": 1, "out": str(out), "torch_threads": 1,
            "algo": {"num_steps": 8, "num_epochs": 1, "num_minibatches": 2},
            "policy": {"actor_hidden": [32, 16], "critic_hidden": [32, 16]},
            "log": {"tensorboard": False, "progress": False, "plot": False, "save_interval": 100}}
    return from_dict(TrainConfig, deep_merge(base, over))


@pytest.fixture(scope="module")
def old_run(tmp_path_factory):
    """A Go1 learner that reads linvel, its weights and normalizer statistics random (so every column counts),
    saved as a run; its learner; 24 raw observations and privileged observations of the env."""
    out = tmp_path_factory.mktemp("go1_plain")
    runner = Runner(go1_cfg(out))
    try:
        g = torch.Generator().manual_seed(0)
        algo = runner.algo
        with torch.no_grad():
            for p in algo.policy.parameters():
                p.add_(0.3 * torch.randn(p.shape, generator=g))
            for n in (algo.obs_normalizer, algo.critic_normalizer):
                n.mean.copy_(torch.randn(n.mean.shape, generator=g))
                n.var.copy_(torch.rand(n.var.shape, generator=g) + 0.2)
        path = runner.save(out / "checkpoint.pt", at_boundary=False)
        env = runner.envs[0]
        obs, info = env.reset(seed=0)
        rows, privileged = [obs], [info["privileged_obs"]]
        rng = np.random.default_rng(0)
        for _ in range(5):
            obs, _, _, _, info = env.step(rng.uniform(-1, 1, (4, 12)).astype(np.float32))
            rows.append(obs)
            privileged.append(info["privileged_obs"])
        linvel = env.unwrapped.obs_groups["linvel"]
    finally:
        runner.close()
    return path, algo, torch.as_tensor(np.concatenate(rows)), torch.as_tensor(np.concatenate(privileged)), linvel


def _new(out, **over) -> Runner:
    return Runner(go1_cfg(out, **deep_merge(deep_merge(MOVED, ESTIMATOR), over)))


def _transplant_into(runner: Runner, path) -> str:
    return initialize_from(runner.algo, runner.dims, runner.cfg.task, path, env=runner.envs[0],
                           estimator=runner.cfg.policy.estimator)


# --------------------------------------------------------------------------- the transplant


def test_with_the_true_linvel_the_transplanted_actor_acts_as_the_old_one(old_run, tmp_path):
    path, old, obs, privileged, linvel = old_run
    runner = _new(tmp_path)
    try:
        summary = _transplant_into(runner, path)
        assert "actor (transplanted: its linvel columns read the estimate)" in summary, summary
        assert "critic (its columns matched by group)" in summary and "fresh: state estimator" in summary, summary
        algo = runner.algo
        keep = [c for c in range(obs.shape[1]) if not linvel.start <= c < linvel.stop]
        new_obs, truth = obs[:, keep], obs[:, linvel]
        with torch.no_grad():
            want = old.policy.actor(old.obs_normalizer(obs))
            algo.reads_truth = True  # PPO reads the truth in place of the estimate only in the warm-up
            got = algo.action_mean(algo.obs_normalizer(new_obs), truth)
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
            algo.reads_truth = False  # otherwise the estimate (a fresh estimator's: another action)
            assert not torch.allclose(algo.action_mean(algo.obs_normalizer(new_obs), truth), want, atol=1e-3)
            # the critic read [obs, privileged]; this one reads [obs less linvel, privileged, linvel]: a permutation
            want_v = old.policy.value(old.critic_normalizer(torch.cat([obs, privileged], 1)))
            got_v = algo.policy.value(algo.critic_normalizer(torch.cat([new_obs, privileged, truth], 1)))
            torch.testing.assert_close(got_v, want_v, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(algo.obs_normalizer.mean, old.obs_normalizer.mean[keep], rtol=0, atol=0)
        torch.testing.assert_close(algo.policy.log_std, old.policy.log_std, rtol=0, atol=0)
    finally:
        runner.close()


def test_a_critic_whose_input_is_not_a_permutation_starts_fresh():
    """A sim-to-real stack's clean observation (appended to the privileged one) loses linvel too: fewer columns."""
    policy = {"linvel": slice(0, 3), "gyro": slice(3, 6)}
    old = Layout(policy, {"height": slice(0, 1)}, 6, 6 + 1 + 6)  # [policy, height, clean copy of the policy]
    new = Layout({"gyro": slice(0, 3)}, {"height": slice(0, 1), "linvel": slice(1, 4)}, 3, 3 + 4 + 3)
    m = match_columns(old, new, ("linvel",), (3,))
    assert m.critic_src is None and m.moved == ("linvel",)
    assert m.obs_src.tolist() == [3, 4, 5] and m.estimate_src.tolist() == [0, 1, 2]
    bare = dataclasses.replace(new, critic=3 + 4)
    assert match_columns(dataclasses.replace(old, critic=6 + 1), bare, ("linvel",), (3,)).critic_src.tolist() == [
        3, 4, 5, 6, 0, 1, 2]
    # a target the old actor did not read: its estimate column starts at zero weight
    assert match_columns(old, new, ("linvel", "height"), (3, 1)).estimate_src.tolist() == [0, 1, 2, -1]


def test_an_estimate_the_old_actor_never_read_starts_at_zero_weight(tmp_path):
    """PointReach (no per-config layout): a run without an estimator into one estimating its privileged offset, the
    same observation: whatever the estimate says, the new actor acts as the old one; the critic is carried."""
    from trainers.ppo import train

    plain = train(tiny_cfg(tmp_path / "plain", env_kwargs={"named_groups": True}, total_steps=8 * 16))
    runner = Runner(tiny_cfg(tmp_path / "est", env_kwargs={"named_groups": True},
                             policy={"estimator": {"targets": ["offset"], "hidden": [16]}}))
    try:
        summary = _transplant_into(runner, plain.checkpoint)
        assert "actor (transplanted: the estimate's columns start at zero weight), critic (its columns matched by " \
               "group)" in summary, summary
        ckpt = load_checkpoint(plain.checkpoint, CKPT_FORMAT, CKPT_VERSION)
        obs_n = torch.randn(9, 4)
        old_actor = torch.nn.Sequential(*[torch.nn.Linear(4, 16), torch.nn.ELU(), torch.nn.Linear(16, 16),
                                          torch.nn.ELU(), torch.nn.Linear(16, 2)])
        old_actor.load_state_dict({k[len("actor."):]: v for k, v in ckpt["algo"]["policy"].items() if k.startswith("actor.")})
        with torch.no_grad():
            torch.testing.assert_close(runner.algo.policy.action_mean(obs_n), old_actor(obs_n))
        critic = {k: v for k, v in ckpt["algo"]["policy"].items() if k.startswith("critic.")}
        assert all(torch.equal(runner.algo.policy.state_dict()[k], v) for k, v in critic.items())
    finally:
        runner.close()


def _edited(path, tmp_path, edit) -> Path:
    ckpt = load_checkpoint(path, CKPT_FORMAT, CKPT_VERSION)
    edit(ckpt)
    out = tmp_path / "edited.pt"
    save_checkpoint(ckpt, out, CKPT_FORMAT, CKPT_VERSION)
    return out


@pytest.mark.parametrize("case, message", [
    ("no estimator", r"that run's actor reads \['linvel'\], which this run moves to the critic .*policy.estimator"),
    ("other target", r"that run's actor reads \['linvel'\], which this run's neither reads nor estimates"),
    ("history", r"with an obs_history is not supported"),
    ("had an estimator", r"that run's actor has a state estimator and reads \['linvel'\]"),
    ("not an mlp", r"needs a plain MLP actor"),
])
def test_what_cannot_be_transplanted_is_refused_in_one_line(old_run, tmp_path, case, message):
    path = old_run[0]
    over, history = {}, None
    if case == "no estimator":
        runner = Runner(go1_cfg(tmp_path, **MOVED))
    else:
        if case == "other target":
            over = {"policy": {"estimator": {"targets": ["height"]}}}
        runner = _new(tmp_path, **over)
    if case == "history":
        history = np.arange(3)
    if case == "had an estimator":
        path = _edited(path, tmp_path, lambda c: c["algo"]["policy"].update({"actor.estimator.0.weight": torch.zeros(1)}))
    if case == "not an mlp":
        path = _edited(path, tmp_path, lambda c: c["algo"]["policy"].pop("actor.0.weight"))
    try:
        with pytest.raises(CheckpointError, match=message) as e:
            initialize_from(runner.algo, runner.dims, GO1, path, env=runner.envs[0],
                            estimator=runner.cfg.policy.estimator, history_sources=history)
        assert "\n" not in str(e.value)
    finally:
        runner.close()


# --------------------------------------------------------------------------- the warm-up


def test_the_mirror_averaged_actor_reads_the_mirrored_truth_in_its_mirrored_pass(tmp_path):
    from trainers.ppo.estimator import truth_mirror

    runner = _new(tmp_path, policy={"symmetric_actor": True, "mirror_average": True,
                                    "estimator": {"warmup_iterations": 1}})
    try:
        perm, sign = truth_mirror(runner.envs[0], ("linvel",), GO1)
        assert perm.tolist() == [0, 1, 2] and sign.tolist() == [1.0, -1.0, 1.0]  # y -> -y
        algo, mirror = runner.algo, runner.algo.averaged_mean.mirror
        obs_n, truth = torch.randn(6, runner.dims.obs), torch.randn(6, 3)
        from trainers.ppo.symmetry import mirror_normalized

        with torch.no_grad():
            head = algo.policy.actor.head
            want = 0.5 * (head(torch.cat([obs_n, truth], 1)) + mirror.action(head(torch.cat(
                [mirror_normalized(mirror, algo.obs_normalizer, obs_n), truth * torch.tensor([1.0, -1.0, 1.0])], 1))))
            algo.reads_truth = True
            torch.testing.assert_close(algo.action_mean(obs_n, truth), want)
    finally:
        runner.close()


WARMUP = 2


def _snapshot(runner) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in runner.algo.policy.state_dict().items()}


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs CUDA"))])
def test_the_warm_up_holds_the_actor_on_the_truth_while_the_critic_and_the_estimator_learn(tmp_path, capsys, device):
    """PointReach, 4 iterations with a warm-up of 2 under the adaptive schedule: the actor (its MLP and std) is
    bit-identical through the warm-up and acts on the true offset; the critic and the estimator change; the rate
    is held; then the actor learns. On CUDA the update is a captured graph, captured again when the warm-up ends."""
    cfg = tiny_cfg(tmp_path, device=device, env_kwargs={"named_groups": True}, log={"save_interval": 100, "keep_every": 0},
                   policy={"estimator": {"targets": ["offset"], "hidden": [16], "warmup_iterations": WARMUP}})
    assert cfg.algo.schedule == "adaptive"
    runner = Runner(cfg)
    seen = []

    def record(runner, stats):
        s = runner.storage
        with torch.no_grad():  # the rollout's means: the head on the observation and the true offset
            read = runner.algo.policy.actor.head(torch.cat([s.obs, s.targets], -1))
        seen.append((_snapshot(runner), torch.allclose(s.action_means, read, atol=1e-6, rtol=0)))
        return False

    try:
        start = _snapshot(runner)
        runner.learn(callback=record)
    finally:
        runner.close()
    actor = [k for k in start if k.startswith("actor.head.") or k == "log_std"]
    for it in range(WARMUP):
        state, read_truth = seen[it]
        assert read_truth, it
        assert all(torch.equal(state[k], start[k]) for k in actor), it
        for part in ("critic.", "actor.estimator."):
            assert any(not torch.equal(state[k], start[k]) for k in start if k.startswith(part)), (it, part)
    assert not seen[WARMUP][1]  # the actor reads the estimate
    assert any(not torch.equal(seen[WARMUP][0][k], start[k]) for k in actor)
    log = read_csv(tmp_path / "progress.csv")
    assert log["estimator/warmup"] == [1.0] * WARMUP + [0.0] * (4 - WARMUP)
    assert log["learning_rate"][:WARMUP] == [cfg.algo.learning_rate] * WARMUP
    assert log["learning_rate"][WARMUP] != cfg.algo.learning_rate  # the adaptive rate moves again
    out = capsys.readouterr().out
    assert out.count("estimator warm-up (actor held, it reads the true offset) for iterations 1-2") == 1, out
    assert out.count("estimator warm-up over after 2 iterations") == 1, out


def test_a_transplanted_policy_starts_training_held_and_says_so(old_run, tmp_path, capsys):
    """``unilab train``'s path: the summary names the transplant, the warm-up says it starts and ends; the actor
    after the warm-up's iteration is the transplanted one."""
    path = old_run[0]
    over = {"init_from": str(path), "algo": {"symmetry_coef": 0.5},
            "policy": {"estimator": {"warmup_iterations": 1}, "symmetric_actor": True, "mirror_average": True}}
    reference = _new(tmp_path / "ref", **over)
    try:
        _transplant_into(reference, path)
        start = _snapshot(reference)
    finally:
        reference.close()
    runner = _new(tmp_path / "run", **over)
    seen = []
    try:
        runner.learn(callback=lambda r, s: seen.append(_snapshot(r)) and False)
    finally:
        runner.close()
    actor = [k for k in start if k.startswith("actor.head.") or k == "log_std"]
    assert all(torch.equal(seen[0][k], start[k]) for k in actor)  # the mirror loss did not move it either
    assert any(not torch.equal(seen[1][k], start[k]) for k in actor)
    captured = capsys.readouterr()
    assert "actor (transplanted: its linvel columns read the estimate)" in captured.err
    assert "estimator warm-up (actor held, it reads the true linvel) for iteration 1:" in captured.out
    assert "estimator warm-up over after 1 iteration: the actor reads the estimate of linvel" in captured.out
