"""A diverging row in each autoreset mode: when it is flagged, ended and reset.

SAME_STEP resets the row within the diverging step; NEXT_STEP on the next ``step``
call; DISABLED only when the user calls ``reset(options={"reset_mask": ...})``.
In every mode the diverging step flags the row in ``info["diverged"]``, ends it as
terminated with reward 0 and returns finite arrays; the other rows are untouched.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

ID, N, ROW = "UniLab/Go1Joystick-v0", 4, 2
ZERO = np.zeros((N, 12), np.float32)
MASK = np.arange(N) == ROW


def _env(mode: str):
    """An env after 3 zero-action steps from seed 0 (counters start at 0)."""
    env = gym.make_vec(ID, num_envs=N, spread_episode_starts=False, autoreset_mode=mode)
    env.reset(seed=0)
    for _ in range(3):
        env.step(ZERO)
    return env


def _blow_up(env) -> None:
    env.batch.bind("qvel")[ROW, :] = 1e12  # MuJoCo flags the simulation as unstable


def _fresh_start(steps_before_reset: int):
    """What ``ROW`` looks like right after a reset at the same point of its RNG stream."""
    twin = _env("Disabled")
    for _ in range(steps_before_reset):
        twin.step(ZERO)
    obs, info = twin.reset(options={"reset_mask": MASK})
    twin.close()
    return obs[ROW], info["privileged_obs"][ROW]


def _all_finite(obs, reward, info) -> bool:
    arrays = [obs, reward, info["privileged_obs"], *info["reward_terms"].values()]
    arrays += [info[k] for k in ("final_obs", "final_privileged_obs") if k in info]
    return all(np.isfinite(a).all() for a in arrays)


def _check_diverging_step(env, twin, out) -> None:
    obs, reward, terminated, truncated, info = out
    twin_obs, twin_reward, twin_terminated, *_ = twin.step(ZERO)
    assert info["diverged"].tolist() == MASK.tolist()
    assert terminated[ROW] and not truncated[ROW]
    assert reward[ROW] == 0.0
    assert all(term[ROW] == 0.0 for term in info["reward_terms"].values())
    assert _all_finite(obs, reward, info)
    others = ~MASK
    np.testing.assert_array_equal(obs[others], twin_obs[others])
    np.testing.assert_array_equal(reward[others], twin_reward[others])
    np.testing.assert_array_equal(terminated[others], twin_terminated[others])


def _diverging_step(mode: str):
    """An env whose ``ROW`` just diverged, checked against an undisturbed twin; ``(env, step output)``."""
    env, twin = _env(mode), _env(mode)
    _blow_up(env)
    out = env.step(ZERO)
    _check_diverging_step(env, twin, out)
    twin.close()
    return env, out


def test_same_step_resets_the_row_within_the_diverging_step():
    env, out = _diverging_step("SameStep")
    obs, _, _, _, info = out
    assert info["_final_obs"].tolist() == MASK.tolist()
    assert env.episode_step[ROW] == 0 and env.episode_step[0] == 4
    fresh_obs, fresh_privileged = _fresh_start(steps_before_reset=1)
    np.testing.assert_array_equal(obs[ROW], fresh_obs)  # already the next episode's first obs
    np.testing.assert_array_equal(info["privileged_obs"][ROW], fresh_privileged)
    assert not np.array_equal(info["final_obs"][ROW], obs[ROW])
    obs, reward, terminated, _, info = env.step(ZERO)
    assert not info["diverged"].any() and not terminated[ROW] and reward[ROW] != 0.0
    assert env.episode_step[ROW] == 1
    env.close()


def test_next_step_resets_the_row_on_the_next_step_call():
    env, out = _diverging_step("NextStep")
    assert "final_obs" not in out[4]
    assert env.episode_step[ROW] == 4  # not reset yet
    obs, reward, terminated, truncated, info = env.step(ZERO)  # the row's reset step
    assert env.episode_step[ROW] == 0
    assert reward[ROW] == 0.0 and not terminated[ROW] and not truncated[ROW]
    assert not info["diverged"].any() and _all_finite(obs, reward, info)
    fresh_obs, fresh_privileged = _fresh_start(steps_before_reset=2)
    np.testing.assert_array_equal(obs[ROW], fresh_obs)
    np.testing.assert_array_equal(info["privileged_obs"][ROW], fresh_privileged)
    env.close()


def test_disabled_keeps_the_row_until_the_user_resets_it():
    env, out = _diverging_step("Disabled")
    assert "final_obs" not in out[4]
    for expected_step in (5, 6):  # the env never resets the row by itself
        obs, reward, _, _, info = env.step(ZERO)
        assert env.episode_step[ROW] == expected_step
        assert _all_finite(obs, reward, info)
    obs, info = env.reset(options={"reset_mask": MASK})
    assert env.episode_step.tolist() == [6, 6, 0, 6]
    fresh_obs, fresh_privileged = _fresh_start(steps_before_reset=3)
    np.testing.assert_array_equal(obs[ROW], fresh_obs)
    np.testing.assert_array_equal(info["privileged_obs"][ROW], fresh_privileged)
    env.close()


@pytest.mark.parametrize("mode", ["SameStep", "NextStep", "Disabled"])
def test_a_non_finite_observation_is_flagged_and_never_handed_out(mode):
    """A NaN that MuJoCo does not see (here: in the task's command) is caught by the obs check."""
    env = _env(mode)
    env.task.command[ROW, :] = np.nan
    obs, reward, terminated, _, info = env.step(ZERO)
    assert info["diverged"].tolist() == MASK.tolist()
    assert terminated[ROW] and reward[ROW] == 0.0
    assert _all_finite(obs, reward, info)
    env.close()


@pytest.mark.parametrize("where", ["privileged_obs", "reward"])
def test_a_non_finite_privileged_observation_or_reward_is_caught_too(where):
    """The critic's input and the reward are checked like the policy observation."""
    env = _env("SameStep")
    compute = env.task.compute

    def poisoned(obs, privileged_obs, reward_terms, reward, *rest):
        compute(obs, privileged_obs, reward_terms, reward, *rest)
        (privileged_obs if where == "privileged_obs" else reward)[ROW] = np.nan

    env.task.compute = poisoned
    obs, reward, terminated, truncated, info = env.step(ZERO)
    assert info["diverged"].tolist() == MASK.tolist()
    assert terminated[ROW] and reward[ROW] == 0.0
    assert _all_finite(obs, reward, info)
