"""One config system: tasks, wrappers, sim-to-real profiles and both trainers fail, parse,
load and merge the same way (``unilab_envs.config``)."""

from __future__ import annotations

import dataclasses
import re

import gymnasium as gym
import pytest

import unilab_envs  # noqa: F401  registers UniLab/*
from trainers.ppo import config as ppo_config
from trainers.sb3 import config as sb3_config
from unilab_envs.config import ConfigError, build_config, deep_merge, load_yaml, parse_overrides
from unilab_robot.profiles import resolve_profile
from wrappers._base import make_config
from wrappers.noise import ObservationNoiseConfig
from wrappers.sim2real import load_profile

#: ``unknown <kind> '<key>'. Did you mean '<closest>'? Known keys[ in <path>]: a, b, c`` on one line
UNKNOWN_KEY = re.compile(r"^unknown [\w ()-]+ '(?P<key>[\w.]+)'\. Did you mean '(?P<hint>[\w.]+)'\? "
                         r"Known keys( in [\w.]+)?: [\w, ]+$")


def _task_key():
    gym.make_vec("UniLab/UR5Reach-v0", num_envs=1, action_scal=0.1)


def _task_nested_key():
    gym.make_vec("UniLab/UR5Reach-v0", num_envs=1, reward_scales={"distanse": -1.0})


def _wrapper_key():
    make_config(ObservationNoiseConfig, {"scale": {"gyro": 0.1}}, {})


def _ppo_key():
    ppo_config.load_config("Pendulum-v1", overrides=["algo.gama=0.9"])


def _sb3_key():
    sb3_config.load_config("sb3-ppo", 8, overrides=["clip_ob=5"])


