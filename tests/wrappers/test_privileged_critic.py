"""The critic's view of the sim-to-real gap: exact clean observations and perturbation draws."""

from __future__ import annotations

import numpy as np
import pytest

from unilab_envs.config import ConfigError
from wrappers import Sim2Real
from wrappers.privileged import privileged_parts

from tests.wrappers.conftest import Tap, make_go1

A = 12


def go1_real(n=8, parts=True, **overrides):
    return Sim2Real(make_go1(n), {"extends": "go1_real", "privileged_critic": parts, **overrides})


def test_parts_from_the_profile_value():
    assert privileged_parts(True) == ("clean_obs", "perturbations")
    assert privileged_parts(None) == privileged_parts(False) == ()
    assert privileged_parts(["perturbations"]) == ("perturbations",)
    with pytest.raises(ConfigError, match="unknown part"):
        privileged_parts(["clean_state"])
    with pytest.raises(ConfigError, match="true, false or a list"):
        privileged_parts(3)


def test_without_the_key_the_critic_sees_only_the_task_extras():
    env = Sim2Real(make_go1(4), "go1_real")
    assert env.critic is None
    _, info = env.reset(seed=0)
    assert info["privileged_obs"].shape == (4, 25)
    # the stack declares the task's own space: a trainer reading it off the stack keeps its asymmetric critic
    assert env.privileged_observation_space == env.unwrapped.privileged_observation_space
    assert env.privileged_observation_space.shape[-1] == 25


def test_groups_tile_the_extended_privileged_observation():
    env = go1_real()
    groups = env.critic.groups
    spans = sorted((s.start, s.stop) for s in groups.values())
    assert spans[0][0] == 25  # after the task's own 25 floats
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert env.privileged_observation_space.shape == (spans[-1][1],)
    _, info = env.reset(seed=0)
    assert info["privileged_obs"].shape == (8, spans[-1][1])
    assert groups["clean_obs"].stop - groups["clean_obs"].start == 50
    for name in ("randomized_friction", "push", "push_age", "motor_strength", "action_delay", "observation_delay", "imu_bias"):
        assert name in groups


def test_clean_obs_is_the_env_observation_before_the_wrappers():
    inner = Tap(make_go1(8))
    env = Sim2Real(inner, {"extends": "go1_real", "privileged_critic": ["clean_obs"]})
    obs, info = env.reset(seed=0)
    cols = env.critic.groups["clean_obs"]
    np.testing.assert_array_equal(info["privileged_obs"][:, cols], inner.obs)
    rng = np.random.default_rng(0)
    differs = 0
    for _ in range(30):
        obs, *_, info = env.step(rng.uniform(-1, 1, (8, A)).astype(np.float32))
        np.testing.assert_array_equal(info["privileged_obs"][:, cols], inner.obs)
        differs += int(np.any(obs != inner.obs))
    assert differs == 30  # the policy's view is perturbed every step, the critic's is not
    assert set(env.critic.groups) == {"clean_obs"}


def test_perturbation_groups_equal_the_draws_applied():
    env = go1_real(8, ["perturbations"])
    _, info = env.reset(seed=3)
    g, priv = env.critic.groups, info["privileged_obs"]
    dr, motors = env.layers["domain_randomization"], env.layers["motor_strength"]
    friction = env.unwrapped.batch.expand("geom_friction")[:, :, 0]
    np.testing.assert_allclose(priv[:, g["randomized_friction"]][:, 0], friction[:, 0], rtol=1e-6)
    np.testing.assert_allclose(priv[:, g["randomized_kp_scale"]], dr.params["kp_scale"], rtol=1e-6)
    np.testing.assert_allclose(priv[:, g["motor_strength"]], motors.gain, rtol=1e-6)
    np.testing.assert_array_equal(priv[:, g["action_delay"]][:, 0], env.layers["action_latency"].delay)
    np.testing.assert_allclose(priv[:, g["imu_bias"]], env.layers["imu_bias_drift"].bias, rtol=1e-6)


def test_the_push_in_the_critic_obs_is_the_kick_applied():
    env = go1_real(8, ["perturbations"], random_push={"interval_s": [0.1, 0.2], "magnitude": [0.5, 1.0]})
    env.reset(seed=0)
    push = env.layers["random_push"]
    qvel = env.unwrapped.batch.bind("qvel")
    g = env.critic.groups
    seen = 0
    zero = np.zeros((8, A), np.float32)
    for _ in range(40):
        before = qvel[:, :2].copy()
        push._actions(zero)  # apply this step's kicks by hand to measure them
        kick = qvel[:, :2] - before
        qvel[:, :2] = before
        pushed = push.pushed.copy()
        _, _, te, tr, info = push.env.step(zero)
        env.critic.fill(info)
        priv = info["privileged_obs"]
        np.testing.assert_allclose(priv[pushed][:, g["push"]], kick[pushed], rtol=1e-5, atol=1e-6)
        assert np.all(priv[pushed][:, g["push_age"]] == 0)
        assert np.all(np.linalg.norm(priv[pushed][:, g["push"]], axis=1) >= 0.5 - 1e-6)
        seen += int(pushed.sum())
    assert seen > 8


def test_final_privileged_obs_carries_the_ended_episodes_draws():
    env = Sim2Real(make_go1(4, max_episode_steps=5), {"extends": "go1_real", "privileged_critic": True})
    env.reset(seed=1)
    strength_cols = env.critic.groups["motor_strength"]
    zero = np.zeros((4, A), np.float32)
    for _ in range(4):
        env.step(zero)
    old = env.layers["motor_strength"].gain.copy()
    _, _, te, tr, info = env.step(zero)  # the time limit: every row ends and is redrawn
    assert np.all(tr | te)
    np.testing.assert_allclose(info["final_privileged_obs"][:, strength_cols], old, rtol=1e-6)
    np.testing.assert_allclose(info["privileged_obs"][:, strength_cols], env.layers["motor_strength"].gain, rtol=1e-6)
    assert not np.allclose(old, env.layers["motor_strength"].gain)


def test_state_round_trip_keeps_the_critics_view():
    a, b = go1_real(4), go1_real(4)
    a.reset(seed=0)
    b.reset(seed=5)
    rng = np.random.default_rng(1)
    for _ in range(20):
        a.step(rng.uniform(-1, 1, (4, A)).astype(np.float32))
    b.set_state(a.get_state())
    act = rng.uniform(-1, 1, (4, A)).astype(np.float32)
    *_, ia = a.step(act)
    *_, ib = b.step(act)
    np.testing.assert_array_equal(ia["privileged_obs"], ib["privileged_obs"])
