"""The mirror map of the legged tasks' privileged (critic) observation: exact on the physics, its own inverse."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import unilab_envs  # noqa: F401  (registers the tasks)
from unilab_envs.locomotion.mirror import foot_mirror

LEGGED = ["UniLab/Go1Joystick-v0", "UniLab/Go2Joystick-v0", "UniLab/G1Joystick-v0"]


def test_feet_swap_with_their_partners():
    np.testing.assert_array_equal(foot_mirror(("FR", "FL", "RR", "RL")), [1, 0, 3, 2])
    np.testing.assert_array_equal(foot_mirror(("left_foot", "right_foot")), [1, 0])
    with pytest.raises(ValueError, match="no mirror partner"):
        foot_mirror(("FR", "RL"))


@pytest.mark.parametrize("task", LEGGED)
def test_the_mirrored_states_privileged_observation_is_the_mirrored_one(task):
    """Row 1 is set to the physical mirror image of row 0 after random steps (pose, velocities, controls,
    the feet's contact, air time and height records); its privileged observation must be the map of row 0's."""
    env = gym.make_vec(task, num_envs=2, num_threads=1)
    base = env.unwrapped
    t, m, pm = base.task, base.task.mirror, base.task.privileged_mirror
    np.testing.assert_array_equal(pm.act_perm, m.act_perm)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(15):
        env.step(rng.uniform(-0.5, 0.5, (2, env.single_action_space.shape[0])).astype(np.float32))
    qpos, qvel, ctrl = base.batch.bind("qpos"), base.batch.bind("qvel"), base.batch.bind("ctrl")
    jq, jd, act = t.robot.joint_q, t.robot.joint_d, t.robot.actuator_ids
    feet = foot_mirror(t.legged.foot_names)
    qpos[1] = qpos[0]
    qpos[1, 1] = -qpos[0, 1]
    w, x, y, z = qpos[0, 3:7]
    qpos[1, 3:7] = (w, -x, y, -z)
    qpos[1, jq] = qpos[0, jq[m.act_perm]] * m.act_sign
    qvel[1] = qvel[0]
    qvel[1, 0:3] = qvel[0, 0:3] * (1.0, -1.0, 1.0)
    qvel[1, 3:6] = qvel[0, 3:6] * (-1.0, 1.0, -1.0)
    qvel[1, jd] = qvel[0, jd[m.act_perm]] * m.act_sign
    ctrl[1, act] = ctrl[0, act[m.act_perm]] * m.act_sign  # joint targets about a home pose that mirrors to itself
    for name in ("_contact", "_air_time", "_foot_height"):
        getattr(t, name)[1] = getattr(t, name)[0, feet]
    ids = np.array([0, 1], np.int32)
    base.batch.forward(ids)
    obs = np.zeros((2, env.single_observation_space.shape[0]), np.float32)
    priv = np.zeros((2, t.privileged_obs_size), np.float32)
    t.observe(ids, obs, priv)
    force = priv[0, t.privileged_obs_groups["actuator_force"]]
    assert np.abs(force).max() > 0.1 and not np.allclose(priv[0], pm.observation(priv[0]))  # a generic state
    np.testing.assert_allclose(priv[1], pm.observation(priv[0]), atol=1e-4)
    np.testing.assert_array_equal(pm.observation(pm.observation(priv)), priv)
    env.close()
