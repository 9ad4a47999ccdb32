"""The whole-profile curriculum: one level scales every section; it moves with the episodes and resumes exactly."""

from __future__ import annotations

import numpy as np
import pytest

from trainers.common.envs import AS_TRAINED, resolve_sim2real
from unilab_envs.config import ConfigError
from unilab_robot.deploy.sim2real import load_play_profile
from wrappers import Sim2Real
from wrappers.curriculum import ProfileCurriculum, ProfileCurriculumConfig, episodes_that_went_well, next_profile_level
from wrappers.latency import scaled_delay

from tests.wrappers.conftest import make_go1

A = 12
#: go1_real with friction left alone: at level 0 nothing differs from the bare task
NO_FRICTION = {"extends": "go1_real", "domain_randomization": {"friction": None}}


def test_the_rule_raises_lowers_and_holds_by_the_share_that_went_well():
    cfg = ProfileCurriculumConfig(step=0.25, raise_above=0.8, lower_below=0.5)
    assert next_profile_level(0.5, 8, 10, cfg) == 0.75  # 80%: up
    assert next_profile_level(0.5, 7, 10, cfg) == 0.5  # 70%: stays
    assert next_profile_level(0.5, 5, 10, cfg) == 0.5  # 50% is not below 50%
    assert next_profile_level(0.5, 4, 10, cfg) == 0.25  # 40%: down
    assert next_profile_level(1.0, 10, 10, cfg) == 1.0  # clipped
    assert next_profile_level(0.0, 0, 10, cfg) == 0.0
    assert next_profile_level(0.7, 10, 10, ProfileCurriculumConfig(step=0.1)) == 0.8  # no 0.7999999


def test_an_episode_goes_well_by_success_where_the_task_reports_it_else_by_surviving():
    terminated = np.array([True, True, False, False])
    truncated = np.array([False, False, True, False])
    finished, well = episodes_that_went_well(terminated, truncated, {})
    np.testing.assert_array_equal(finished, [True, True, True, False])
    np.testing.assert_array_equal(well, [False, False, True, False])  # the time limit, not a fall
    _, well = episodes_that_went_well(terminated, truncated, {"is_success": np.array([True, False, False, True])})
    np.testing.assert_array_equal(well, [True, False, False, False])  # a success ends an episode by terminating


def test_delays_scale_by_their_ends_rounded_half_up():
    assert scaled_delay((0, 1), 0.0) == (0, 0)
    assert scaled_delay((0, 1), 0.49) == (0, 0)
    assert scaled_delay((0, 1), 0.5) == (0, 1)
    assert scaled_delay((1, 3), 0.5) == (1, 2)
    assert scaled_delay((1, 3), 1.0) == (1, 3)


def test_every_section_scales_from_unperturbed_to_as_configured():
    env = Sim2Real(make_go1(4), {"extends": "go1_real", "curriculum": {"start": 0.5}})
    layers = env.layers
    assert set(layers) == {"domain_randomization", "random_push", "motor_strength", "action_noise", "action_latency",
                           "imu_bias_drift", "observation_noise", "observation_latency", "packet_loss"}
    assert all(layer.profile_level == 0.5 for layer in layers.values())
    noise = layers["observation_noise"]
    np.testing.assert_allclose(noise._scale, noise._configured_scale / 2)
    assert layers["action_noise"]._std == pytest.approx(0.005)
    assert layers["action_latency"]._range == (0, 1) and layers["observation_latency"]._range == (0, 1)
    loss = layers["packet_loss"]
    np.testing.assert_allclose(loss._obs_params, [0.01, 0.5, 0.0, 0.5])  # bursts as configured, half their loss
    np.testing.assert_allclose(loss._action_params, [0.0, 1.0, 0.005, 0.005])
    motors = layers["motor_strength"]
    np.testing.assert_allclose([motors._low[0], motors._high[0]], [0.95, 1.05])
    dr = layers["domain_randomization"]
    friction, added = dr._slices["friction"], dr._slices["added_mass"]
    np.testing.assert_allclose([dr._low[friction][0], dr._high[friction][0]], [0.55, 0.85])  # towards the middle, 0.7
    np.testing.assert_allclose([dr._low[added][0], dr._high[added][0]], [-0.5, 0.5])
    push = layers["random_push"]
    assert (push._low, push._high) == pytest.approx((0.05, 1.0))
    imu = layers["imu_bias_drift"]
    np.testing.assert_allclose(imu._bias_std, imu._configured_bias_std / 2)
    for layer in layers.values():
        layer.set_profile_level(1.0)
    assert layers["action_latency"]._range == (0, 1) and (push._low, push._high) == (0.1, 2.0)
    np.testing.assert_allclose(loss._obs_params, [0.01, 0.5, 0.0, 1.0])
    with pytest.raises(ValueError, match=r"profile level must be in \[0, 1\]"):
        push.set_profile_level(1.5)


def test_level_zero_is_the_bare_task_bit_for_bit():
    bare, stacked = make_go1(6), Sim2Real(make_go1(6), {**NO_FRICTION, "curriculum": {"start": 0.0}})
    obs_bare, _ = bare.reset(seed=3)
    obs, _ = stacked.reset(seed=3)
    np.testing.assert_array_equal(obs, obs_bare)
    rng = np.random.default_rng(0)
    for _ in range(60):
        actions = rng.uniform(-1, 1, (6, A)).astype(np.float32)
        obs_bare, r_bare, *_ = bare.step(actions)
        obs, r, *_ = stacked.step(actions)
        np.testing.assert_array_equal(obs, obs_bare)
        np.testing.assert_array_equal(r, r_bare)
    assert stacked.curriculum.level == 0.0


