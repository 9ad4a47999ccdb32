"""The motor driver's law, and a simulated driver that applies it through MuJoCo's actuators.

Each Unitree joint motor runs, from the last ``MotorCmd_`` it accepted (``mode`` 1)::

    tau = clip(tau_ff + kp * (q_des - q) + kd * (dq_des - dq), -tau_max, tau_max)

(``unitree_sdk2``'s low-level examples and Unitree's developer guide give this law; ``mode``
0 leaves the motor unpowered, tau = 0). :func:`motor_torque` is that law as a pure function.
:class:`MotorDriver` makes each driven joint's MuJoCo actuator compute exactly it, at every
physics step: an affine actuator with gain ``kp`` on ``ctrl = q_des`` and bias
``(tau_ff + kd * dq_des, -kp, -kd)``, its force range ``+-tau_max``. MuJoCo then integrates
the ``-kd * dq`` term as it does for training's position actuators (implicitly, under the
``implicitfast`` integrator), so the simulated robot is the trained model's PD with the
gains the wire carries.
"""

from __future__ import annotations

import mujoco
import numpy as np


def motor_torque(q, dq, q_des, dq_des, tau_ff, kp, kd, tau_max) -> np.ndarray:
    """``clip(tau_ff + kp (q_des - q) + kd (dq_des - dq), -tau_max, tau_max)`` per motor (arrays broadcast), N m."""
    q, dq = np.asarray(q, dtype=np.float64), np.asarray(dq, dtype=np.float64)
    tau = np.asarray(tau_ff) + np.asarray(kp) * (np.asarray(q_des) - q) + np.asarray(kd) * (np.asarray(dq_des) - dq)
    return np.clip(tau, -np.asarray(tau_max), np.asarray(tau_max))


class MotorDriver:
    """The motors of ``joint_names`` (motor order) on a ``MjModel``'s actuators.

    ``tau_max``: per motor (N m); where ``None``, the actuator's own force range (``inf`` when
    it has none). Raises ``ValueError`` naming a joint no actuator drives one to one.
    """

    def __init__(self, model: mujoco.MjModel, joint_names, tau_max=None) -> None:
        self.model = model
        acts, qadr, dadr = [], [], []
        for name in joint_names:
            j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
            found = [a for a in range(model.nu) if model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT
                     and model.actuator_trnid[a, 0] == j] if j >= 0 else []
            if len(found) != 1:
                raise ValueError(f"joint {name!r}: {'not in the model' if j < 0 else f'{len(found)} actuators drive it'}; "
                                 f"the simulated robot needs one actuator per motor")
            acts.append(found[0])
            qadr.append(model.jnt_qposadr[j])
            dadr.append(model.jnt_dofadr[j])
        self.actuators = np.array(acts, dtype=np.int64)
        self.qadr, self.dadr = np.array(qadr, np.int64), np.array(dadr, np.int64)
        own = np.where(model.actuator_forcelimited[self.actuators].astype(bool),
                       np.abs(model.actuator_forcerange[self.actuators]).max(axis=1), np.inf)
        self.tau_max = own if tau_max is None else np.where(np.isnan(np.asarray(tau_max, dtype=np.float64)), own,
                                                            np.asarray(tau_max, dtype=np.float64))
        a = self.actuators
        model.actuator_gaintype[a] = mujoco.mjtGain.mjGAIN_FIXED
        model.actuator_biastype[a] = mujoco.mjtBias.mjBIAS_AFFINE
        model.actuator_gear[a] = 0.0
        model.actuator_gear[a, 0] = 1.0
        model.actuator_ctrllimited[a] = 0  # the drive takes any q_des; the runtime's guard limits targets
        model.actuator_forcelimited[a] = np.isfinite(self.tau_max)
        finite = np.where(np.isfinite(self.tau_max), self.tau_max, 0.0)
        model.actuator_forcerange[a] = np.stack([-finite, finite], axis=1)
        self.off()

    def command(self, data: mujoco.MjData, q_des, dq_des, tau_ff, kp, kd, enabled=None) -> None:
        """Load one command (motor order): from now on each physics step applies :func:`motor_torque` of it.
        ``enabled``: per motor (``mode`` 1); a disabled motor gives no torque."""
        on = np.ones(len(self.actuators), bool) if enabled is None else np.asarray(enabled, bool)
        m, a = self.model, self.actuators
        kp, kd = np.where(on, kp, 0.0), np.where(on, kd, 0.0)
        m.actuator_gainprm[a, 0] = kp
        m.actuator_biasprm[a, 0] = np.where(on, np.asarray(tau_ff) + kd * np.asarray(dq_des), 0.0)
        m.actuator_biasprm[a, 1] = -kp
        m.actuator_biasprm[a, 2] = -kd
        data.ctrl[a] = np.where(on, q_des, 0.0)

    def off(self, data: mujoco.MjData | None = None) -> None:
        """Every motor unpowered."""
        m, a = self.model, self.actuators
        m.actuator_gainprm[a, 0] = 0.0
        m.actuator_biasprm[a, :3] = 0.0
        if data is not None:
            data.ctrl[a] = 0.0

    def torque(self, data: mujoco.MjData) -> np.ndarray:
        """The torque each motor applies now (N m, motor order): MuJoCo's actuator force."""
        return np.array(data.actuator_force[self.actuators])
