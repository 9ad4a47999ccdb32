"""Bad CRC, stale state, a dead peer, a joint-name mismatch: each is one clear line and damping."""

from __future__ import annotations

import numpy as np
import pytest

from robot_support import Lines, g1_model, lockstep
from unilab_robot import messages as M
from unilab_robot.crc import stamp_crc
from unilab_robot.motors import NameMapError, robot_def
from unilab_robot.runtime import RobotRuntime, RuntimeConfig, RuntimeFault
from unilab_robot.sim import SimConfig, SimRobot
from unilab_robot.wire import Link, LocalBus


class Corrupting:
    """A transport that breaks the CRC of what it publishes on ``topic`` once ``on`` is set."""

    def __init__(self, inner, topic):
        self.inner, self.topic, self.on = inner, topic, False

    def publish(self, topic, msg):
        if self.on and topic == self.topic:
            msg = msg.copy()
            msg["crc"] ^= 1
        self.inner.publish(topic, msg)

    def take(self, topic):
        return self.inner.take(topic)

    def close(self):
        pass


def _pair(g1, sim_transport=None, rt_transport=None, **runtime):
    spec, policy = g1
    bus = LocalBus()
    lines = Lines()
    sim = SimRobot(spec, g1_model(spec), robot_def("g1"), sim_transport(bus.endpoint()) if sim_transport else bus.endpoint(),
                   SimConfig(), say=lines)
    rt = RobotRuntime(spec, g1_model(spec), policy, robot_def("g1"),
                      rt_transport(bus.endpoint()) if rt_transport else bus.endpoint(),
                      RuntimeConfig(command="fixed", **runtime), say=lines)
    return sim, rt, lines


def _damping_sent(rt):
    mc = rt.cmd_msg["motor_cmd"][:29]
    return (mc["kp"] == 0).all() and np.allclose(mc["kd"], rt.damping_kd) and (mc["mode"] == 1).all()


def test_bad_crc_command_is_dropped_then_the_robot_damps(g1):
    holder = {}
    sim, rt, lines = _pair(g1, rt_transport=lambda t: holder.setdefault("t", Corrupting(t, M.TOPIC_CMD)))
    lockstep(rt, sim, 2.4)
    assert rt.mode == "policy" and lines == []
    holder["t"].on = True
    lockstep(rt, sim, 0.5, t0=2.4)
    assert sim.stats.bad_crc == 25  # every command of 0.5 s at 50 Hz: dropped, counted
    assert len(lines) == 2 and "rt/lowcmd with a bad CRC" in lines[0]
    assert "no valid rt/lowcmd for 0.1 s: motors in damping (Kp 0, Kd 1)" == lines[1]
    a = sim.driver.actuators
    assert (sim.model.actuator_gainprm[a, 0] == 0).all() and (sim.model.actuator_biasprm[a, 2] == -1.0).all()


def test_bad_crc_state_is_dropped_and_the_runtime_damps(g1):
    holder = {}
    sim, rt, lines = _pair(g1, sim_transport=lambda t: holder.setdefault("t", Corrupting(t, M.TOPIC_STATE)))
    lockstep(rt, sim, 2.4)
    holder["t"].on = True
    lockstep(rt, sim, 0.3, t0=2.4)
    assert rt.bad_crc > 0 and rt.mode == "fault" and _damping_sent(rt)
    assert len(lines) == 2 and lines[0].startswith("rt/lowstate with a bad CRC")
    assert lines[1].startswith("no fresh rt/lowstate for 0.1") and lines[1].endswith(": damping")


def test_stale_state_from_a_dead_robot_damps(g1):
    sim, rt, lines = _pair(g1)
    lockstep(rt, sim, 3.0, sim_alive=lambda t: t < 2.6)  # the robot stops publishing at 2.6 s
    assert rt.mode == "fault" and _damping_sent(rt)
    assert len(lines) == 1 and "no fresh rt/lowstate for 0.1" in lines[0] and "(limit 0.1 s; last tick" in lines[0]


def test_no_robot_at_start_is_one_line(g1):
    spec, policy = g1
    rt = RobotRuntime(spec, g1_model(spec), policy, robot_def("g1"), LocalBus().endpoint(),
                      RuntimeConfig(connect_timeout_s=0.05))
    with pytest.raises(RuntimeFault, match=r"^no rt/lowstate from the robot in 0.05 s: is the robot .* running"):
        rt.wait_for_robot()


def test_joint_name_mismatch_refuses_to_start(g1):
    spec, policy = g1
    with pytest.raises(NameMapError, match="do not match the go2's motors"):
        RobotRuntime(spec, g1_model(spec), policy, robot_def("go2"), LocalBus().endpoint())


def test_link_latency_and_loss_by_hand():
    link = Link(latency_s=0.01, loss=0.0)
    link.push(0.0, "a")
    link.push(0.004, "b")
    assert link.ready(0.009) == [] and link.ready(0.010) == ["a"] and link.ready(0.02) == ["b"]
    lossy = Link(loss=0.1, rng=np.random.default_rng(0))
    for i in range(10000):
        lossy.push(0.0, i)
    assert abs(lossy.lost / 10000 - 0.1) < 0.01 and len(lossy.ready(0.0)) == 10000 - lossy.lost
    with pytest.raises(ValueError, match="loss in"):
        Link(loss=1.5)


def test_stamped_command_roundtrip_is_measured(g1):
    sim, rt, _ = _pair(g1)
    lockstep(rt, sim, 1.0)
    # the runtime answers the newest state, published at the step before its tick: one physics step of round trip
    assert sim.summary()["round_trip_ms_p50"] == pytest.approx(4.0)
    msg = stamp_crc(M.new_cmd(M.HG))
    assert M.get_tag(msg) == 0


def test_a_guard_watchdog_is_one_line_and_its_safe_mode(g1):
    sim, rt, lines = _pair(g1)
    lockstep(rt, sim, 2.4)
    assert rt.mode == "policy"
    q = sim.io.root_q
    sim.data.qpos[q + 3:q + 7] = (np.cos(0.6), np.sin(0.6), 0.0, 0.0)  # rolled by 1.2 rad, beyond the spec's 0.8
    lockstep(rt, sim, 0.1, t0=2.4)
    # the simulated robot reports the fall, the runtime its guard's trip
    assert lines == ["the robot fell at 2.40 s", "the safety guard's tilt watchdog tripped: damping"]
    mc = rt.cmd_msg["motor_cmd"][:29]
    assert (mc["kp"] == 0).all() and (mc["kd"] > 0).all()
