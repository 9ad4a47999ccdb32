"""``algo.symmetry`` is checked: an unknown value, a task without a mirror map and critic columns without a
mirror image are refused with one line that says what to do; a profile's ``clean_obs`` mirrors as the observation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from trainers import cli
from trainers.offpolicy.config import load_offpolicy_config
from trainers.offpolicy.replay import Batch
from trainers.offpolicy.symmetry import BatchMirror, env_batch_mirror
from unilab_envs.config import ConfigError


def test_an_unknown_value_is_refused_when_the_config_is_read():
    with pytest.raises(ConfigError, match=r"algo.symmetry must be one of \('none', 'augment'\).*got 'mirror'"):
        load_offpolicy_config("sac", "UniLab/UR5Reach-v0", overrides=["algo.symmetry=mirror"])
    assert load_offpolicy_config("td3", "UniLab/UR5Reach-v0").algo.symmetry == "none"


def test_a_task_without_a_mirror_map_is_refused_in_one_line(tmp_path, capsys):
    assert cli.main(["train", "--algo", "sac", "--task", "UniLab/UR5Reach-v0", "--out", str(tmp_path / "r"),
                     "--num-envs", "4", "--total-steps", "8", "--no-progress", "algo.symmetry=augment"]) == 2
    err = capsys.readouterr().err.strip()
    assert "algo.symmetry: augment: UniLab/UR5Reach-v0 has no left/right mirror map" in err
    assert err.endswith("set algo.symmetry: none") and len(err.splitlines()) == 1


def _go1(profile):
    from trainers.common.envs import make_vec_env

    return make_vec_env("UniLab/Go1Joystick-v0", 2, {"num_threads": 1}, sim2real=profile)


def test_a_profiles_perturbations_are_refused_and_its_clean_observation_mirrors_as_the_observation():
    env = _go1({"extends": "go1_real", "privileged_critic": True})
    width = env.privileged_observation_space.shape[-1]
    with pytest.raises(ConfigError, match=r"cannot mirror the profile's privileged_critic perturbations \[.*'push'.*\]; "
                                          r"use privileged_critic: \[clean_obs\]"):
        env_batch_mirror(env, "UniLab/Go1Joystick-v0", "augment", width, torch.device("cpu"))
    env.close()
    env = _go1({"extends": "go1_real", "privileged_critic": ["clean_obs"]})
    task = env.unwrapped.task
    width = env.privileged_observation_space.shape[-1]
    assert width == 25 + 50
    mirror = env_batch_mirror(env, "UniLab/Go1Joystick-v0", "augment", width, torch.device("cpu"))
    env.close()
    assert isinstance(mirror, BatchMirror)
    extras = np.random.default_rng(0).normal(size=(3, width)).astype(np.float32)
    obs, action = torch.zeros(3, 50), torch.zeros(3, 12)
    batch = Batch(obs, action, torch.zeros(3), obs, torch.zeros(3), torch.from_numpy(extras), torch.from_numpy(extras))
    mirrored = mirror.mirror(batch).critic_obs.numpy()
    np.testing.assert_array_equal(mirrored[:, :25], task.privileged_mirror.observation(extras[:, :25]))
    np.testing.assert_array_equal(mirrored[:, 25:], task.mirror.observation(extras[:, 25:]))


def test_none_builds_no_mirror_and_a_bad_value_given_in_code_is_refused():
    env = _go1(None)
    assert env_batch_mirror(env, "UniLab/Go1Joystick-v0", "none", 25, torch.device("cpu")) is None
    with pytest.raises(ConfigError, match="algo.symmetry must be one of"):
        env_batch_mirror(env, "UniLab/Go1Joystick-v0", "loss", 25, torch.device("cpu"))
    env.close()