def test_observation_noise_at_half_level_has_half_the_spread():
    clean = Sim2Real(make_go1(256), {"observation_noise": {"distribution": "gaussian", "scales": {"gyro": 0.2}}, "curriculum": {"start": 1.0}})
    half = Sim2Real(make_go1(256), {"observation_noise": {"distribution": "gaussian", "scales": {"gyro": 0.2}}, "curriculum": {"start": 0.5}})
    bare = make_go1(256)
    spreads = []
    for env in (clean, half):
        obs, _ = env.reset(seed=1)
        truth, _ = bare.reset(seed=1)
        spreads.append(np.std(obs[:, 3:6] - truth[:, 3:6]))
    assert spreads[0] == pytest.approx(0.2, rel=0.08)
    assert spreads[1] == pytest.approx(0.1, rel=0.08)


class _Layer:
    def __init__(self):
        self.levels = []

    def set_profile_level(self, level):
        self.levels.append(level)


def test_the_level_rises_after_a_window_of_survivors_and_falls_after_falls():
    layer = _Layer()
    curriculum = ProfileCurriculum({"start": 0.2, "step": 0.1, "window": 4}, [layer], num_envs=2)
    none, both, first = np.zeros(2, bool), np.ones(2, bool), np.array([True, False])
    info = {}
    curriculum.update(none, first, info)  # 1 finished, well
    assert curriculum.level == 0.2 and info["profile_level"].tolist() == [0.2, 0.2]
    curriculum.update(none, both, info)  # 3 finished
    assert curriculum.level == 0.2
    curriculum.update(none, first, info)  # 4 of 4 well: up
    assert curriculum.level == pytest.approx(0.3) and layer.levels == [0.2, 0.3]
    assert (curriculum.finished, curriculum.went_well) == (0, 0)
    curriculum.update(both, none, info)
    curriculum.update(both, none, info)  # 4 falls of 4: down
    assert curriculum.level == pytest.approx(0.2) and layer.levels[-1] == pytest.approx(0.2)


def test_a_stack_that_keeps_falling_stays_at_level_zero_and_reports_it():
    # a Go1 whose actions hold every joint at its limit falls within a few seconds, every episode
    env = Sim2Real(make_go1(4), {"extends": "go1_real", "curriculum": {"start": 0.1, "step": 0.1, "window": 4}})
    env.reset(seed=0)
    falls = 0
    for _ in range(400):
        _, _, terminated, _, info = env.step(np.ones((4, A), np.float32))
        falls += int(terminated.sum())
    assert falls >= 8
    assert env.curriculum.level == 0.0
    assert info["profile_level"].tolist() == [0.0] * 4
    assert all(layer.profile_level == 0.0 for layer in env.layers.values())


def test_resume_is_exact():
    profile = {"extends": "go1_real", "curriculum": {"start": 0.6, "step": 0.2, "window": 3}}
    first = Sim2Real(make_go1(4), profile)
    first.reset(seed=5)
    rng = np.random.default_rng(1)
    for _ in range(150):
        first.step(np.ones((4, A), np.float32))  # falls move the level
    assert first.curriculum.level < 0.6
    state = first.get_state()
    second = Sim2Real(make_go1(4), profile)
    second.reset(seed=99)
    second.set_state(state)
    assert second.curriculum.get_state() == first.curriculum.get_state()
    assert all(layer.profile_level == first.curriculum.level for layer in second.layers.values())
    for _ in range(80):
        actions = rng.uniform(-1, 1, (4, A)).astype(np.float32)
        a = first.step(actions)
        b = second.step(actions)
        for x, y in zip(a[:4], b[:4]):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(a[4]["profile_level"], b[4]["profile_level"])


def test_a_state_without_the_curriculum_is_refused_with_a_way_out():
    saved = Sim2Real(make_go1(2), "go1_real")
    saved.reset(seed=0)
    env = Sim2Real(make_go1(2), {"extends": "go1_real", "curriculum": True})
    env.reset(seed=0)
    with pytest.raises(Exception, match="no profile curriculum.*--init-from"):
        env.set_state(saved.get_state())


def test_bad_settings_say_what_is_wrong():
    with pytest.raises(ConfigError, match="unknown.*stat"):
        Sim2Real(make_go1(2), {"extends": "go1_real", "curriculum": {"stat": 0.0}})
    with pytest.raises(ConfigError, match="lower_below"):
        Sim2Real(make_go1(2), {"extends": "go1_real", "curriculum": {"lower_below": 0.9, "raise_above": 0.5}})


def test_evaluation_and_play_run_the_whole_profile():
    trained = {"extends": "go1_real", "curriculum": {"start": 0.0}, "random_push": {"levels": 5}}
    evaluated = resolve_sim2real(AS_TRAINED, trained)
    assert "curriculum" not in evaluated and evaluated["random_push"]["levels"] == 0
    assert Sim2Real(make_go1(2), evaluated).curriculum is None
    assert "curriculum" in load_play_profile(trained)  # play accepts it (and ignores it: a training device)
