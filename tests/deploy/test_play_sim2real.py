"""Play-side sim-to-real: a profile's noise, latency and packet loss, with the wrappers' numbers and order."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from unilab_robot.deploy import SpecError
from unilab_envs.deploy_spec import default_model_path, deploy_spec_for
from unilab_robot.deploy.reference import PolicyIO
from unilab_robot.deploy.sim2real import PlaySim2Real, load_play_profile

GO1 = "UniLab/Go1Joystick-v0"


@pytest.fixture(scope="module")
def go1():
    spec = deploy_spec_for(GO1)
    model = mujoco.MjModel.from_xml_path(str(default_model_path(GO1)))
    return spec, model, PolicyIO(spec, model)


def _layer(go1, profile, seed=0):
    spec, model, io = go1
    s2r = PlaySim2Real(profile, spec, seed)
    s2r.start_episode(model, io.actuators)
    return s2r


def test_packaged_profile_loads_and_says_what_it_skips(go1):
    s2r = _layer(go1, load_play_profile("go1_real"))
    assert "observation_noise" in s2r.applied and "packet_loss" in s2r.applied and "action_latency" in s2r.applied
    assert s2r.skipped == ("domain_randomization", "random_push")
    assert "not applied in play" in s2r.describe()


def test_profile_of_another_robot_is_refused(go1):
    with pytest.raises(SpecError, match="is for UniLab/UR5Reach-v0 .*, but the policy is for UniLab/Go1Joystick-v0; profiles for "
                       "UniLab/Go1Joystick-v0: go1_real"):
        PlaySim2Real(load_play_profile("ur5_real"), go1[0])


def test_unknown_sections_keys_and_groups_are_refused(go1):
    with pytest.raises(SpecError, match="unknown profile section 'obs_noise'"):
        load_play_profile({"obs_noise": {}})
    with pytest.raises(SpecError, match="profile section 'action_noise': unknown action_noise key 'sigma'"):
        load_play_profile({"action_noise": {"sigma": 0.1}})
    with pytest.raises(SpecError, match="names observation groups \\['imu'\\]"):
        PlaySim2Real({"observation_noise": {"scales": {"imu": 0.1}}}, go1[0])
    with pytest.raises(SpecError, match="unknown sim-to-real profile 'nope'"):
        load_play_profile("nope")


def test_extends_and_null_sections(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("extends: go1_real\npacket_loss: null\naction_latency: {delay: 3}\n")
    profile = load_play_profile(path)
    assert "packet_loss" not in profile and profile["action_latency"] == {"delay": 3}
    assert profile["observation_noise"]["scales"]["gyro"] == 0.2


def test_action_latency_executes_the_action_of_k_steps_before(go1):
    s2r = _layer(go1, {"action_latency": {"delay": 2}})
    sent = [np.full(12, float(t)) for t in range(1, 6)]
    executed = [s2r.action(a) for a in sent]
    assert np.all(executed[0] == 0) and np.all(executed[1] == 0)  # nothing has arrived yet: the home pose
    for t in range(2, 5):
        np.testing.assert_array_equal(executed[t], sent[t - 2])


def test_observation_latency_repeats_the_first_reading(go1):
    s2r = _layer(go1, {"observation_latency": {"delay": 1}})
    seen = [s2r.observation(np.full(50, float(t))) for t in range(3)]
    assert seen[0][0] == 0 and seen[1][0] == 0 and seen[2][0] == 1


def test_lost_packets_hold_the_last_value(go1):
    s2r = _layer(go1, {"packet_loss": {"observations": {"model": "bernoulli", "loss_rate": 1.0},
                                       "actions": {"model": "bernoulli", "loss_rate": 1.0}}})
    assert s2r.observation(np.full(50, 1.0))[0] == 1.0  # an episode's first reading always arrives
    assert s2r.observation(np.full(50, 2.0))[0] == 1.0
    assert np.all(s2r.action(np.ones(12)) == 0.0)        # no action ever arrived: zeros


def test_uniform_noise_touches_only_its_groups_within_its_scale(go1):
    spec = go1[0]
    s2r = _layer(go1, {"observation_noise": {"distribution": "uniform", "scales": {"gyro": 0.2}}})
    obs = np.zeros(50, np.float32)
    draws = np.array([s2r.observation(obs) for _ in range(2000)])
    g = spec.observation.group("gyro")
    assert np.abs(draws[:, g.start:g.stop]).max() <= 0.2 + 1e-6
    assert draws[:, g.start:g.stop].std() == pytest.approx(0.2 / np.sqrt(3), rel=0.05)
    others = np.delete(draws, np.arange(g.start, g.stop), axis=1)
    assert np.all(others == 0)


def test_a_noise_level_range_is_drawn_per_episode(go1):
    spec, model, io = go1
    s2r = PlaySim2Real({"observation_noise": {"distribution": "uniform", "scales": {"gyro": 0.2}, "level": [0.0, 1.0]}}, spec, 0)
    g = spec.observation.group("gyro")
    obs = np.zeros(50, np.float32)
    levels, stds = [], []
    for _ in range(6):
        s2r.start_episode(model, io.actuators)
        draws = np.array([s2r.observation(obs) for _ in range(1500)])[:, g.start:g.stop]
        levels.append(s2r._obs_level)
        stds.append(draws.std())
    assert len(set(levels)) == 6 and all(0.0 <= v <= 1.0 for v in levels)
    np.testing.assert_allclose(stds, np.array(levels) * 0.2 / np.sqrt(3), rtol=0.08, atol=1e-3)


def test_motor_strength_scales_the_actuators_per_episode(go1):
    spec, model, io = go1
    model = mujoco.MjModel.from_xml_path(str(default_model_path(GO1)))
    kp = model.actuator_gainprm[io.actuators, 0].copy()
    s2r = PlaySim2Real({"motor_strength": {"strength": [0.9, 1.1], "target": "torque"}}, spec, 0)
    for _ in range(3):
        s2r.start_episode(model, io.actuators)
        ratio = model.actuator_gainprm[io.actuators, 0] / kp
        assert np.all((ratio >= 0.9) & (ratio <= 1.1)) and ratio.std() > 0
        np.testing.assert_allclose(-model.actuator_biasprm[io.actuators, 1] / kp, ratio)
