"""``unilab eval`` of a run with a learned state estimator runs the estimator once per step (it ran twice: once to
act, once to meter its error), with the same actions and the same RMSE, to the bit, as that two-pass metering."""

import math

import numpy as np
import pytest
import torch
from tests.trainers.test_ppo_estimator import est_cfg

from trainers.ppo import evaluate as ppo_evaluate
from trainers.ppo import train


class TwoPassMeter:
    """The metering this replaced: the action from ``policy(obs)``, the error from a second ``policy.estimate(obs)``."""

    def __init__(self, policy, columns, labels):
        self.policy, self.columns, self.labels = policy, np.asarray(columns), labels
        self.sq, self.rows = np.zeros(len(labels)), 0

    def observe(self, obs, info):
        truth = np.asarray(info["privileged_obs"], np.float64)[:, self.columns]
        with torch.no_grad():
            est = self.policy.estimate(torch.as_tensor(obs, dtype=torch.float32)).numpy()
        self.sq += np.square(est.astype(np.float64) - truth).sum(0)
        self.rows += len(truth)

    def __call__(self, obs):
        with torch.no_grad():
            return self.policy(torch.as_tensor(obs, dtype=torch.float32)).numpy()

    def rmse(self):
        return {f"estimator/rmse_{label}": math.sqrt(v / self.rows) for label, v in zip(self.labels, self.sq)}


def _seeded_eval(monkeypatch, checkpoint, two_pass: bool):
    """``evaluate(checkpoint)`` at a fixed seed: ``(result, actions of every step, estimator passes, steps)``."""
    actions, passes = [], []
    load, run_episodes = ppo_evaluate.load_policy, ppo_evaluate.run_episodes

    def counted_load(*args, **kwargs):
        policy, cfg, ckpt = load(*args, **kwargs)
        policy.actor.estimator.register_forward_hook(lambda *_: passes.append(1))
        return policy, cfg, ckpt

    def recorded_run_episodes(env, act, *args, **kwargs):
        class Recorded:
            observe = act.observe

            def __call__(self, obs):
                actions.append(act(obs).copy())
                return actions[-1]

        return run_episodes(env, Recorded(), *args, **kwargs)

    monkeypatch.setattr(ppo_evaluate, "load_policy", counted_load)
    monkeypatch.setattr(ppo_evaluate, "run_episodes", recorded_run_episodes)
    if two_pass:
        monkeypatch.setattr(ppo_evaluate, "_estimator_meter",
                            lambda policy, *_: TwoPassMeter(policy, [0, 1], ("offset_0", "offset_1")))
    result = ppo_evaluate.evaluate(checkpoint, episodes=8, num_envs=4, seed=11, progress=False)
    monkeypatch.undo()
    return result, np.stack(actions), len(passes), len(actions)


@pytest.fixture(scope="module")
def estimator_run(tmp_path_factory):
    """A PointReach run of 3 iterations whose actor reads an estimate of the privileged goal offset."""
    return train(est_cfg(tmp_path_factory.mktemp("estimator") / "run", total_steps=8 * 16 * 3)).checkpoint


def test_eval_runs_the_estimator_once_per_step_with_the_same_actions_and_rmse(estimator_run, monkeypatch):
    once, once_actions, once_passes, steps = _seeded_eval(monkeypatch, estimator_run, two_pass=False)
    twice, twice_actions, twice_passes, twice_steps = _seeded_eval(monkeypatch, estimator_run, two_pass=True)
    assert steps == twice_steps > 0
    assert (once_passes, twice_passes) == (steps, 2 * steps)
    assert np.array_equal(once_actions, twice_actions)
    assert set(once.estimator_rmse) == {"estimator/rmse_offset_0", "estimator/rmse_offset_1"}
    assert once.estimator_rmse == twice.estimator_rmse  # exact floats, not approx
    assert once.summary() == twice.summary()


def test_action_and_estimate_equals_the_two_calls_with_a_mirror(estimator_run):
    """With ``policy.mirror_average`` the action also reads the actor on the mirrored observation: the same
    expression as ``policy(obs)``, to the bit (a hand-made map: the two observation halves and actions swapped)."""
    from types import SimpleNamespace

    from trainers.ppo.estimator import EstimatingInferencePolicy
    from trainers.ppo.models import TorchMirror

    policy, _, _ = ppo_evaluate.load_policy(estimator_run)
    mirror = SimpleNamespace(obs_perm=[2, 3, 0, 1], obs_sign=[1, -1, 1, -1], act_perm=[1, 0], act_sign=[1, -1])
    assert isinstance(policy, EstimatingInferencePolicy)
    policy.mirror = TorchMirror(mirror)
    obs = torch.from_numpy(np.random.default_rng(0).normal(0, 2, (64, 4)).astype(np.float32))
    with torch.no_grad():
        action, estimate = policy.action_and_estimate(obs)
        assert torch.equal(action, policy(obs)) and torch.equal(estimate, policy.estimate(obs))
        policy.mirror = None
        assert not torch.equal(action, policy(obs))  # the mirror did take part
