"""What a motor accepts from a ``LowCmd_``: the simulated robot drops anything else, as it drops a bad CRC.

A command with a valid CRC can still be nonsense: a NaN target (MuJoCo would warn, zero every
control and let the robot fall), a negative or absurd gain, a ``mode`` the motor has no meaning
for. :func:`command_problem` names the first such field, or returns ``None`` for a command the
motors accept. Every motor slot is checked (slots the robot does not drive too: a robot reads all
of them). Position and velocity targets only need to be finite: Unitree's go-family examples send
``q = 2.146e9`` and ``dq = 16000`` (their ``PosStopF`` / ``VelStopF``) to mean "no position / velocity
loop", and those must pass.
"""

from __future__ import annotations

import numpy as np

from unilab_robot import messages as M

#: the motor ``mode`` values accepted: 0 off, 1 enabled (Unitree's hg and Go2 examples)
MODES = (M.MOTOR_OFF, M.MOTOR_ENABLE)
#: gain ceilings (N m/rad, N m s/rad): far above any gain Unitree's examples or our deploy specs use
#: (G1 legs ~100-350, Go2 ~20-60; Kd <= 10), so only a corrupt or mistyped value reaches them
KP_MAX, KD_MAX = 2000.0, 200.0
_FLOATS = ("q", "dq", "tau", "kp", "kd")


def command_problem(cmd: np.ndarray) -> str | None:
    """The first thing in ``cmd`` (a LowCmd record) the motors do not accept, in words; ``None`` if all is accepted."""
    mc = cmd["motor_cmd"]
    for name in _FLOATS:
        bad = np.flatnonzero(~np.isfinite(mc[name]))
        if len(bad):
            return f"motor {int(bad[0])}'s {name} is {float(mc[name][bad[0]])}"
    for name, top in (("kp", KP_MAX), ("kd", KD_MAX)):
        bad = np.flatnonzero((mc[name] < 0) | (mc[name] > top))
        if len(bad):
            return f"motor {int(bad[0])}'s {name} is {float(mc[name][bad[0]]):g} (accepted: 0 to {top:g})"
    bad = np.flatnonzero(~np.isin(mc["mode"], MODES))
    if len(bad):
        return f"motor {int(bad[0])}'s mode is {int(mc['mode'][bad[0]])} (accepted: 0 off, 1 enabled)"
    return None
