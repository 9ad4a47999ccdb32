"""Named reward terms on the UR5 tasks: a term added to UR5Reach from a subclass or the config,
a zero weight, the config keys as they were.

Every UR5Reach env here that steps uses one term list (the six built-ins, ``ee_height``,
``nan_probe``), so the generated kernel compiles once for the file; the UR5Grasp checks only
build envs (a kernel compiles at its first step).
"""

from __future__ import annotations

import dataclasses
import math

import numba as nb
import numpy as np
import pytest

from unilab_robot.config.errors import ConfigError
from unilab_envs.core.reward_terms import RewardTerm, register_reward_term
from unilab_envs.core.vector_env import UniLabVectorEnv
from unilab_envs.tasks import ur5_grasp, ur5_reach
from unilab_envs.tasks.arm_reward_kernel import _REACH_TEMPLATE, REACH_QUANTITIES, kernel_source
from unilab_envs.tasks.ur5_grasp import UR5Grasp
from unilab_envs.tasks.ur5_reach import UR5Reach

FLOOR = 0.1  # m


@nb.njit(inline="always")
def ee_height(weight, i, site_xpos, site, floor):
    """Height of the end effector above ``floor``."""
    return weight * (site_xpos[i, site, 2] - floor)


@nb.njit(inline="always")
def nan_probe(weight):
    """NaN whenever it is evaluated: a zero weight must skip it."""
    return weight * math.nan


EE_HEIGHT = register_reward_term("ur5_reach", RewardTerm("ee_height", ee_height, "end effector above a floor",
                                                         scale=0.5, params={"floor": FLOOR}))  # fmt: skip
NAN_PROBE = register_reward_term("ur5_reach", RewardTerm("nan_probe", nan_probe, "NaN if evaluated"))


class HeightReach(UR5Reach):
    """UR5Reach with one more term (and the probe), declared in one line."""

    reward_terms = UR5Reach.reward_terms + (EE_HEIGHT, NAN_PROBE)


def _vec(task_class, num_envs: int, **config) -> UniLabVectorEnv:
    return UniLabVectorEnv(task_class, num_envs, max_episode_steps=1000, spread_episode_starts=False, **config)


def _rollout(env: UniLabVectorEnv, steps: int = 30):
    env.reset(seed=3)
    actions = np.random.default_rng(0).uniform(-1, 1, (steps, env.num_envs, 6)).astype(np.float32)
    rewards, terms, ee_z = [], [], []
    for t in range(steps):
        _, reward, terminated, truncated, info = env.step(actions[t])
        assert not (terminated | truncated).any()  # no reset within the rollout: ee_pos is the step's
        assert not info["diverged"].any()  # a NaN reward would be zeroed and its row flagged here
        rewards.append(reward.copy())
        terms.append({k: v.copy() for k, v in info["reward_terms"].items()})
        ee_z.append(env.task.ee_pos[:, 2].copy())
    env.close()
    return np.array(rewards), terms, np.array(ee_z)


def _column(terms, name: str) -> np.ndarray:
    return np.array([step[name] for step in terms])


def test_a_term_added_from_the_config_adds_exactly_its_weighted_value():
    plain_rewards, plain_terms, _ = _rollout(_vec(UR5Reach, 8))  # the bundled kernel: no compile of its own here
    env = _vec(UR5Reach, 8, reward_terms={"ee_height": {"weight": 0.5, "floor": 0.2}, "nan_probe": {"weight": 0.0}})
    assert env.reward_names == (*ur5_reach.REWARD_NAMES, "ee_height", "nan_probe") == _vec(HeightReach, 1).reward_names
    rewards, terms, ee_z = _rollout(env)
    height = _column(terms, "ee_height")
    np.testing.assert_allclose(height, 0.5 * 0.04 * (ee_z - 0.2), rtol=1e-6, atol=1e-9)
    assert (height != 0).all()
    np.testing.assert_allclose(rewards, plain_rewards + height, rtol=0, atol=2e-6)
    assert "ee_height" not in plain_terms[0]
    for name in ur5_reach.REWARD_NAMES:  # the built-in columns are untouched
        np.testing.assert_array_equal(_column(terms, name), _column(plain_terms, name), err_msg=name)


