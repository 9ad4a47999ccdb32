"""SB3VecEnv semantics: DummyVecEnv-exact terminal data, no aliasing, the VecEnv API."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor, VecNormalize
from tests.trainers.standins import PointReach

from trainers.sb3 import EMPTY_INFO, SB3VecEnv

N = 4


def _cartpole(max_steps: int = 25):
    return lambda: gym.make("CartPole-v1", max_episode_steps=max_steps)


def _random_actions(rng, steps):
    return rng.integers(0, 2, size=(steps, N))


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP])
def test_matches_dummy_vec_env_step_for_step(mode):
    """Same seeds, same actions: obs, rewards, dones, terminal_observation and
    TimeLimit.truncated identical to SB3's DummyVecEnv over the single envs, through
    both terminations (pole falls) and truncations (25-step limit)."""
    ours = SB3VecEnv(SyncVectorEnv([_cartpole()] * N, autoreset_mode=mode))
    ref = DummyVecEnv([_cartpole()] * N)
    ours.seed(7), ref.seed(7)
    np.testing.assert_array_equal(ours.reset(), ref.reset())
    seen = {"terminated": 0, "truncated": 0}
    for actions in _random_actions(np.random.default_rng(0), 120):
        o1, r1, d1, i1 = ours.step(actions)
        o2, r2, d2, i2 = ref.step(actions)
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(d1, d2)
        assert r1.dtype == np.float32 and d1.dtype == bool
        for k in np.flatnonzero(d1):
            np.testing.assert_array_equal(i1[k]["terminal_observation"], i2[k]["terminal_observation"])
            assert i1[k]["TimeLimit.truncated"] == i2[k]["TimeLimit.truncated"]
            seen["truncated" if i1[k]["TimeLimit.truncated"] else "terminated"] += 1
        for k in np.flatnonzero(~d1):
            assert "terminal_observation" not in i1[k] and not i1[k].get("TimeLimit.truncated", False)
    assert seen["terminated"] > 0 and seen["truncated"] > 0, seen


def test_truncation_terminal_obs_equals_single_env_last_obs():
    """Pendulum never terminates: at the 200-step limit terminal_observation is the
    single env's last observation and TimeLimit.truncated is set."""
    seed, T = 3, 200
    single = gym.make("Pendulum-v1")
    single.reset(seed=seed)
    actions = np.random.default_rng(1).uniform(-2, 2, size=(T, 1)).astype(np.float32)
    for t in range(T):
        last, _, term, trunc, _ = single.step(actions[t])
    assert trunc and not term
    env = SB3VecEnv(gym.make_vec("Pendulum-v1", num_envs=2, vectorization_mode="sync"))
    env.seed(seed)
    env.reset()
    for t in range(T):
        obs, _, dones, infos = env.step(np.stack([actions[t], actions[t]]))
    assert dones.all()
    np.testing.assert_array_equal(infos[0]["terminal_observation"], last)
    assert infos[0]["TimeLimit.truncated"] is True
    assert not np.array_equal(obs[0], last)  # the returned obs is the reset one


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP])
def test_fall_is_termination_not_timeout(mode):
    """Our contract (dense final_obs, in-place buffers): pushing rows out of the arena
    terminates them with TimeLimit.truncated False and the raw last obs."""
    base = PointReach(N, max_episode_steps=1000, seed=0, autoreset_mode=mode, arena=2.0)
    env = SB3VecEnv(base)
    env.reset()
    rows = np.array([1, 3])
    base.place(rows, pos=np.array([[1.99, 0.0], [0.0, -1.99]]), goal=np.zeros((2, 2)))
    act = np.zeros((N, 2), np.float32)
    act[1], act[3] = [1, 0], [0, -1]
    obs, rew, dones, infos = env.step(act)
    np.testing.assert_array_equal(dones, [False, True, False, True])
    for k in rows:
        term = infos[k]["terminal_observation"]
        assert infos[k]["TimeLimit.truncated"] is False
        assert np.abs(term[:2]).max() > 2.0  # the last obs, outside the arena
        assert np.abs(obs[k, :2]).max() <= 1.0  # the reset obs
        assert infos[k]["is_success"] is False
        assert infos[k]["episode"]["l"] == 1
        assert infos[k]["episode"]["r"] == pytest.approx(float(rew[k]), abs=1e-5)
    assert infos[0] is EMPTY_INFO and infos[2] is EMPTY_INFO


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP])
def test_truncation_on_batched_env(mode):
    base = PointReach(N, max_episode_steps=5, seed=0, autoreset_mode=mode, success_radius=0.0)
    env = SB3VecEnv(base)
    env.reset()
    zero = np.zeros((N, 2), np.float32)
    for _ in range(4):
        last = env.step(zero)[0]
    obs, _, dones, infos = env.step(zero)
    assert dones.all()
    for k in range(N):
        assert infos[k]["TimeLimit.truncated"] is True
        np.testing.assert_allclose(infos[k]["terminal_observation"], last[k], atol=1e-6)  # zero action: it stays put
        assert infos[k]["episode"]["l"] == 5
    # the next step is an ordinary step of the new episode (no lost/reward-0 step in NEXT_STEP)
    obs2, _, dones2, _ = env.step(zero)
    assert not dones2.any()
    np.testing.assert_allclose(obs2[:, :2], obs[:, :2], atol=1e-6)
    assert (base.t == 1).all()


