"""The bundled off-policy learner: n-step returns by hand (failure vs time limit, the ring's edge), the device
buffer's memory, SAC / TD3 updates, exact resume with the buffer saved, the CLI's errors; the distributional
(C51) critic: its projection by hand, its target, its updates, resume and export with it on."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

from trainers import cli
from trainers.offpolicy.config import load_offpolicy_config
from trainers.offpolicy.replay import DeviceReplay, replay_bytes
from trainers.offpolicy.runner import OffPolicyRunner
from unilab_envs.config import ConfigError

GAMMA = 0.5


def _filled(flags: list[tuple[bool, bool]], rows: int = 10, n_step: int = 3) -> DeviceReplay:
    """One env; step t stores obs t, reward 2^t, next_obs 100 + t and the step's (terminated, truncated)."""
    replay = DeviceReplay(rows, 1, 1, 1, torch.device("cpu"), n_step=n_step, gamma=GAMMA)
    for t, (term, trunc) in enumerate(flags):
        replay.add([[t]], [[0.0]], [2.0 ** t], [[100.0 + t]], [term], [trunc])
    return replay


def _by_start(replay: DeviceReplay) -> dict[int, tuple[float, float, float]]:
    """Every sampled start step -> (n-step return, bootstrap obs, discount)."""
    torch.manual_seed(0)
    batch = replay.sample(4000)
    out = {}
    for o, r, nxt, d in zip(batch.obs[:, 0].tolist(), batch.reward.tolist(), batch.next_obs[:, 0].tolist(), batch.discount.tolist()):
        out[int(o)] = (r, nxt, d)
    return out


def test_n_step_returns_stop_at_a_failure_and_bootstrap_through_a_time_limit():
    # steps 0..5: a failure at step 2, a time limit at step 4
    got = _by_start(_filled([(False, False), (False, False), (True, False), (False, False), (False, True), (False, False)]))
    assert got[0] == pytest.approx((1 + 0.5 * 2 + 0.25 * 4, 102.0, 0.0))  # ends in the failure: no bootstrap
    assert got[1] == pytest.approx((2 + 0.5 * 4, 102.0, 0.0))
    assert got[2] == pytest.approx((4, 102.0, 0.0))
    assert got[3] == pytest.approx((8 + 0.5 * 16, 104.0, 0.25))  # the time limit: bootstrap from the final obs
    assert got[4] == pytest.approx((16, 104.0, 0.5))
    assert got[5] == pytest.approx((32, 105.0, 0.5))  # the newest step: the window is cut there


def test_the_ring_keeps_the_newest_rows_and_windows_never_cross_its_edge():
    replay = _filled([(False, False)] * 5, rows=3)
    got = _by_start(replay)
    assert sorted(got) == [2, 3, 4] and len(replay) == 3
    assert got[2] == pytest.approx((4 + 0.5 * 8 + 0.25 * 16, 104.0, 0.125))
    assert got[3] == pytest.approx((8 + 0.5 * 16, 104.0, 0.25))


def test_the_buffer_is_preallocated_on_its_device_as_stated():
    replay = DeviceReplay(1000, 10, 33, 6, torch.device("cpu"), critic_dim=4)
    assert replay.nbytes == replay_bytes(1000, 33, 6, 4)
    with pytest.raises(ValueError, match="fewer than one step of 10 envs"):
        DeviceReplay(5, 10, 3, 1, torch.device("cpu"))


TINY = ["num_envs=8", "total_steps=960", "algo.learning_starts=320", "algo.batch_size=64", "algo.buffer_size=4000",
        "nets.actor_hidden=[32,32]", "nets.critic_hidden=[32,32]", "log.progress=false", "log.tensorboard=false",
        "log.plot=false", "log.every_steps=320", "log.checkpoint_every_steps=100000", "torch_threads=1"]


def _weights(runner: OffPolicyRunner) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in runner.learner.state_dict().items()}


C51 = "algo.distributional={num_atoms: 11, v_min: -5, v_max: 5}"


@pytest.mark.parametrize("kind, extra", [("sac", []), ("td3", []), ("td3", [C51])], ids=["sac", "td3", "td3-c51"])
def test_a_resumed_run_with_its_buffer_continues_bit_for_bit(kind, extra, tmp_path):
    overrides = [*TINY, "log.save_replay=true", *extra]
    whole = OffPolicyRunner(load_offpolicy_config(kind, "UniLab/UR5Reach-v0", overrides=[*overrides, f"out={tmp_path / 'whole'}"]))
    result = whole.train()
    assert result.env_steps == 960 and result.updates > 0
    half_cfg = load_offpolicy_config(kind, "UniLab/UR5Reach-v0", overrides=[*overrides, f"out={tmp_path / 'half'}", "total_steps=480"])
    OffPolicyRunner(half_cfg).train()
    rest_cfg = load_offpolicy_config(kind, "UniLab/UR5Reach-v0", overrides=[*overrides, f"out={tmp_path / 'half'}"])
    resumed = OffPolicyRunner(rest_cfg, resume=tmp_path / "half" / "checkpoint.pt")
    resumed.train()
    a, b = _weights(whole), _weights(resumed)
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=0, msg=key)
    assert whole.learner.updates == resumed.learner.updates
    assert len(whole.finished) >= 8 and list(resumed.finished) == list(whole.finished)  # the stop rule's window resumes too


