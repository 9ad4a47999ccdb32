"""Named reward terms: a user's term from a test module, from the config, a zero weight, bad declarations.

Every env here uses one term list (the 16 built-ins, ``foot_clearance``, ``nan_probe``), so the
generated kernel compiles once for the file.
"""

from __future__ import annotations

import dataclasses
import math

import numba as nb
import numpy as np
import pytest

from unilab_robot.config.errors import ConfigError
from unilab_envs.core.reward_terms import RewardTerm, register_reward_term, term_call
from unilab_envs.core.vector_env import UniLabVectorEnv
from unilab_envs.locomotion import LocomotionTask
from unilab_envs.locomotion.reward_kernel import QUANTITIES, kernel_source
from unilab_envs.locomotion.rewards import REWARD_NAMES, RewardScales
from unilab_envs.tasks.go1_joystick import GO1, OBS_GROUPS, PRIVILEGED_GROUPS, Go1Joystick, Go1JoystickConfig

TARGET = 0.07  # m


@nb.njit(inline="always")
def foot_clearance(weight, i, legs, moving, target_height):
    """Sum over the feet of how far each is below ``target_height``, while the command asks to move."""
    if not moving:
        return 0.0
    short = 0.0
    for f in range(legs.foot_height.shape[1]):
        short += max(0.0, target_height - legs.foot_height[i, f])
    return weight * short


@nb.njit(inline="always")
def nan_probe(weight):
    """NaN whenever it is evaluated: a zero weight must skip it."""
    return weight * math.nan


FOOT_CLEARANCE = register_reward_term("locomotion", RewardTerm("foot_clearance", foot_clearance, "feet below a height in swing",
                                                               scale=-0.5, params={"target_height": TARGET}))  # fmt: skip
NAN_PROBE = register_reward_term("locomotion", RewardTerm("nan_probe", nan_probe, "NaN if evaluated"))


class ClearanceGo1(Go1Joystick, config=Go1JoystickConfig, legged=GO1, obs_groups=OBS_GROUPS, privileged_obs_groups=PRIVILEGED_GROUPS):
    """The Go1 with one more term, declared in one line."""

    reward_terms = LocomotionTask.reward_terms + (FOOT_CLEARANCE, NAN_PROBE)


def _vec(task_class, num_envs: int, **config) -> UniLabVectorEnv:
    return UniLabVectorEnv(task_class, num_envs, max_episode_steps=1000, **config)


def _rollout(env: UniLabVectorEnv, steps: int = 40):
    env.reset(seed=3)
    actions = np.random.default_rng(0).uniform(-1, 1, (steps, env.num_envs, env.task.action_size))
    rewards, terms, clearance_by_hand = [], [], []
    for t in range(steps):
        command = env.task.command.copy()
        _, reward, terminated, truncated, info = env.step(actions[t])
        moving = (command[:, 0] ** 2 + command[:, 1] ** 2 > 0.01) | (np.abs(command[:, 2]) > 0.1)
        short = np.maximum(0.0, TARGET - env.task._foot_height).sum(1)  # an env that ended was reset: its feet moved
        by_hand = np.where(moving, -0.5 * env.task.control_dt * short, 0.0)
        clearance_by_hand.append(np.where(terminated | truncated, info["reward_terms"].get("foot_clearance", by_hand), by_hand))
        rewards.append(reward.copy())
        terms.append({k: v.copy() for k, v in info["reward_terms"].items()})
    return np.array(rewards), terms, np.array(clearance_by_hand)


def test_a_term_declared_in_a_test_module_adds_exactly_its_weighted_value():
    plain_rewards, plain_terms, _ = _rollout(_vec(Go1Joystick, 8))
    env = _vec(ClearanceGo1, 8)
    assert env.reward_names == (*REWARD_NAMES[:-1], "foot_clearance", "nan_probe", "positive_clip")
    rewards, terms, by_hand = _rollout(env)
    clearance = np.array([step["foot_clearance"] for step in terms])
    np.testing.assert_allclose(clearance, by_hand, rtol=1e-6, atol=1e-9)
    assert (clearance < 0).mean() > 0.3  # the term did act on many steps
    np.testing.assert_allclose(rewards, plain_rewards + clearance, rtol=0, atol=2e-6)
    for name in REWARD_NAMES:  # the built-in columns are untouched
        np.testing.assert_array_equal(np.array([s[name] for s in terms]), np.array([s[name] for s in plain_terms]), err_msg=name)


