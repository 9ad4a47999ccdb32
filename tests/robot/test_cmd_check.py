"""The simulated robot drops a LowCmd_ its motors do not accept (non-finite values, gains or modes out of range), as it
drops a bad CRC: counted, one line on the first, damping when no valid command follows."""

from __future__ import annotations

import numpy as np
import pytest

from robot_support import Lines, g1_model, lockstep
from unilab_robot import messages as M
from unilab_robot.cmd_check import command_problem
from unilab_robot.crc import stamp_crc
from unilab_robot.motors import robot_def
from unilab_robot.runtime import RobotRuntime, RuntimeConfig
from unilab_robot.sim import SimConfig, SimRobot
from unilab_robot.wire import LocalBus


def _cmd(family=M.HG, **motor0):
    msg = M.new_cmd(family)
    msg["motor_cmd"]["mode"][:], msg["motor_cmd"]["kp"][:], msg["motor_cmd"]["kd"][:] = 1, 100.0, 2.0
    for k, v in motor0.items():
        msg["motor_cmd"][k][3] = v
    return stamp_crc(msg)


@pytest.mark.parametrize("field, value, words", [
    ("q", np.nan, "motor 3's q is nan"), ("dq", np.inf, "motor 3's dq is inf"), ("tau", -np.inf, "motor 3's tau is -inf"),
    ("kp", -5.0, "motor 3's kp is -5 (accepted: 0 to 2000)"), ("kd", 1e6, "motor 3's kd is 1e+06 (accepted: 0 to 200)"),
    ("mode", 7, "motor 3's mode is 7 (accepted: 0 off, 1 enabled)")])
def test_what_the_motors_refuse(field, value, words):
    assert command_problem(_cmd(**{field: value})) == words


def test_what_the_motors_accept():
    assert command_problem(_cmd()) is None
    assert command_problem(_cmd(M.GO, q=2.146e9, dq=16000.0, kp=0.0, kd=0.0)) is None  # Unitree's PosStopF / VelStopF
    assert command_problem(_cmd(mode=0)) is None


class Poisoning:
    """A transport that writes NaN into one joint target of what it publishes (CRC re-stamped: valid) once ``on``."""

    def __init__(self, inner):
        self.inner, self.on = inner, False

    def publish(self, topic, msg):
        if self.on and topic == M.TOPIC_CMD:
            msg = msg.copy()
            msg["motor_cmd"]["q"][3] = np.nan
            stamp_crc(msg)
        self.inner.publish(topic, msg)

    def take(self, topic):
        return self.inner.take(topic)

    def close(self):
        pass


def test_nan_command_is_dropped_and_the_robot_damps(g1):
    spec, policy = g1
    bus, lines = LocalBus(), Lines()
    sim = SimRobot(spec, g1_model(spec), robot_def("g1"), bus.endpoint(), SimConfig(), say=lines)
    poison = Poisoning(bus.endpoint())
    rt = RobotRuntime(spec, g1_model(spec), policy, robot_def("g1"), poison, RuntimeConfig(command="fixed"), say=lines)
    lockstep(rt, sim, 2.4)
    assert rt.mode == "policy" and lines == []
    applied = sim.stats.commands
    poison.on = True
    lockstep(rt, sim, 0.5, t0=2.4)
    assert sim.stats.bad_cmd == 25 and sim.stats.commands == applied and sim.stats.bad_crc == 0
    assert lines[0] == ("rt/lowcmd the motors do not accept (motor 3's q is nan): dropped, as a bad CRC is; further ones "
                        "are counted; no valid command for 0.1 s: damping")
    assert lines[1] == "no valid rt/lowcmd for 0.1 s: motors in damping (Kp 0, Kd 1)"
    a = sim.driver.actuators
    assert (sim.model.actuator_gainprm[a, 0] == 0).all() and (sim.model.actuator_biasprm[a, 2] == -1.0).all()
    assert np.isfinite(sim.data.ctrl).all() and np.isfinite(sim.data.qpos).all()  # nothing of the NaN reached MuJoCo
    assert sim.summary()["bad_cmd"] == 25
