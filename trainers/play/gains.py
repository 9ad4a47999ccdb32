"""Whose servo gains ``unilab play`` drives a model with: the deploy spec's (the robot's way), or the model's own.

On a robot the runtime sends the spec's ``action.kp`` / ``action.kd`` with every joint target
(Unitree's ``LowCmd_``), and the motor driver runs its PD loop with them, whatever an MJCF of
that robot declares. ``unilab play --model-path`` does the same by default: a model whose
position servos have other gains (published G1 models ship Kp 500, Kd 10 on every joint) is
driven with the spec's, and one line says so; ``--model-gains`` keeps the model's own servos
(and the safety guard then estimates torque with them, :func:`unilab_robot.deploy.safety.joint_model_from_spec`).
"""

from __future__ import annotations

import mujoco
import numpy as np

#: the :meth:`~unilab_robot.deploy.PolicyIO.actuator_differences` notes that are about gains
GAIN_NOTES = ("Kp differs", "Kd differs")


def gain_notes(differences: list[str]) -> list[str]:
    """The notes of ``differences`` about Kp / Kd (the others: actuators of another kind)."""
    return [d for d in differences if d.startswith(GAIN_NOTES)]


def apply_spec_gains(model: mujoco.MjModel, actuators: np.ndarray, kp, kd) -> None:
    """Give the position actuators ``actuators`` the gains ``kp`` / ``kd`` (one per actuator), in place:
    ``force = kp * (ctrl - q) - kd * qd``, as MuJoCo's ``<position kp kv>`` writes them."""
    acts = np.asarray(actuators, dtype=np.int64)
    kp, kd = np.asarray(kp, np.float64), np.asarray(kd, np.float64)
    model.actuator_gainprm[acts, 0] = kp
    model.actuator_biasprm[acts, 1] = -kp
    model.actuator_biasprm[acts, 2] = -kd


def gains_line(notes: list[str], model_gains: bool) -> str | None:
    """The line ``unilab play`` prints about a model whose servo gains differ from the spec's; ``None`` when they match."""
    if not notes:
        return None
    said = "; ".join(notes)
    if model_gains:
        return (f"note: the model's own servo gains drive it (--model-gains): {said}; the safety guard estimates "
                f"torque with them")
    return (f"the model's servo gains differ from the deploy spec's ({said}): driving it with the spec's Kp / Kd, as "
            f"the robot's motor drivers are driven by the gains the runtime sends; --model-gains keeps the model's own")