def test_resume_without_the_buffer_says_it_refills(tmp_path, capsys):
    cfg = load_offpolicy_config("sac", "UniLab/UR5Reach-v0", overrides=[*TINY, f"out={tmp_path}", "total_steps=400"])
    OffPolicyRunner(cfg).train()
    runner = OffPolicyRunner(load_offpolicy_config("sac", "UniLab/UR5Reach-v0", overrides=[*TINY, f"out={tmp_path}"]),
                             resume=tmp_path / "checkpoint.pt")
    assert "holds no replay buffer" in capsys.readouterr().out and runner.refilling
    assert runner.env_steps == 400 and len(runner.replay) == 0


def test_config_errors_and_the_cli(tmp_path, capsys):
    with pytest.raises(ConfigError, match="buffer_size"):
        load_offpolicy_config("sac", "UniLab/UR5Reach-v0", overrides=["algo.buffer_sise=10"])
    with pytest.raises(ConfigError, match="--algo td3 was asked for, but the config says algo.kind: sac"):
        load_offpolicy_config("td3", "UniLab/UR5Reach-v0", overrides=["algo.kind=sac"])
    out = tmp_path / "run"
    assert cli.main(["train", "--algo", "sac", "--task", "UniLab/UR5Reach-v0", "--out", str(out), *TINY]) == 0
    printed = capsys.readouterr().out
    assert "replay buffer 4000 transitions" in printed and "done: 960 steps" in printed
    assert (out / "checkpoint.pt").is_file() and (out / "progress.csv").is_file()
    assert cli.main(["train", "--algo", "sac", "--task", "UniLab/UR5Reach-v0", "--out", str(out), *TINY]) == 2  # holds a run
    assert cli.main(["train", "--algo", "td3", "--init-from", str(out)]) == 2
    assert "no such option" in capsys.readouterr().err


def test_sac_learns_a_one_step_choice():
    """A contextual bandit on the learner alone: obs x in {-1, +1}, reward -(a - 0.5 x)^2, episodes of one step.
    After 1200 updates the deterministic actor answers x with ~0.5 x."""
    from trainers.offpolicy.config import OffPolicyAlgo, OffPolicyNets
    from trainers.offpolicy.learner import OffPolicyLearner

    torch.manual_seed(0)
    algo = OffPolicyAlgo(batch_size=256, n_step=1, alpha=0.01, learning_starts=0, actor_lr=1e-3, critic_lr=1e-3)
    learner = OffPolicyLearner(1, 0, 1, algo, OffPolicyNets(actor_hidden=(32,), critic_hidden=(64, 64)), torch.device("cpu"))
    replay = DeviceReplay(4096, 64, 1, 1, torch.device("cpu"), n_step=1, gamma=algo.gamma)
    for _ in range(150):
        x = torch.randint(0, 2, (64, 1)).float() * 2 - 1
        a = learner.act(x, explore=True)
        replay.add(x, a, -(a[:, 0] - 0.5 * x[:, 0]) ** 2, x, torch.ones(64, dtype=torch.bool), torch.zeros(64, dtype=torch.bool))
        learner.observe_statistics(x, x)
        for _ in range(8):
            learner.update(replay.sample(algo.batch_size))
    answers = learner.act(torch.tensor([[-1.0], [1.0]]), explore=False)[:, 0]
    assert answers.tolist() == pytest.approx([-0.5, 0.5], abs=0.1)


