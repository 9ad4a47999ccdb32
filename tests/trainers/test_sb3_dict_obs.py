"""SB3's MultiInputPolicy on the depth task: the flat observation as a Dict of the state and the image."""

from __future__ import annotations

import numpy as np
import pytest
from stable_baselines3 import PPO

from trainers.sb3 import make_sb3_env
from trainers.sb3.dict_obs import DictObservation, image_layout, observation_dict


def test_the_depth_task_is_a_dict_of_state_and_image_and_multi_input_ppo_learns_on_it():
    env = DictObservation(make_sb3_env("UniLab/Go1JoystickDepth-v0", 2, seed=0, normalize=False))
    assert env.observation_space["state"].shape == (50,) and env.observation_space["depth"].shape == (1, 12, 16)
    obs = env.reset()
    task = env.venv.venv.unwrapped.task
    np.testing.assert_array_equal(obs["depth"], task.camera.images.reshape(2, 1, 12, 16))  # the camera's frames
    np.testing.assert_array_equal(obs["state"][:, 45:48], task.command.astype(np.float32))  # the command's columns
    model = PPO("MultiInputPolicy", env, n_steps=16, batch_size=32, n_epochs=1, seed=0)
    model.learn(32)
    action, _ = model.predict(env.reset(), deterministic=True)
    assert action.shape == (2, 12)
    env.close()


def test_a_task_without_an_image_is_refused_in_one_line():
    env = make_sb3_env("UniLab/Go1Joystick-v0", 1, seed=0, normalize=False)
    with pytest.raises(ValueError, match="no image observation group"):
        image_layout(env)
    env.close()


def test_observation_dict_cuts_by_column_by_hand():
    from trainers.sb3.dict_obs import ImageLayout

    layout = ImageLayout({"cam": (np.array([1, 2, 3, 4]), (1, 2, 2))}, np.array([0, 5]))
    out = observation_dict(np.arange(12.0).reshape(2, 6), layout)
    np.testing.assert_array_equal(out["state"], [[0, 5], [6, 11]])
    np.testing.assert_array_equal(out["cam"][1, 0], [[7, 8], [9, 10]])
