"""get_state / set_state: a saved env continues bit-exactly in a fresh env, and a state
saved from another task, size or wrapper stack is refused with a message."""

import io

import gymnasium as gym
import numpy as np
import pytest
import torch

import unilab_envs  # noqa: F401  registers UniLab/*
import wrappers
from trainers.common.checkpoint import to_numpy, to_tensors
from unilab_envs.core.state import StateError

N = 6


def _make(task, profile):
    env = gym.make_vec(task, num_envs=N)
    return wrappers.Sim2Real(env, profile=profile) if profile else env


def _roll(env, actions):
    out = []
    for a in actions:
        obs, reward, terminated, truncated, info = env.step(a)
        out.append((obs.copy(), reward.copy(), terminated.copy(), truncated.copy(), info.get("privileged_obs")))
    return out


def _through_torch(state):
    """What a checkpoint does to a state: tensors, torch.save, weights_only load, back to arrays."""
    buffer = io.BytesIO()
    torch.save(to_tensors(state), buffer)
    buffer.seek(0)
    return to_numpy(torch.load(buffer, weights_only=True))


@pytest.mark.parametrize("task, profile", [
    ("UniLab/Go1Joystick-v0", "go1_real"),
    ("UniLab/Go1Joystick-v0", None),
    ("UniLab/G1Joystick-v0", None),
    ("UniLab/G1Joystick-v0", "g1_real"),
    ("UniLab/UR5Reach-v0", None),
    ("UniLab/UR5Reach-v0", "ur5_real"),
    ("UniLab/UR5Grasp-v0", None),
    ("UniLab/UR5Grasp-v0", "ur5_grasp_real"),
    ("UniLab/G1Track-v0", None),
    ("UniLab/G1Track-v0", "g1_track_real"),
])
def test_a_saved_env_continues_bit_exactly_in_a_fresh_one(task, profile):
    env = _make(task, profile)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    actions = [rng.uniform(-1, 1, (N, *env.single_action_space.shape)).astype(np.float32) for _ in range(160)]
    _roll(env, actions[:60])
    state = _through_torch(env.get_state())
    reference = _roll(env, actions[60:])
    fresh = _make(task, profile)  # never reset: as in a new process
    fresh.set_state(state)
    resumed = _roll(fresh, actions[60:])
    finished = sum(int(r[2].sum() + r[3].sum()) for r in reference)
    assert finished > 0, "the continuation should cross episode ends (resets, new draws)"
    for k, (want, got) in enumerate(zip(reference, resumed)):
        for a, b in zip(want, got):
            assert (a is None and b is None) or np.array_equal(a, b), f"step {k} differs"


def test_a_state_saved_from_another_task_or_size_is_refused():
    go1 = gym.make_vec("UniLab/Go1Joystick-v0", num_envs=N)
    go1.reset(seed=0)
    state = go1.get_state()
    with pytest.raises(StateError, match=r"task Go1Joystick with 6 envs; this env is UR5Reach with 6 envs"):
        gym.make_vec("UniLab/UR5Reach-v0", num_envs=N).set_state(state)
    with pytest.raises(StateError, match=r"6 envs; this env is Go1Joystick with 4 envs"):
        gym.make_vec("UniLab/Go1Joystick-v0", num_envs=4).set_state(state)


def test_a_state_saved_from_another_wrapper_stack_is_refused():
    wrapped = _make("UniLab/Go1Joystick-v0", "go1_real")
    wrapped.reset(seed=0)
    with pytest.raises(StateError, match="build the same wrapper stack"):
        wrappers.ObservationNoise(gym.make_vec("UniLab/Go1Joystick-v0", num_envs=N),
                                  scales={"gyro": 0.1}).set_state(wrapped.get_state())
    bare = gym.make_vec("UniLab/Go1Joystick-v0", num_envs=N)
    bare.reset(seed=0)
    with pytest.raises((StateError, KeyError)):
        wrapped.set_state(bare.get_state())


def test_domain_randomization_keeps_its_nominal_values_after_a_restore():
    """A restored env carries randomized masses; the next episode's draw must scale the
    model's nominal masses, not the restored ones."""
    env = _make("UniLab/Go1Joystick-v0", "go1_real")
    env.reset(seed=1)
    state = env.get_state()
    fresh = _make("UniLab/Go1Joystick-v0", "go1_real")
    nominal = fresh.unwrapped.model.body_mass.copy()
    fresh.set_state(state)
    fresh.reset(seed=2)
    other = _make("UniLab/Go1Joystick-v0", "go1_real")
    other.reset(seed=2)
    np.testing.assert_array_equal(fresh.unwrapped.batch.expanded("body_mass"), other.unwrapped.batch.expanded("body_mass"))
    assert not np.array_equal(fresh.unwrapped.batch.expanded("body_mass")[0], nominal)