def _profile_section(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("extends: go1_real\nrandom_psh: {interval_s: [5, 10]}\n")
    load_profile(str(path))


@pytest.mark.parametrize("make, key, hint", [
    (_task_key, "action_scal", "action_scale"),
    (_task_nested_key, "distanse", "distance"),
    (_wrapper_key, "scale", "scales"),
    (_ppo_key, "algo.gama", "algo.gamma"),
    (_sb3_key, "clip_ob", "clip_obs"),
    (_profile_section, "random_psh", "random_push"),
])
def test_a_typo_fails_the_same_way_everywhere(make, key, hint, tmp_path):
    with pytest.raises(ConfigError) as caught:
        make(tmp_path) if make is _profile_section else make()
    error = caught.value
    assert isinstance(error, TypeError) and isinstance(error, ValueError)  # callers catching either keep working
    match = UNKNOWN_KEY.match(str(error))
    assert match, str(error)
    assert (match["key"], match["hint"]) == (key, hint)


def test_a_bad_value_is_the_same_error_type_everywhere():
    with pytest.raises(ConfigError, match="action_scale"):
        gym.make_vec("UniLab/UR5Reach-v0", num_envs=1, action_scale=-1.0)
    with pytest.raises(ConfigError, match=r"algo.gamma must be in \(0, 1\]"):
        ppo_config.load_config("Pendulum-v1", overrides=["algo.gamma=2"])
    with pytest.raises(ConfigError, match="clip_obs must be > 0"):
        sb3_config.load_config("sb3-ppo", 8, overrides=["clip_obs=-1"])
    with pytest.raises(ConfigError, match="unknown sim-to-real profile 'go1_rael'"):
        load_profile("go1_rael")


# value as typed after `=`, the value both trainers must hold (written out by hand)
OVERRIDE_VALUES = [
    ("1e-3", 0.001),
    ("-2.5E2", -250.0),
    ("2e6", 2_000_000.0),
    ("1_000", 1000),
    ("3", 3),
    ("0.5", 0.5),
    ("true", True),
    ("null", None),
    ("", None),
    ("[64, 64]", [64, 64]),
    ("{a: 1, b: [x, y]}", {"a": 1, "b": ["x", "y"]}),
    ("'1e-3'", "1e-3"),
    ("go1_real", "go1_real"),
]


@pytest.mark.parametrize("text, value", OVERRIDE_VALUES)
def test_the_same_override_string_parses_the_same_in_both_trainers(text, value):
    ppo = ppo_config.load_config("Pendulum-v1", overrides=[f"env_kwargs.k={text}"])
    sb3 = sb3_config.load_config("sb3-ppo", 8, overrides=[f"env.k={text}"])
    assert ppo.env_kwargs["k"] == sb3.env["k"] == value
    assert type(ppo.env_kwargs["k"]) is type(sb3.env["k"]) is type(value)


def test_overrides_nest_and_refuse_the_same_way():
    assert parse_overrides(["a.b.c=1", "a.b.d=[1, 2]", "a.e=x", "a.b.c=2"]) == {"a": {"b": {"c": 2, "d": [1, 2]}, "e": "x"}}
    for bad in ("algo.gamma", "=3", "algo..gamma=1", ".x=1"):
        with pytest.raises(ConfigError, match=f"override {re.escape(repr(bad))} is not key=value"):
            ppo_config.load_config("Pendulum-v1", overrides=[bad])
        with pytest.raises(ConfigError, match=f"override {re.escape(repr(bad))} is not key=value"):
            sb3_config.load_config("sb3-ppo", 8, overrides=[bad])
    with pytest.raises(ConfigError, match=r"not valid YAML \(line 1, column"):
        parse_overrides(["policy.actor_hidden=[64,"])


def test_yaml_1e_minus_3_is_a_float_in_every_file(tmp_path):
    assert load_yaml("a: 1e-3\nb: 1.0e-3\nc: 2E6\nd: '1e-3'\ne: 1e\n") == {"a": 0.001, "b": 0.001, "c": 2e6,
                                                                            "d": "1e-3", "e": "1e"}
    ppo_file = tmp_path / "ppo.yaml"
    ppo_file.write_text("task: Pendulum-v1\nalgo: {learning_rate: 1e-3}\nenv_kwargs: {x: 1e-3}\n")
    sb3_file = tmp_path / "sb3.yaml"
    sb3_file.write_text("algo_kwargs: {learning_rate: 1e-3}\nenv: {x: 1e-3}\n")
    profile = tmp_path / "profile.yaml"
    profile.write_text("extends: go1_real\nobservation_noise: {scales: {gyro: 1e-3}}\n")
    ppo = ppo_config.load_config(config_file=ppo_file)
    sb3 = sb3_config.load_config("sb3-ppo", 8, path=sb3_file)
    assert ppo.algo.learning_rate == sb3.algo_kwargs["learning_rate"] == 0.001
    assert ppo.env_kwargs["x"] == sb3.env["x"] == 0.001 and isinstance(sb3.env["x"], float)
    assert resolve_profile(str(profile))["observation_noise"]["scales"]["gyro"] == 0.001


def test_unreadable_yaml_is_one_line_everywhere(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("algo: [1, 2\n")
    for load in (lambda: ppo_config.load_config(config_file=broken),
                 lambda: sb3_config.load_config("sb3-ppo", 8, path=broken),
                 lambda: resolve_profile(str(broken))):
        with pytest.raises(ConfigError) as caught:
            load()
        message = str(caught.value)
        assert "\n" not in message and f"{broken} is not valid YAML (line 2, column 1: " in message, message
    listed = tmp_path / "list.yaml"
    listed.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="must hold a mapping at top level, got list"):
        sb3_config.load_config("sb3-ppo", 8, path=listed)
    with pytest.raises(ConfigError, match="must hold a mapping at top level, got list"):
        resolve_profile(str(listed))


def test_deep_merge_by_hand():
    base = {"a": 1, "m": {"x": 1, "y": [1, 2], "n": {"p": 1}}, "gone": {"k": 1}}
    top = {"m": {"y": [3], "n": {"q": 2}}, "gone": None, "new": {"z": 0}}
    merged = deep_merge(base, top)
    assert merged == {"a": 1, "m": {"x": 1, "y": [3], "n": {"p": 1, "q": 2}}, "gone": None, "new": {"z": 0}}
    merged["m"]["n"]["p"] = 99
    merged["new"]["z"] = 99
    assert base["m"]["n"]["p"] == 1 and top["new"]["z"] == 0  # inputs untouched, nothing shared


def test_ppo_env_kwargs_merge_over_the_task_yaml_like_every_other_mapping():
    # trainers/configs/go1_joystick.yaml sets env_kwargs.reward_scales.positive_clip: 1.0; an override of
    # one other env keyword keeps it (the same merge as profiles and the SB3 config)
    cfg = ppo_config.load_config("UniLab/Go1Joystick-v0", overrides=["env_kwargs.reward_scales.orientation=-2"])
    assert cfg.env_kwargs == {"reward_scales": {"positive_clip": 1.0, "orientation": -2}}


def test_profile_overrides_and_extends_use_the_same_merge(tmp_path):
    child = tmp_path / "child.yaml"
    child.write_text("extends: go1_real\nrandom_push: null\naction_latency: {delay: [0, 3]}\n")
    parent = load_profile("go1_real")
    mine = load_profile(str(child), overrides={"observation_noise": {"distribution": "gaussian"}})
    assert "random_push" in parent and "random_push" not in mine
    assert mine["action_latency"] == deep_merge(parent["action_latency"], {"delay": [0, 3]})
    assert mine["observation_noise"] == deep_merge(parent["observation_noise"], {"distribution": "gaussian"})


@dataclasses.dataclass(frozen=True)
class _Scales:
    a: float = 1.0
    b: float = 2.0


@dataclasses.dataclass(frozen=True)
class _Task:
    gain: float = 1.0
    window: tuple[float, float] = (0.0, 1.0)
    scales: _Scales = _Scales(a=5.0)  # a robot's own defaults, not the class's

    def validate(self) -> None:
        if self.gain <= 0:
            raise ConfigError(f"gain must be > 0, got {self.gain}")


def test_build_config_merges_a_nested_mapping_into_the_defaults():
    cfg = build_config(_Task, {"scales": {"b": -1.0}, "window": [0.5, 2.0]})
    assert cfg == _Task(scales=_Scales(a=5.0, b=-1.0), window=(0.5, 2.0))
    assert build_config(_Task) == _Task()
    with pytest.raises(ConfigError, match=r"^unknown scales key 'c'\. Known keys: a, b$"):
        build_config(_Task, {"scales": {"c": 1.0}})
    with pytest.raises(ValueError, match="gain must be > 0"):
        build_config(_Task, {"gain": 0.0})
