"""The state estimator on the Go1 whose policy does not read ``linvel`` (``critic_only_groups: [linvel]``, as on the
Go2, whose robot reports no base velocity): it learns the base velocity concurrently with PPO, and its exported
policy runs where every policy runs (``unilab export``, the deploy spec's ``estimator`` section, the robot side's
``OnnxPolicy``, ``unilab robot lockstep``, ``unilab eval``) with nothing else changed."""

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from trainers.ppo.config import TrainConfig, from_dict
from trainers.ppo.runner import Runner

GO1 = "UniLab/Go1Joystick-v0"
ITERATIONS = 40


@pytest.fixture(scope="module")
def go1_run(tmp_path_factory):
    """40 iterations of 64 envs (61k steps, ~25 s on one busy core); per iteration the estimator's RMSE on the
    rollout (before the update trains on it) and the std of the rollout's true velocities, per axis."""
    out = tmp_path_factory.mktemp("go1_estimator")
    cfg = from_dict(TrainConfig, {
        "task": GO1, "num_envs": 64, "total_steps": 64 * 24 * ITERATIONS, "seed": 0, "out": str(out),
        "torch_threads": 1,
        # the base starts at rest (no reset_base_velocity kick, which no observation can tell) and explores less
        # than the recipes (std 0.3): early rollouts of a falling robot are hard to estimate from one frame
        "env_kwargs": {"critic_only_groups": ["linvel"], "reset_base_velocity": 0.0},
        "algo": {"num_steps": 24, "num_epochs": 5, "num_minibatches": 8, "schedule": "fixed", "learning_rate": 1e-3},
        "policy": {"actor_hidden": [64, 64], "critic_hidden": [64, 64], "init_std": 0.3,
                   "estimator": {"targets": ["linvel"], "hidden": [64, 32]}},
        "log": {"tensorboard": False, "progress": False, "plot": False, "save_interval": 1000}})
    rows = []

    def record(runner, stats):
        std = runner.storage.targets.reshape(-1, 3).std(0)
        rows.append(([stats[f"estimator/rmse_linvel_{a}"] for a in "xyz"], std.tolist()))
        return False

    runner = Runner(cfg)
    try:
        runner.learn(callback=record)
    finally:
        runner.close()
    return out, np.array([r[0] for r in rows]), np.array([r[1] for r in rows])


def test_the_estimator_learns_the_base_velocity_below_its_own_spread(go1_run):
    """Over the last 5 iterations the RMSE per axis is below 0.9 of the true velocity's std (the error of the best
    constant guess; the untrained estimator, which says ~0, is at or above it). Measured at seeds 0-2: 0.80-0.84 (x),
    0.78-0.81 (y), 0.61-0.66 (z); a regressor fitted offline for 3000 steps on such rollouts reaches ~0.6: one frame
    of a robot that has not learned to walk says only so much about its velocity."""
    _, rmse, std = go1_run
    assert len(rmse) == ITERATIONS
    ratio = rmse[-5:].mean(0) / std[-5:].mean(0)
    assert (ratio < 0.9).all(), ratio
    assert (rmse[0] >= 0.95 * std[0]).all(), (rmse[0], std[0])  # the first rollout: the untrained estimator


def test_the_exported_policy_runs_everywhere_with_its_estimate_named_in_the_spec(go1_run):
    out, _, _ = go1_run
    done = subprocess.run([sys.executable, "-m", "trainers.cli", "export", str(out)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "output estimate float32 [batch, 3]: the learned state estimator's estimate of linvel" in done.stdout

    from unilab_robot.policy import OnnxPolicy, find_policy

    bundle = find_policy(out)
    spec = bundle.spec
    assert all(g.name != "linvel" for g in spec.observation.groups) and spec.observation.size == 47  # no odometry
    e = spec.estimator
    assert (e.output, e.size, [(g.name, g.start, g.stop, g.unit) for g in e.groups]) == (
        "estimate", 3, [("linvel", 0, 3, "m/s")])
    assert json.loads((out / "deploy_spec.json").read_text())["estimator"]["groups"][0]["name"] == "linvel"
    policy = OnnxPolicy(bundle.onnx, spec)  # the robot side's policy: actions only, unchanged
    assert policy(np.zeros(47, np.float32)).shape == (12,)

    shipped = out.parent / "shipped"
    ship = subprocess.run([sys.executable, "-m", "trainers.cli", "ship", str(out), "--out", str(shipped)],
                          capture_output=True, text=True, timeout=600)
    assert ship.returncode == 0, ship.stderr[-2000:]
    assert json.loads((shipped / "deploy_spec.json").read_text())["estimator"]["size"] == 3

    lock = subprocess.run([sys.executable, "-m", "trainers.cli", "robot", "lockstep", str(out), "--episodes", "1",
                           "--episode-s", "1"], capture_output=True, text=True, timeout=600)
    assert lock.returncode == 0, lock.stderr[-2000:]
    assert json.loads(lock.stdout.strip().splitlines()[-1])["episodes"] == 1

    from trainers.ppo.evaluate import evaluate

    result = evaluate(out, episodes=1, num_envs=1, skip_first=False, progress=False)
    assert set(result.estimator_rmse) == {f"estimator/rmse_linvel_{a}" for a in "xyz"}
    assert all(0 < v < 1.0 for v in result.estimator_rmse.values()), result.estimator_rmse
    with torch.no_grad():  # eval reads the same estimate the ONNX gives
        from trainers.ppo.evaluate import load_policy
        import onnxruntime as ort

        torch_policy, _, _ = load_policy(out)
        obs = np.random.default_rng(0).normal(0, 1, (64, 47)).astype(np.float32)
        got = ort.InferenceSession(str(bundle.onnx), providers=["CPUExecutionProvider"]).run(["estimate"], {"obs": obs})[0]
        np.testing.assert_allclose(got, torch_policy.estimate(torch.from_numpy(obs)).numpy(), atol=1e-5, rtol=1e-5)
