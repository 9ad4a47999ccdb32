"""One table of profile keys (unilab_robot.profiles.SECTION_KEYS), and the wrappers and the play replay agree on it.

For every section the table names, the keys it accepts are its wrapper's config fields; the play
replay (unilab_robot.deploy.sim2real) either applies a section, with the wrapper's default for each
key, or lists it as skipped with a reason. Then, for every shipped profile and every key of every
section in it: the wrappers accept it (a Sim2Real stack is built from it for sections without a
camera) and play applies or skips it, and vice versa.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from unilab_robot.deploy import sim2real as play
from unilab_robot.profiles import (CHANNEL_KEYS, CURRICULUM_KEYS, OPTION_KEYS, SECTION_KEYS, Profile, profile_names,
                                   resolve)
from wrappers._base import make_config
from wrappers.curriculum import ProfileCurriculumConfig
from wrappers.packet_loss import ChannelConfig
from wrappers.sim2real import SECTIONS

#: keys a wrapper's config has that its section does not accept, and why
NOT_IN_A_SECTION = {("action_latency", "groups"): "LatencyConfig's groups is ObservationLatency's; ActionLatency "
                                                   "refuses any value but None"}


def fields(cls) -> set[str]:
    return {f.name for f in dataclasses.fields(cls) if f.init}


def default(cls, name):
    f = next(f for f in dataclasses.fields(cls) if f.name == name)
    return f.default_factory() if f.default is dataclasses.MISSING else f.default


def canonical(value):
    """Lists and tuples, dicts and read-only mappings compared alike."""
    if isinstance(value, (list, tuple)):
        return tuple(canonical(v) for v in value)
    if hasattr(value, "items"):
        return {k: canonical(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize("section", list(SECTION_KEYS))
def test_a_section_accepts_its_wrappers_config_fields(section):
    cls = SECTIONS[section]
    assert cls.SECTION == section
    skipped = {key for (name, key) in NOT_IN_A_SECTION if name == section}
    assert set(SECTION_KEYS[section]) == fields(cls.CONFIG) - skipped


def test_nested_tables_match_their_configs():
    assert set(CHANNEL_KEYS) == fields(ChannelConfig)
    assert set(CURRICULUM_KEYS) == fields(ProfileCurriculumConfig)
    assert list(SECTIONS) == list(SECTION_KEYS)  # the nesting order is the table's


def test_play_applies_or_skips_every_section_with_the_wrappers_defaults():
    applied, skipped = set(play.APPLIED_DEFAULTS), set(play.SKIPPED)
    assert not applied & skipped and applied | skipped == set(SECTION_KEYS)
    assert all(reason.strip() for reason in play.SKIPPED.values())
    for section, defaults in play.APPLIED_DEFAULTS.items():
        assert set(defaults) == set(SECTION_KEYS[section]), section  # every key the wrapper takes, applied
        for key, value in defaults.items():
            assert canonical(value) == canonical(default(SECTIONS[section].CONFIG, key)), (section, key)
    assert play.CHANNEL_DEFAULTS == {key: default(ChannelConfig, key) for key in CHANNEL_KEYS}
    assert set(play.TRAINING_ONLY) == set(OPTION_KEYS)


@pytest.mark.parametrize("name", profile_names())
def test_every_key_of_a_shipped_profile_is_accepted_by_the_wrappers_and_applied_or_skipped_in_play(name):
    profile = resolve(name)
    assert isinstance(profile, Profile) and resolve(profile) is profile
    for section, config in profile.sections.items():
        assert set(config) <= set(SECTION_KEYS[section]), (name, section)
        if section in play.APPLIED_DEFAULTS:
            assert set(config) <= set(play.APPLIED_DEFAULTS[section]), (name, section)
        else:
            assert play.SKIPPED[section], (name, section)
        make_config(SECTIONS[section].CONFIG, config, {})  # the wrapper's own config takes every key and value
        if section == "packet_loss":
            for channel in config.values():
                assert channel is None or set(channel) <= set(CHANNEL_KEYS)


@pytest.mark.parametrize("name", [n for n in profile_names() if not resolve(n).sections.keys() & set(play.CAMERA)])
def test_a_shipped_profile_builds_the_same_sections_in_the_wrappers_and_in_play(name):
    import gymnasium as gym

    import mujoco

    from unilab_envs.deploy_spec import default_model_path, deploy_spec_for
    from unilab_robot.deploy.reference import PolicyIO
    from wrappers import Sim2Real

    profile = resolve(name)
    env = gym.make_vec(profile.env_id, num_envs=2, num_threads=1)
    try:
        stack = Sim2Real(env, profile)
        assert stack.profile is profile  # resolved once, taken as it is
        spec = deploy_spec_for(profile.env_id)
        replay = play.PlaySim2Real(profile, spec, seed=0)
        model = mujoco.MjModel.from_xml_path(str(default_model_path(profile.env_id)))
        replay.start_episode(model, PolicyIO(spec, model).actuators)
        assert list(stack.layers) == [s for s in SECTION_KEYS if s in profile.sections]
        assert set(replay.applied) | set(replay.skipped) | {"safety"} >= set(stack.layers)
        assert set(replay.applied) == set(stack.layers) & set(play.APPLIED)
        obs = np.zeros(spec.observation.size)
        assert replay.observation(obs).shape == obs.shape
        assert replay.action(np.zeros(spec.action.size)).shape == (spec.action.size,)
    finally:
        env.close()


def test_resolve_is_idempotent_frozen_and_its_errors_are_one_line(tmp_path):
    from unilab_robot.config import ConfigError
    from trainers.common.profile_label import profile_label

    profile = resolve("go1_real")
    assert resolve(profile) is profile and profile.name == "go1_real" and profile.source == "go1_real"
    assert profile_label(profile) == "go1_real"  # a run's label names what it gave, not the resolved mapping
    profile["observation_noise"]["scales"]["gyro"] = 99.0  # a consumer's copy: the profile is unchanged
    assert profile.sections["observation_noise"]["scales"]["gyro"] == 0.2
    with pytest.raises(dataclasses.FrozenInstanceError):
        profile.env_id = "UniLab/G1Joystick-v0"
    inline = {"extends": "go1_real", "random_push": None, "action_latency": {"delay": 2}}
    mine = resolve(inline)
    assert mine.name is None and mine.source == inline and "random_push" not in mine
    assert mine["action_latency"] == {"delay": 2} and mine.env_id == "UniLab/Go1Joystick-v0"
    assert "packet_loss" not in resolve(profile, {"packet_loss": None}) and "packet_loss" in profile
    for bad, words in (({"obs_noise": {}}, "unknown profile section 'obs_noise'"),
                       ({"action_noise": {"sigma": 0.1}}, "profile section 'action_noise': unknown action_noise key 'sigma'"),
                       ({"packet_loss": {"actions": {"rate": 0.1}}}, "unknown packet_loss channel key 'actions.rate'"),
                       ({"curriculum": {"begin": 0.0}}, "unknown curriculum key 'begin'")):
        with pytest.raises(ConfigError, match=words) as error:
            resolve(bad)
        assert "\n" not in str(error.value)
    with pytest.raises(ConfigError, match="is for UniLab/Go1Joystick-v0 .*profiles for UniLab/G1Joystick-v0: g1_real") as error:
        profile.check_fits("UniLab/G1Joystick-v0")
    assert "\n" not in str(error.value)
