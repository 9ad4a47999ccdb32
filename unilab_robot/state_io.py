"""Between a MuJoCo robot and the low-level messages: fill a LowState from ``MjData``, a ``MjData`` from a LowState.

The simulated robot writes what a robot's sensors give (:func:`write_state`): motor ``q``,
``dq``, ``tau_est`` in motor order, the base IMU (quaternion ``(w, x, y, z)`` world <- base,
gyroscope and accelerometer in the base frame) and the base odometry (:data:`~unilab_envs.
robot.messages.ODOM`). The runtime reads them back into a ``MjData`` of its own model
(:func:`read_state`), which is what the deploy spec's observation builders
(:class:`unilab_robot.deploy.PolicyIO`) read.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from unilab_robot.deploy.reference import rotation_matrix


def needs_odometry(spec) -> bool:
    """Whether a deploy spec's policy reads the base velocity (``linvel``), which ``rt/lowstate`` does not carry:
    then ``rt/unilab/odom`` must bring it (a state estimator on a robot; the simulated robot's truth)."""
    return any(g.name == "linvel" for g in spec.observation.groups)


def quat_to_rpy(q) -> np.ndarray:
    """Roll, pitch, yaw (rad) of a ``(w, x, y, z)`` quaternion (Unitree's ``rpy`` field)."""
    w, x, y, z = (float(v) for v in q)
    roll = math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = math.asin(max(-1.0, min(1.0, 2 * (w * y - z * x))))
    yaw = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return np.array([roll, pitch, yaw])


def write_state(state: np.ndarray, odom: np.ndarray, slots: np.ndarray, q: np.ndarray, dq: np.ndarray,
                tau: np.ndarray, quat: np.ndarray, gyro: np.ndarray, accel: np.ndarray, linvel: np.ndarray,
                position: np.ndarray) -> None:
    """Write one reading into a LowState record and an odometry record (motor values at ``slots``)."""
    ms = state["motor_state"]
    ms["q"][slots], ms["dq"][slots], ms["tau_est"][slots] = q, dq, tau
    ms["mode"][slots] = 1
    imu = state["imu_state"]
    imu["quaternion"], imu["gyroscope"], imu["accelerometer"] = quat, gyro, accel
    imu["rpy"] = quat_to_rpy(quat)
    odom["linvel"], odom["position"] = linvel, position
    odom["tick"] = state["tick"]


def read_state(state: np.ndarray, odom: np.ndarray | None, slots: np.ndarray, data: mujoco.MjData,
               joint_q: np.ndarray, joint_d: np.ndarray, root_q: int, root_d: int) -> None:
    """Fill ``data``'s ``qpos`` / ``qvel`` from a LowState (and odometry, when given) as MuJoCo keeps them:
    the free joint's linear velocity in the world frame, its angular velocity in the base frame."""
    ms = state["motor_state"]
    data.qpos[joint_q] = ms["q"][slots]
    data.qvel[joint_d] = ms["dq"][slots]
    if root_q >= 0:
        quat = np.asarray(state["imu_state"]["quaternion"], dtype=np.float64)
        norm = np.linalg.norm(quat)
        data.qpos[root_q + 3:root_q + 7] = quat / norm if norm > 0 else (1.0, 0.0, 0.0, 0.0)
        data.qvel[root_d + 3:root_d + 6] = state["imu_state"]["gyroscope"]
        if odom is not None:
            data.qpos[root_q:root_q + 3] = odom["position"]
            data.qvel[root_d:root_d + 3] = rotation_matrix(data.qpos[root_q + 3:root_q + 7]) @ odom["linvel"]


class BaseSensors:
    """The base's IMU and odometry readings of a simulated robot (truth; noise is added by the caller)."""

    def __init__(self, model: mujoco.MjModel, root_q: int, root_d: int, body: int) -> None:
        self.model, self.root_q, self.root_d, self.body = model, root_q, root_d, body
        self._acc = np.zeros(6)

    def read(self, data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(quat, gyro, accel, linvel_body, position)`` of the base now."""
        q, d = self.root_q, self.root_d
        quat = np.array(data.qpos[q + 3:q + 7])
        gyro = np.array(data.qvel[d + 3:d + 6])
        mujoco.mj_rnePostConstraint(self.model, data)  # cacc: the accelerometer's proper acceleration
        mujoco.mj_objectAcceleration(self.model, data, mujoco.mjtObj.mjOBJ_BODY, self.body, self._acc, 1)
        linvel = rotation_matrix(quat).T @ data.qvel[d:d + 3]
        return quat, gyro, np.array(self._acc[3:]), linvel, np.array(data.qpos[q:q + 3])
