"""Sim2Real profiles, determinism, single-env use and config errors."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import unilab_envs  # noqa: F401  (registers UniLab/*)
from tests.wrappers.conftest import MODES, make_go1
from wrappers import ActionLatency, ImuBiasDrift, ObservationNoise, Sim2Real, SingleEnv, load_profile, profile_names

PROFILE_ENVS = {"go1_real": "UniLab/Go1Joystick-v0", "g1_real": "UniLab/G1Joystick-v0", "ur5_real": "UniLab/UR5Reach-v0",
                "ur5_grasp_real": "UniLab/UR5Grasp-v0", "go1_depth_real": "UniLab/Go1JoystickDepth-v0",
                "go1_rough_real": "UniLab/Go1JoystickRough-v0", "go2_real": "UniLab/Go2Joystick-v0",
                "g1_track_real": "UniLab/G1Track-v0"}


def _rollout(env, steps, seed, actions_seed=0):
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(actions_seed)
    out = [obs]
    for _ in range(steps):
        a = rng.uniform(-1, 1, env.action_space.shape).astype(np.float32)
        obs, reward, terminated, truncated, info = env.step(a)
        out.append(obs)
    return np.stack(out)


def test_packaged_profiles():
    assert set(profile_names()) == set(PROFILE_ENVS)


@pytest.mark.parametrize("profile", sorted(PROFILE_ENVS))
@pytest.mark.parametrize("mode", MODES)
def test_profile_runs_on_its_robot(profile, mode):
    env_id = PROFILE_ENVS[profile]
    assert load_profile(profile)["env_id"] == env_id
    env = Sim2Real(gym.make_vec(env_id, num_envs=2, num_threads=1, autoreset_mode=mode, max_episode_steps=8), profile=profile)
    obs = _rollout(env, 12, seed=0)
    assert obs.dtype == np.float32 and np.isfinite(obs).all()
    assert set(env.layers) <= set(load_profile(profile))


def test_same_seed_same_perturbations_and_independent_of_threads():
    def run(seed, threads):
        env = Sim2Real(make_go1(4, max_episode_steps=10, num_threads=threads), profile="go1_real")
        return _rollout(env, 25, seed)

    a = run(7, 1)
    np.testing.assert_array_equal(a, run(7, 1))
    np.testing.assert_array_equal(a, run(7, 2))
    assert not np.array_equal(a, run(8, 1))


def test_parallel_kernels_match_serial(monkeypatch):
    """Large batches run the prange builds of the kernels; they draw exactly what the serial ones do."""
    import wrappers._base

    def run():
        env = Sim2Real(make_go1(4, max_episode_steps=6, num_threads=2), profile="go1_real")
        return _rollout(env, 12, seed=3)

    serial = run()
    monkeypatch.setattr(wrappers._base, "PARALLEL_MIN_ENVS", 1)
    np.testing.assert_array_equal(run(), serial)


def test_env_i_of_a_batch_equals_a_single_env_seeded_s_plus_i():
    overrides = {"random_push": {"interval_s": [0.1, 0.3]}}  # pushes happen within the window
    batch = Sim2Real(make_go1(3, max_episode_steps=10), profile="go1_real", overrides=overrides)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, (20, 3, 12)).astype(np.float32)
    singles = [Sim2Real(make_go1(1, max_episode_steps=10), profile="go1_real", overrides=overrides) for _ in range(3)]
    obs, _ = batch.reset(seed=20)
    for i, env in enumerate(singles):
        o, _ = env.reset(seed=20 + i)
        np.testing.assert_array_equal(o[0], obs[i])
    for t in range(20):
        obs, *_ = batch.step(actions[t])
        for i, env in enumerate(singles):
            o, *_ = env.step(actions[t, i : i + 1])
            np.testing.assert_array_equal(o[0], obs[i], err_msg=f"step {t} env {i}")


def test_single_env_adapter():
    env = SingleEnv(Sim2Real(make_go1(1, max_episode_steps=20), profile="go1_real"))
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=0)
    assert obs.shape == (50,)
    for _ in range(25):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        assert obs.shape == (50,) and isinstance(reward, float)
        if terminated or truncated:
            obs, info = env.reset()
    with pytest.raises(TypeError, match="SingleEnv"):
        ObservationNoise(gym.make("UniLab/Go1Joystick-v0"), scales={"gyro": 0.1})


def test_user_yaml_extends_and_overrides(tmp_path):
    path = tmp_path / "my_go1.yaml"
    path.write_text("extends: go1_real\nrandom_push: null\nobservation_noise:\n  scales: {gyro: 0.5}\naction_latency: {delay: 2}\n")
    profile = load_profile(path)
    assert "random_push" not in profile
    assert profile["observation_noise"]["scales"]["gyro"] == 0.5
    assert profile["observation_noise"]["scales"]["joint_vel"] == 1.5  # merged, not replaced
    env = Sim2Real(make_go1(2), profile=str(path), overrides={"packet_loss": None})
    assert "random_push" not in env.layers and "packet_loss" not in env.layers
    assert env.layers["action_latency"].delay.tolist() == [2, 2]
    env.reset(seed=0)
    env.step(np.zeros((2, 12), np.float32))


def test_profile_errors(tmp_path):
    env = make_go1(2)
    with pytest.raises(ValueError, match="unknown sim-to-real profile"):
        Sim2Real(env, profile="spot_real")
    with pytest.raises(TypeError, match="Did you mean 'random_push'"):
        Sim2Real(env, profile="go1_real", overrides={"random_pushes": {}})
    with pytest.raises(ValueError, match="observation_noise.*unknown observation group 'foot_contact'"):
        Sim2Real(env, profile="go1_real", overrides={"observation_noise": {"scales": {"foot_contact": 0.1}}})
    g1 = gym.make_vec("UniLab/G1Joystick-v0", num_envs=1, num_threads=1)
    with pytest.raises(ValueError, match="'go1_real' is for UniLab/Go1Joystick-v0.*profiles for UniLab/G1Joystick-v0: g1_real"):
        Sim2Real(g1, profile="go1_real")  # a Go1 profile on the G1: said up front
    # without its env_id a profile is applied wherever its groups and bodies exist (the user's choice)
    assert "observation_noise" in Sim2Real(g1, profile="go1_real", overrides={"env_id": None}).layers
    with pytest.raises(FileNotFoundError):
        Sim2Real(env, profile=str(tmp_path / "missing.yaml"))


def test_invalid_wrapper_configs():
    env = make_go1(2)
    with pytest.raises(ValueError, match="must be >= 0"):
        ObservationNoise(env, scales={"gyro": -0.1})
    with pytest.raises(ValueError, match="unknown observation group 'gyroscope'"):
        ObservationNoise(env, scales={"gyroscope": 0.1})
    with pytest.raises(TypeError, match="Did you mean 'scales'"):
        ObservationNoise(env, scale={"gyro": 0.1})
    with pytest.raises(ValueError, match="distribution"):
        ObservationNoise(env, scales={"gyro": 0.1}, distribution="laplace")
    with pytest.raises(ValueError, match="low <= high"):
        ActionLatency(env, delay=(3, 1))
    with pytest.raises(ValueError, match="whole numbers"):
        ActionLatency(env, delay=1.5)
    with pytest.raises(ValueError, match="drift_std of group 'gyro'"):
        ImuBiasDrift(env, drift_std={"gyro": -1.0})


def test_partial_reset_in_disabled_mode_restarts_only_the_masked_rows():
    env = Sim2Real(make_go1(4, mode="Disabled", num_threads=1), profile="go1_real")
    obs, _ = env.reset(seed=0)
    for _ in range(5):
        obs, *_ = env.step(np.zeros((4, 12), np.float32))
    delays = env.layers["action_latency"].delay.copy()
    friction = env.layers["domain_randomization"].params["friction"].copy()
    mask = np.array([True, False, True, False])
    again, _ = env.reset(options={"reset_mask": mask})
    np.testing.assert_array_equal(again[~mask], obs[~mask])  # untouched rows: nothing new to see
    assert not np.allclose(again[mask], obs[mask])
    new_friction = env.layers["domain_randomization"].params["friction"]
    np.testing.assert_array_equal(new_friction[~mask], friction[~mask])
    assert np.all(new_friction[mask] != friction[mask])
    assert env.layers["action_latency"].delay[~mask].tolist() == delays[~mask].tolist()
    env.step(np.zeros((4, 12), np.float32))