def test_a_term_declared_by_a_subclass_uses_its_default_weight_and_params():
    env = _vec(HeightReach, 4)
    weights = dict(zip(env.reward_names, env.task.reward_weights))
    assert weights["ee_height"] == 0.5 * 0.04 and weights["nan_probe"] == 0.0
    _, terms, ee_z = _rollout(env, steps=10)
    np.testing.assert_allclose(_column(terms, "ee_height"), 0.5 * 0.04 * (ee_z - FLOOR), rtol=1e-6, atol=1e-9)


def test_a_weight_zero_term_is_not_evaluated():
    rewards, terms, _ = _rollout(_vec(HeightReach, 4), steps=10)  # checks no row diverged (NaN rewards are zeroed)
    assert np.isfinite(rewards).all() and rewards.any()
    assert not _column(terms, "nan_probe").any()
    # the probe is NaN whenever called, and the kernel holds its call only when its weight is not 0
    # (read from the generated source: a kernel for the weight-1 case would cost one more compile)
    assert math.isnan(nan_probe.py_func(1.0))
    terms, k = HeightReach.reward_terms, len(HeightReach.reward_terms) - 1
    off = kernel_source(_REACH_TEMPLATE, terms, (True,) * k + (False,), REACH_QUANTITIES)
    on = kernel_source(_REACH_TEMPLATE, terms, (True,) * (k + 1), REACH_QUANTITIES)
    assert f"term_{k}(" not in off and f"t{k} = 0.0  # nan_probe: weight 0, not evaluated" in off and f"term_{k}(" in on


def test_reward_terms_set_a_declared_terms_weight_like_reward_scales():
    by_scales = _vec(UR5Grasp, 1, reward_scales={"hold_break": -100.0, "overlift": -2})
    by_terms = _vec(UR5Grasp, 1, reward_terms={"hold_break": {"weight": -100.0}, "overlift": {"weight": -2.0}})
    assert by_terms.reward_names == by_scales.reward_names == ur5_grasp.REWARD_NAMES
    np.testing.assert_array_equal(by_terms.task.reward_weights, by_scales.task.reward_weights)
    assert dict(zip(by_terms.reward_names, by_terms.task.reward_weights))["hold_break"] == -100.0 * 0.04


def test_config_mistakes_name_what_exists():
    with pytest.raises(ConfigError, match=r"unknown reward term .*'ee_hieght'.*Did you mean 'ee_height'"):
        _vec(UR5Reach, 1, reward_terms={"ee_hieght": {"weight": 1.0}})
    with pytest.raises(ConfigError, match=r"unknown reward term .*'feet_slip'"):  # another layer's names are not the arm's
        _vec(UR5Grasp, 1, reward_terms={"feet_slip": {"weight": 1.0}})
    with pytest.raises(ConfigError, match=r"reward_terms.distance key 'std'.*weight"):
        _vec(UR5Reach, 1, reward_terms={"distance": {"std": 0.1}})
    with pytest.raises(ConfigError, match=r"reward_scales.success must be finite"):
        _vec(UR5Reach, 1, reward_scales={"success": float("inf")})


def test_the_names_and_config_keys_come_from_the_declaration_as_they_were():
    reach = {"distance": -2.0, "distance_fine": 1.0, "success": 1.0, "action_rate": -0.02, "joint_vel": -0.01, "joint_limits": -1.0}
    grasp = {"reach": 1.0, "grasp": 1.0, "lift": 4.0, "hold": 4.0, "action_rate": -0.01, "success": 250.0, "hold_break": 0.0,
             "overlift": 0.0}  # the hand-written dataclasses of the commit before the declaration  # fmt: skip
    for module, scales_class, before in ((ur5_reach, ur5_reach.UR5ReachRewardScales, reach),
                                         (ur5_grasp, ur5_grasp.UR5GraspRewardScales, grasp)):  # fmt: skip
        assert module.REWARD_NAMES == tuple(before)
        assert {f.name: f.default for f in dataclasses.fields(scales_class)} == before
        assert list(before) == [f.name for f in dataclasses.fields(scales_class)]
        assert scales_class.__module__ == module.__name__ and getattr(module, scales_class.__name__) is scales_class
