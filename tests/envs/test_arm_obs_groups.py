"""An arm task's observation groups are written by their writers, at the columns their declaration order gives.

A UR5Reach subclass that lists one more policy group (the end effector's distance to the target)
and a critic observation of its own (that group again, and the joints' summed squared speed) gets
them written at the end of its observations, equal to the values computed here from the MuJoCo
state, after steps and after resets, with the 33 columns before them bit for bit the plain
task's at the same seed and actions. A writer reading a name the layer does not offer, a group
without a writer and a group listed twice are refused when the class is made.

The subclass compiles its own kernel (once per machine: Numba's cache); the plain task's is the bundled one.
"""

from __future__ import annotations

import mujoco
import numba as nb
import numpy as np
import pytest

from unilab_robot.assets import ur5e
from unilab_envs.core.obs_groups import ObsGroup
from unilab_envs.core.vector_env import UniLabVectorEnv
from unilab_envs.tasks.arm_groups import REACH_GROUPS
from unilab_envs.tasks.ur5_grasp import UR5Grasp
from unilab_envs.tasks.ur5_reach import UR5Reach


@nb.njit(inline="always")
def write_ee_dist(out, dist):
    out[0] = dist


@nb.njit(inline="always")
def write_joint_speed_sq(out, joint_vel_sq):
    out[0] = joint_vel_sq


@nb.njit(inline="always")
def write_yaw_rate(out, i, yaw_rate):
    out[0] = yaw_rate


EE_DIST = ObsGroup("ee_dist", 1, "m", "end effector to target", writer=write_ee_dist)
JOINT_SPEED_SQ = ObsGroup("joint_speed_sq", 1, "rad^2/s^2", "sum of the squared joint velocities", writer=write_joint_speed_sq)


class DistReach(UR5Reach):
    """UR5Reach whose policy also sees its distance to the target, with a critic observation of its own."""

    policy_groups = (*UR5Reach.policy_groups, EE_DIST)
    critic_groups = (EE_DIST, JOINT_SPEED_SQ)


def _rollout(task_class, steps: int = 20):
    """Observations after reset and after each step (episodes of 8 steps: resets within), and the hand-computed
    distance and joint speed of the MuJoCo state each time."""
    env = UniLabVectorEnv(task_class, 4, max_episode_steps=8, spread_episode_starts=False)
    model = env.model
    site = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, ur5e.EE_SITE)
    mocap = model.body_mocapid[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, ur5e.TARGET_BODY)]
    dofs = [model.jnt_dofadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n)] for n in ur5e.JOINT_NAMES]
    site_xpos, mocap_pos, qvel = env.batch.bind("site_xpos"), env.batch.bind("mocap_pos"), env.batch.bind("qvel")
    actions = np.random.default_rng(1).uniform(-1, 1, (steps, env.num_envs, 6)).astype(np.float32)
    obs, info = env.reset(seed=5)
    out = []
    for t in range(steps + 1):
        dist = np.sqrt(((mocap_pos[:, mocap] - site_xpos[:, site]) ** 2).sum(axis=1))
        speed_sq = (qvel[:, dofs] ** 2).sum(axis=1)
        priv = info.get("privileged_obs")
        out.append((obs.copy(), None if priv is None else priv.copy(), dist, speed_sq))
        if t < steps:
            obs, _, terminated, truncated, info = env.step(actions[t])
            assert not terminated.any() and truncated.any() == ((t + 1) % 8 == 0)  # the resets are in the rollout
    env.close()
    return out


def test_a_subclass_group_is_written_at_the_end_the_rest_bit_for_bit_the_plain_tasks():
    assert DistReach.obs_groups == {**UR5Reach.obs_groups, "ee_dist": slice(33, 34)}
    assert DistReach.privileged_obs_groups == {"ee_dist": slice(0, 1), "joint_speed_sq": slice(1, 2)}
    assert DistReach.declared_groups["joint_speed_sq"] is JOINT_SPEED_SQ
    assert UR5Reach.policy_groups == REACH_GROUPS and UR5Reach.privileged_obs_groups == {}  # the base class is untouched
    plain, mine = _rollout(UR5Reach), _rollout(DistReach)
    for t, ((plain_obs, plain_priv, _, _), (obs, priv, dist, speed_sq)) in enumerate(zip(plain, mine)):
        assert plain_priv is None and obs.shape == (4, 34) and priv.shape == (4, 2)
        np.testing.assert_array_equal(obs[:, :33], plain_obs, err_msg=f"step {t}")
        np.testing.assert_allclose(obs[:, 33], dist, rtol=1e-6, err_msg=f"step {t}")
        np.testing.assert_array_equal(priv[:, 0], obs[:, 33], err_msg=f"step {t}")  # written once, copied
        np.testing.assert_allclose(priv[:, 1], speed_sq, rtol=1e-6, atol=1e-9, err_msg=f"step {t}")
    assert (mine[-1][3] > 0).all() and (mine[-1][2] > 0).all()


def test_a_writer_reading_what_the_layer_lacks_is_refused_naming_what_it_offers():
    yaw = ObsGroup("yaw", 1, "rad/s", "yaw rate", writer=write_yaw_rate)
    with pytest.raises(TypeError, match=r"BadReach: observation group 'yaw': writer argument 'yaw_rate' is none of the "
                                        r"quantities this task offers: i, qpos, qvel, site_xpos, site, .*, dist, succeeded"):
        class BadReach(UR5Reach):
            policy_groups = (*UR5Reach.policy_groups, yaw)
    with pytest.raises(TypeError, match=r"BadGrasp: .*'yaw_rate' is none of the quantities this task offers: i, qpos, .*xanchor"):
        class BadGrasp(UR5Grasp):
            critic_groups = (*UR5Grasp.critic_groups, yaw)
    with pytest.raises(ValueError, match=r"NoWriter: observation group .*'yaw'.* is not an ObsGroup with a writer"):
        class NoWriter(UR5Reach):
            policy_groups = (*UR5Reach.policy_groups, ObsGroup("yaw", 1, "rad/s", "yaw rate"))
    with pytest.raises(ValueError, match=r"Twice: policy observation groups listed twice: \['ee_dist'\]"):
        class Twice(UR5Reach):
            policy_groups = (*UR5Reach.policy_groups, EE_DIST, EE_DIST)
