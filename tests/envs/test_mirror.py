"""Left/right mirror maps of the legged robots: exact on the physics, and their own inverse."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import unilab_envs  # noqa: F401  (registers the tasks)
from unilab_envs.locomotion.mirror import partner_name, phase_mirror

LEGGED = ["UniLab/Go1Joystick-v0", "UniLab/Go2Joystick-v0", "UniLab/G1Joystick-v0"]


def test_partner_names():
    assert partner_name("FR_hip_joint") == "FL_hip_joint" and partner_name("RL_calf_joint") == "RR_calf_joint"
    assert partner_name("left_knee_joint") == "right_knee_joint" and partner_name("right_foot") == "left_foot"
    assert partner_name("waist_yaw_joint") == "waist_yaw_joint"


def test_phase_mirror_of_a_trot_a_walk_and_a_pronk():
    pi = np.pi
    assert phase_mirror(("FR", "FL", "RR", "RL"), (0.0, pi, pi, 0.0)) == -1.0
    assert phase_mirror(("left_foot", "right_foot"), (0.0, pi)) == -1.0
    assert phase_mirror(("FR", "FL", "RR", "RL"), (0.0, 0.0, 0.0, 0.0)) == 1.0
    with pytest.raises(ValueError, match="half a period"):
        phase_mirror(("FR", "FL", "RR", "RL"), (0.0, 1.0, pi, 0.0))


@pytest.mark.parametrize("task", LEGGED)
def test_mirroring_twice_is_the_identity(task):
    env = gym.make_vec(task, num_envs=1, num_threads=1)
    m = env.unwrapped.task.mirror
    x = np.random.default_rng(0).normal(size=(5, env.single_observation_space.shape[0]))
    a = np.random.default_rng(1).normal(size=(5, env.single_action_space.shape[0]))
    np.testing.assert_array_equal(m.observation(m.observation(x)), x)
    np.testing.assert_array_equal(m.action(m.action(a)), a)
    assert sorted(m.act_perm) == list(range(a.shape[1])) and set(np.abs(m.act_sign)) == {1.0}
    env.close()


@pytest.mark.parametrize("task", LEGGED)
def test_the_mirrored_states_observation_is_the_mirrored_observation(task):
    """Row 1 is set to the physical mirror image of row 0 (after random steps); its observation must be
    the mirror map of row 0's."""
    env = gym.make_vec(task, num_envs=2, num_threads=1)
    base = env.unwrapped
    t, m = base.task, base.task.mirror
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(15):
        env.step(rng.uniform(-0.5, 0.5, (2, env.single_action_space.shape[0])).astype(np.float32))
    qpos, qvel = base.batch.bind("qpos"), base.batch.bind("qvel")
    jq, jd = t.robot.joint_q, t.robot.joint_d
    qpos[1] = qpos[0]
    qpos[1, 1] = -qpos[0, 1]                                    # base y
    w, x, y, z = qpos[0, 3:7]
    qpos[1, 3:7] = (w, -x, y, -z)                               # orientation, reflected
    qpos[1, jq] = qpos[0, jq[m.act_perm]] * m.act_sign
    qvel[1] = qvel[0]
    qvel[1, 0:3] = qvel[0, 0:3] * (1.0, -1.0, 1.0)              # world linear velocity
    qvel[1, 3:6] = qvel[0, 3:6] * (-1.0, 1.0, -1.0)             # body angular velocity (a pseudovector)
    qvel[1, jd] = qvel[0, jd[m.act_perm]] * m.act_sign
    t.command[1] = t.command[0] * (1.0, -1.0, -1.0)
    t.phase[1] = t.phase[0] + np.pi
    t.last_action[1] = t.last_action[0, m.act_perm] * m.act_sign
    ids = np.array([0, 1], np.int32)
    base.batch.forward(ids)
    obs = np.zeros((2, env.single_observation_space.shape[0]), np.float32)
    priv = np.zeros((2, t.privileged_obs_size), np.float32)
    t.observe(ids, obs, priv)
    assert np.abs(obs[0]).max() > 0.1 and np.abs(obs[0, t.obs_groups["gyro"]]).max() > 1e-3  # a generic state
    np.testing.assert_allclose(obs[1], m.observation(obs[0]), atol=2e-5)
    env.close()


def test_a_terrain_task_with_a_height_scan_has_no_mirror():
    env = gym.make_vec("UniLab/Go1JoystickRough-v0", num_envs=1, num_threads=1)
    with pytest.raises(ValueError, match="height_scan"):
        env.unwrapped.task.mirror
    env.close()


def test_each_group_is_mirrored_as_its_declaration_says():
    """The reflection of a layout comes from the groups' own ``mirror=`` declarations, by hand: a task's own group
    declared with signs is mirrored, one declared without a mirror is refused by name."""
    from unilab_envs.core.obs_groups import ObsGroup
    from unilab_envs.locomotion.mirror import group_mirror

    declared = {"tilt": ObsGroup("tilt", 2, "rad", "roll, pitch", mirror=(-1.0, 1.0)),
                "legs": ObsGroup("legs", 2, "rad", "two joints", mirror="joints"),
                "clock": ObsGroup("clock", 2, "1", "sin, cos", mirror="phase"),
                "mass": ObsGroup("mass", 1, "kg", "payload", mirror="invariant")}
    layout = {"tilt": slice(0, 2), "legs": slice(2, 4), "clock": slice(4, 6), "mass": slice(6, 7)}
    perm, sign = group_mirror(layout, declared, joint_perm=np.array([1, 0]), joint_sign=np.array([-1.0, 1.0]),
                              foot_perm=np.array([0]), phase_sign=-1.0)
    np.testing.assert_array_equal(perm, [0, 1, 3, 2, 4, 5, 6])
    np.testing.assert_array_equal(sign, [-1, 1, -1, 1, -1, -1, 1])
    declared["scan"] = ObsGroup("scan", 3, "m", "heights")
    with pytest.raises(ValueError, match="'scan'.*mirror="):
        group_mirror({**layout, "scan": slice(7, 10)}, declared, np.array([1, 0]), np.array([-1.0, 1.0]), np.array([0]), 1.0)
    with pytest.raises(ValueError, match="mirror signs must be 2 values"):
        ObsGroup("bad", 2, "1", "x", mirror=(1.0, 0.5))