def _diverged_rows(env: UniLabVectorEnv, steps: int = 10) -> int:
    env.reset(seed=3)
    rows = 0
    for _ in range(steps):
        *_, info = env.step(np.zeros((env.num_envs, env.task.action_size)))
        rows += int(np.count_nonzero(info["diverged"])) if "diverged" in info else 0
    return rows


def test_a_weight_zero_term_is_not_evaluated():
    # the env replaces a NaN reward by 0 and flags the row diverged: so count diverged rows, not only finite rewards
    env = _vec(ClearanceGo1, 4)
    rewards, terms, _ = _rollout(env, steps=10)
    assert np.isfinite(rewards).all() and not np.array([s["nan_probe"] for s in terms]).any()
    assert _diverged_rows(_vec(ClearanceGo1, 4)) == 0
    # the probe is NaN whenever called, and the kernel holds its call only when its weight is not 0
    # (read from the generated source: a kernel for the weight-1 case would cost one more compile)
    assert math.isnan(nan_probe.py_func(1.0))
    k = len(ClearanceGo1.reward_terms) - 1
    off = kernel_source(ClearanceGo1.reward_terms, (True,) * k + (False,))
    on = kernel_source(ClearanceGo1.reward_terms, (True,) * (k + 1))
    assert f"term_{k}(" not in off and f"t{k} = 0.0  # nan_probe: weight 0, not evaluated" in off and f"term_{k}(" in on


def test_a_registered_term_is_added_and_weighted_from_the_config():
    env = _vec(Go1Joystick, 8, reward_terms={"foot_clearance": {"weight": -0.5}, "nan_probe": {"weight": 0.0}})
    assert env.reward_names == _vec(ClearanceGo1, 1).reward_names
    rewards, terms, by_hand = _rollout(env)
    np.testing.assert_allclose(np.array([s["foot_clearance"] for s in terms]), by_hand, rtol=1e-6, atol=1e-9)
    weights = dict(zip(env.reward_names, env.task.reward_weights))
    assert weights["foot_clearance"] == -0.5 * 0.02 and weights["nan_probe"] == 0.0
    changed = _vec(ClearanceGo1, 1, reward_terms={"foot_clearance": {"target_height": 0.1}, "feet_slip": {"weight": -2.0}})
    assert changed.task._term_params[changed.reward_names.index("foot_clearance"), 0] == 0.1
    assert dict(zip(changed.reward_names, changed.task.reward_weights))["feet_slip"] == -2.0 * 0.02


def test_config_mistakes_name_what_exists():
    with pytest.raises(ConfigError, match=r"unknown reward term .*'foot_clearence'.*Did you mean 'foot_clearance'"):
        _vec(Go1Joystick, 1, reward_terms={"foot_clearence": {"weight": -0.5}})
    with pytest.raises(ConfigError, match=r"reward_terms.foot_clearance key 'target'.*target_height"):
        _vec(Go1Joystick, 1, reward_terms={"foot_clearance": {"target": 0.1}})
    with pytest.raises(ConfigError, match=r"reward_terms.foot_clearance.weight must be a finite number, got nan"):
        _vec(Go1Joystick, 1, reward_terms={"foot_clearance": {"weight": float("nan")}})


def test_a_term_reading_what_the_layer_does_not_offer_is_refused_with_the_list():
    @nb.njit(inline="always")
    def uses_speed(weight, speed):
        return weight * speed

    with pytest.raises(TypeError, match=r"argument 'speed' is none of 'weight', its params \[\] or .*lin_error"):
        term_call(RewardTerm("uses_speed", uses_speed), 0, QUANTITIES)
    with pytest.raises(TypeError, match="must be a Numba"):
        RewardTerm("plain", lambda weight: weight)
    with pytest.raises(ValueError, match="already registered"):
        register_reward_term("locomotion", RewardTerm("foot_clearance", uses_speed))


def test_the_built_in_names_and_config_keys_come_from_the_declaration_as_they_were():
    before = ("tracking_lin_vel", "tracking_ang_vel", "lin_vel_z", "ang_vel_xy", "orientation", "base_height", "torques",
              "action_rate", "pose", "feet_air_time", "feet_phase", "feet_slip", "joint_limits", "stand_still", "termination",
              "alive", "positive_clip")  # the hand-kept tuple of the commit before the declaration  # fmt: skip
    assert REWARD_NAMES == before
    assert tuple(f.name for f in dataclasses.fields(RewardScales)) == before
    assert all(f.default == 0.0 for f in dataclasses.fields(RewardScales))
