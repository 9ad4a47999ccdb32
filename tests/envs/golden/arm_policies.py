"""Scripted controllers that drive the arm goldens (UR5Reach, UR5Grasp) through their reward terms.

Random actions never reach the target nor touch the cube, so a golden of them would leave
the ``success`` / ``grasp`` / ``lift`` / ``hold`` kernels unchecked. An arm case steps
``clip(controller(obs) + amplitude * noise, -1, 1)`` instead, the noise drawn exactly as a
legged case draws its actions: at amplitude 0.2 most episodes reach / pick and succeed, at
1.0 they miss, drop and time out. Each controller is a pure function of the observation and
its own phase, so the rollout stays a function of the case alone.
"""

from __future__ import annotations

import mujoco
import numpy as np

from unilab_robot.assets import ur5e


class Reacher:
    """UR5Reach: half a damped-least-squares step (the site Jacobian at the observed joint
    angles) towards the target each control step, as joint-target deltas."""

    def __init__(self, env) -> None:
        task = env.unwrapped.task
        self.model, self.data = env.unwrapped.model, mujoco.MjData(env.unwrapped.model)
        self.site = self.model.site(ur5e.EE_SITE).id
        self.home, self.scale, self.groups = task._home, task.config.action_scale, env.unwrapped.obs_groups

    def restart(self, mask: np.ndarray) -> None:
        pass

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        g, jac = self.groups, np.zeros((3, self.model.nv))
        actions = np.zeros((len(obs), 6))
        for i, row in enumerate(obs.astype(np.float64)):
            self.data.qpos[:] = row[g["joint_pos"]] + self.home
            mujoco.mj_kinematics(self.model, self.data)
            mujoco.mj_comPos(self.model, self.data)
            mujoco.mj_jacSite(self.model, self.data, jac, None, self.site)
            dq = jac.T @ np.linalg.solve(jac @ jac.T + 0.01 * np.eye(3), row[g["ee_to_target"]])
            actions[i] = 0.5 * (row[g["joint_pos"]] + dq - row[g["joint_target"]]) / self.scale
        return np.clip(actions, -1.0, 1.0)


class Picker:
    """UR5Grasp: above the cube, descend open, close, lift (the phase machine of
    ``tests/envs/test_ur5_grasp.py``'s ``ScriptedPick``, over the named observation groups)."""

    def __init__(self, env, num_envs: int) -> None:
        self.object_pos = env.unwrapped.obs_groups["object_pos"]
        self.scale = env.unwrapped.task.config.action_scale
        self.phase, self.timer = np.zeros(num_envs, int), np.zeros(num_envs, int)

    def restart(self, mask: np.ndarray) -> None:
        self.phase[mask], self.timer[mask] = 0, 0

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        goal = obs[:, self.object_pos].astype(np.float64)
        goal[self.phase == 0, 2] += 0.08  # first 8 cm above the cube
        near = np.linalg.norm(goal, axis=1) < 0.01
        actions = np.zeros((len(obs), 4))
        actions[:, :3] = np.where((self.phase <= 1)[:, None], np.clip(goal / self.scale, -1, 1), 0.0)
        actions[:, 3] = np.where(self.phase >= 2, 1.0, -1.0)
        actions[self.phase == 3, 2] = 1.0
        before = self.phase.copy()
        self.phase[(before <= 1) & near] += 1
        self.timer[before == 2] += 1
        self.phase[(before == 2) & (self.timer > 12)] = 3
        return actions


def controller(task_id: str, env, num_envs: int):
    """The scripted controller of an arm task, ``None`` for the others (pure random actions)."""
    if task_id == "UniLab/UR5Reach-v0":
        return Reacher(env)
    if task_id == "UniLab/UR5Grasp-v0":
        return Picker(env, num_envs)
    return None