def test_eval_export_and_the_onnx_actor_of_a_sac_run(tmp_path, capsys):
    """A run's deterministic actor through eval and export: the ONNX gives the actor's actions, mapped to the box,
    and the deploy spec follows as for a PPO run."""
    import onnxruntime as ort

    from trainers.common.runs import find_run
    from trainers.offpolicy.evaluate import load_actor

    out = tmp_path / "run"
    assert cli.main(["train", "--algo", "sac", "--task", "UniLab/UR5Reach-v0", "--out", str(out), *TINY]) == 0
    assert find_run(out).kind == "sac"
    assert cli.main(["eval", str(out), "--episodes", "2", "--num-envs", "2", "--no-progress"]) == 0
    assert "episodes" in capsys.readouterr().out
    aside = tmp_path / "snapshots" / "snap_100.pt"  # a checkpoint copied out of its run folder: its format says whose
    aside.parent.mkdir()
    shutil.copy(out / "checkpoint.pt", aside)
    assert find_run(aside).kind == "sac"
    assert cli.main(["eval", str(aside), "--episodes", "2", "--num-envs", "2", "--no-progress"]) == 0
    assert "on UniLab/UR5Reach-v0" in capsys.readouterr().out
    assert cli.main(["export", str(out)]) == 0
    assert "deploy spec:" in capsys.readouterr().out and (out / "deploy_spec.json").is_file()
    actor, cfg = load_actor(out)
    obs = np.random.default_rng(0).normal(size=(5, actor.obs_dim)).astype(np.float32)
    session = ort.InferenceSession(str(out / "policy.onnx"), providers=["CPUExecutionProvider"])
    with torch.no_grad():
        expected = actor(torch.from_numpy(obs)).numpy()
    np.testing.assert_allclose(session.run(None, {"obs": obs})[0], expected, rtol=1e-5, atol=1e-5)
    assert np.all(np.abs(expected) <= 1.0) and cfg.algo.kind == "sac"


# --- the distributional (C51) critic ------------------------------------------------------------------------------

def test_the_c51_projection_by_hand():
    """Atoms 0..4; each row's moved masses (reward + discount * z) split between their neighbouring atoms."""
    from trainers.offpolicy.critic_values import project_distribution

    atoms = torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0])
    half01 = [0.5, 0.5, 0.0, 0.0, 0.0]
    probs = torch.tensor([half01, half01, [0.0, 0.0, 0.0, 0.0, 1.0], half01, [0.2] * 5, half01])
    reward = torch.tensor([0.5, 1.0, 0.5, 3.5, 2.2, -3.0])
    discount = torch.tensor([1.0, 1.0, 0.5, 1.0, 0.0, 1.0])
    expected = torch.tensor([
        [0.25, 0.5, 0.25, 0.0, 0.0],  # 0.5, 1.5: between atoms, half of each mass to either side
        [0.0, 0.5, 0.5, 0.0, 0.0],  # 1, 2: exactly on atoms, each keeps all its mass
        [0.0, 0.0, 0.5, 0.5, 0.0],  # 0.5 + 0.5 * 4 = 2.5: scaled by the discount
        [0.0, 0.0, 0.0, 0.25, 0.75],  # 3.5 splits; 4.5 is clipped to v_max = 4, exactly on the last atom
        [0.0, 0.0, 0.8, 0.2, 0.0],  # terminated (discount 0): all the mass at r = 2.2
        [1.0, 0.0, 0.0, 0.0, 0.0],  # -3, -2: clipped to v_min = 0
    ])
    torch.testing.assert_close(project_distribution(probs, reward, discount, atoms), expected)
    # mass always kept, the mean too where nothing is clipped (atoms -1..1 here: not all integers)
    gen = torch.Generator().manual_seed(0)
    atoms = torch.linspace(-1.0, 1.0, 9)
    probs = torch.rand(64, 9, generator=gen).softmax(-1)
    reward, discount = 0.2 * torch.rand(64, generator=gen) - 0.1, 0.5 + 0.3 * torch.rand(64, generator=gen)
    out = project_distribution(probs, reward, discount, atoms)
    torch.testing.assert_close(out.sum(-1), torch.ones(64))
    torch.testing.assert_close((out * atoms).sum(-1), reward + discount * (probs * atoms).sum(-1))


def test_the_c51_target_takes_the_lower_head_per_sample_and_folds_in_the_entropy():
    from trainers.offpolicy.config import DistributionalCritic
    from trainers.offpolicy.critic_values import CategoricalValue

    value = CategoricalValue(DistributionalCritic(num_atoms=5, v_min=0.0, v_max=4.0))
    at = lambda i: [0.0 if j != i else 1.0 for j in range(5)]  # noqa: E731 (all mass on atom i)
    probs = torch.tensor([[at(1), at(3)], [at(4), at(2)]])  # (2 heads, 2 samples, 5): sample 0 -> head 0, 1 -> head 1
    logits = probs.clamp_min(1e-12).log()
    torch.testing.assert_close(value.expected(logits), torch.tensor([[1.0, 3.0], [4.0, 2.0]]))
    reward, discount = torch.tensor([1.0, 0.5]), torch.tensor([0.5, 1.0])
    got = value.target(logits, reward, discount, entropy=torch.tensor([-2.0, 0.0]))
    # sample 0: 1 - 0.5 * (-2) + 0.5 * 1 = 2.5; sample 1: 0.5 + 1 * 2 = 2.5
    torch.testing.assert_close(got, torch.tensor([[0.0, 0.0, 0.5, 0.5, 0.0]] * 2), atol=1e-6, rtol=0)
    # cross-entropy against all mass on atom 2: only head 1's sample 1 puts ~1 there; the three others put 1e-12
    target = torch.tensor([at(2)] * 2)
    assert value.loss(logits, target).item() == pytest.approx(3 * -np.log(1e-12) / 4, rel=1e-4)