def test_outputs_do_not_alias_env_buffers():
    """The stand-in env rewrites its obs / final_obs buffers in place; what SB3 got must not change."""
    base = PointReach(N, max_episode_steps=2, seed=0)
    env = SB3VecEnv(base)
    first = env.reset()
    kept = first.copy()
    act = np.full((N, 2), 0.5, np.float32)
    o1, r1, _, _ = env.step(act)
    o1c, r1c = o1.copy(), r1.copy()
    o2, _, d2, i2 = env.step(act)
    term = [i2[k]["terminal_observation"].copy() for k in range(N)]
    env.step(act), env.step(act)
    np.testing.assert_array_equal(first, kept)
    np.testing.assert_array_equal(o1, o1c)
    np.testing.assert_array_equal(r1, r1c)
    assert d2.all()
    for k in range(N):
        np.testing.assert_array_equal(i2[k]["terminal_observation"], term[k])


def test_shared_empty_info_is_read_only_and_sb3_wrappers_are_safe():
    base = PointReach(N, max_episode_steps=3, seed=0)
    env = VecNormalize(VecMonitor(SB3VecEnv(base, episode_stats=False)))
    env.reset()
    act = np.zeros((N, 2), np.float32)
    for _ in range(2):
        _, _, dones, infos = env.step(act)
        assert not dones.any() and all(i is EMPTY_INFO for i in infos)
    _, _, dones, infos = env.step(act)
    assert dones.all()
    assert all("episode" in i and i["episode"]["l"] == 3 for i in infos)  # VecMonitor's
    assert len(EMPTY_INFO) == 0
    with pytest.raises(TypeError, match="fresh_infos=True"):
        EMPTY_INFO["x"] = 1
    fresh = SB3VecEnv(PointReach(N, seed=0), fresh_infos=True)
    fresh.reset()
    infos = fresh.step(act)[3]
    infos[0]["x"] = 1
    assert infos[1] == {} and infos[0] is not infos[1]


def test_reward_terms_and_diverged():
    base = PointReach(N, seed=0)
    env = SB3VecEnv(base)
    env.reset()
    total = 0.0
    for _ in range(3):
        _, rew, _, _ = env.step(np.zeros((N, 2), np.float32))
        total += float(rew.sum())
    terms = env.pop_reward_terms()
    assert set(terms) == {"distance", "action"}
    assert sum(terms.values()) == pytest.approx(total / (3 * N), rel=1e-5)
    assert env.pop_reward_terms() == {}
    base.diverged[2] = True
    infos = env.step(np.zeros((N, 2), np.float32))[3]
    assert infos[2]["diverged"] is True and env.diverged_count == 1 and infos[1] is EMPTY_INFO


def test_vecenv_api_on_batched_env():
    base = PointReach(N, seed=0, arena=2.0)
    env = SB3VecEnv(base)
    assert env.observation_space == base.single_observation_space
    assert env.action_space == base.single_action_space
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert env.get_attr("max_episode_steps") == [40] * N
    assert env.get_attr("arena", indices=[1, 2]) == [2.0, 2.0]
    env.set_attr("arena", 3.0)
    assert base.arena == 3.0
    with pytest.raises(ValueError, match="whole batched env"):
        env.set_attr("arena", 1.0, indices=[0])
    assert env.env_method("place", np.array([0]), np.zeros((1, 2)), np.ones((1, 2)), indices=[0]) == [None]
    assert env.env_is_wrapped(Monitor) == [True] * N
    assert SB3VecEnv(base, episode_stats=False).env_is_wrapped(Monitor) == [False] * N
    assert env.seed(11) == [11 + i for i in range(N)]
    a = env.reset()
    env.seed(11)
    np.testing.assert_array_equal(env.reset(), a)
    env.set_options({"reset_mask": np.ones(N, bool)})
    assert env.reset().shape == (N, 4)
    # float64 actions (TD3 noise) are cast to the env's float32 contract
    assert env.step(np.zeros((N, 2), np.float64))[0].dtype == np.float32
    with pytest.warns(UserWarning, match="no `render_mode`"):  # SB3 says why nothing is drawn
        assert env.render() is None
    env.close()


def test_vecenv_api_on_sync_vector_env():
    venv = gym.make_vec("Pendulum-v1", num_envs=N, vectorization_mode="sync")
    env = SB3VecEnv(venv)
    assert env.get_attr("max_speed", indices=[0, 3]) == [8, 8]
    env.set_attr("max_speed", 3.0, indices=[1])
    assert env.get_attr("max_speed") == [8, 3.0, 8, 8]
    obs, _ = env.env_method("reset", indices=[2], seed=0)[0]
    assert obs.shape == (3,)  # the sub-env's reset, not the vector env's
    assert env.env_is_wrapped(gym.wrappers.TimeLimit) == [True] * N
    with pytest.raises(TypeError, match="VectorEnv"):
        SB3VecEnv(gym.make("Pendulum-v1"))


def test_next_step_env_without_reset_mask_is_refused():
    """Gymnasium's native CartPoleVectorEnv ignores reset_mask (it would reset every row)."""
    from trainers.sb3.env import make_sb3_env

    native = gym.make_vec("CartPole-v1", num_envs=N, vectorization_mode="vector_entry_point")
    with pytest.raises(ValueError, match="reset_mask"):
        SB3VecEnv(native)
    env = make_sb3_env("CartPole-v1", N, seed=0)  # falls back to a SAME_STEP SyncVectorEnv
    assert isinstance(env.venv.unwrapped, SyncVectorEnv) and env.autoreset_mode == AutoresetMode.SAME_STEP