def test_c51_settings_are_checked_and_null_is_the_scalar_critic():
    assert load_offpolicy_config("sac", "UniLab/UR5Reach-v0").algo.distributional is None
    cfg = load_offpolicy_config("sac", "UniLab/UR5Reach-v0", overrides=["algo.distributional.num_atoms=51"])
    assert (cfg.algo.distributional.num_atoms, cfg.algo.distributional.v_min, cfg.algo.distributional.v_max) == (51, -10, 10)
    with pytest.raises(ConfigError, match="num_atoms must be >= 2, got 1"):
        load_offpolicy_config("sac", "UniLab/UR5Reach-v0", overrides=["algo.distributional.num_atoms=1"])
    with pytest.raises(ConfigError, match="needs v_min < v_max, got v_min 2.0 and v_max 2.0"):
        load_offpolicy_config("td3", "UniLab/UR5Reach-v0", overrides=["algo.distributional={v_min: 2, v_max: 2}"])


@pytest.mark.parametrize("kind", ["sac", "td3"])
def test_the_c51_critic_learns_a_known_return_and_a_zero_rate_keeps_it(kind):
    """One fixed batch of terminal transitions with return 1.3 (between atoms 1.2 and 1.6): the expected Q of both
    heads goes to 1.3 and the actor updates on it; the same updates at critic_lr ~ 0 leave Q where it started."""
    from trainers.offpolicy.config import DistributionalCritic, OffPolicyAlgo, OffPolicyNets
    from trainers.offpolicy.learner import OffPolicyLearner
    from trainers.offpolicy.replay import Batch

    gen = torch.Generator().manual_seed(0)
    obs, action = torch.randn(32, 2, generator=gen), torch.rand(32, 1, generator=gen) * 2 - 1
    batch = Batch(obs, action, torch.full((32,), 1.3), torch.randn(32, 2, generator=gen), torch.zeros(32))

    def trained(critic_lr: float) -> tuple[OffPolicyLearner, float, float]:
        torch.manual_seed(0)
        algo = OffPolicyAlgo(kind=kind, batch_size=32, critic_lr=critic_lr, actor_lr=1e-3, policy_delay=1,
                             distributional=DistributionalCritic(num_atoms=11, v_min=-2.0, v_max=2.0))
        learner = OffPolicyLearner(2, 0, 1, algo, OffPolicyNets(actor_hidden=(16,), critic_hidden=(32, 32)), torch.device("cpu"))
        actor_before = [p.clone() for p in learner.actor.parameters()]
        q = lambda: learner.value.expected(learner.critic(learner.critic_norm(obs), action)).detach()  # noqa: E731
        before = q()
        for _ in range(150):
            stats = learner.update(batch)
        assert "loss/actor" in stats and any(not torch.equal(a, b) for a, b in zip(actor_before, learner.actor.parameters()))
        return learner, before, q()

    learner, _, after = trained(3e-3)
    assert learner.critic.q1[-1].out_features == 11
    torch.testing.assert_close(after, torch.full_like(after, 1.3), atol=0.05, rtol=0)
    _, before, after = trained(1e-9)
    assert (before - 1.3).abs().min() > 0.5 and (after - before).abs().max() < 1e-4


def test_a_c51_run_records_its_critic_and_exports_the_actor_alone(tmp_path):
    """The config (and so resume, eval and export) carries the critic; the ONNX is the actor's, as for a scalar run."""
    import onnxruntime as ort

    from trainers.offpolicy.evaluate import load_actor
    from trainers.offpolicy.runner import load_run_config

    out = tmp_path / "run"
    assert cli.main(["train", "--algo", "sac", "--task", "UniLab/UR5Reach-v0", "--out", str(out), *TINY, "total_steps=480",
                     C51]) == 0
    assert load_run_config(out / "checkpoint.pt").algo.distributional.num_atoms == 11
    assert cli.main(["export", str(out)]) == 0
    actor, cfg = load_actor(out)
    assert cfg.algo.distributional.v_max == 5.0
    obs = np.random.default_rng(0).normal(size=(5, actor.obs_dim)).astype(np.float32)
    session = ort.InferenceSession(str(out / "policy.onnx"), providers=["CPUExecutionProvider"])
    with torch.no_grad():
        expected = actor(torch.from_numpy(obs)).numpy()
    got = session.run(None, {"obs": obs})[0]
    assert got.shape == expected.shape == (5, actor.low.shape[0])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
