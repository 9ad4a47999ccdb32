"""States with the CRC field 0 (as unitree_mujoco publishes them): named, accepted on loopback under --state-crc auto,
dropped on a robot's network; every "no state" line says what arrived on rt/lowstate."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from robot_support import Lines, g1_model, lockstep
from unilab_robot import messages as M
from unilab_robot.crc import stamp_crc
from unilab_robot.motors import robot_def
from unilab_robot.runtime import RobotRuntime, RuntimeConfig, RuntimeFault
from unilab_robot.sim import SimConfig, SimRobot
from unilab_robot.state_filter import StateFilter, accepts_unstamped
from unilab_robot.wire import LocalBus

DOMAIN = 230 + os.getpid() % 2


class Unstamped:
    """A transport that publishes states with the CRC field 0, as unitree_mujoco does (once ``on``)."""

    def __init__(self, inner, on=True):
        self.inner, self.on = inner, on

    def publish(self, topic, msg):
        if self.on and topic == M.TOPIC_STATE:
            msg = msg.copy()
            msg["crc"] = 0
        self.inner.publish(topic, msg)

    def take(self, topic):
        return self.inner.take(topic)

    def close(self):
        pass


def _pair(g1, on=True, **runtime):
    spec, policy = g1
    bus, lines = LocalBus(), Lines()
    wrapped = Unstamped(bus.endpoint(), on)
    sim = SimRobot(spec, g1_model(spec), robot_def("g1"), wrapped, SimConfig(), say=lines)
    rt = RobotRuntime(spec, g1_model(spec), policy, robot_def("g1"), bus.endpoint(),
                      RuntimeConfig(command="fixed", **runtime), say=lines)
    return sim, rt, lines, wrapped


def test_mode_choice():
    assert accepts_unstamped("auto", True) and not accepts_unstamped("auto", False)
    assert accepts_unstamped("off", False) and not accepts_unstamped("on", True)
    with pytest.raises(ValueError, match="--state-crc must be one of auto, on, off"):
        RuntimeConfig(state_crc="maybe")


def test_unstamped_states_run_on_loopback_with_one_line(g1):
    sim, rt, lines, _ = _pair(g1)
    lockstep(rt, sim, 3.0)
    assert rt.mode == "policy" and rt.states.counts.unstamped == 0 and rt.bad_crc == 0
    assert rt.states.counts.accepted == rt.states.counts.messages > 100
    assert lines == ["rt/lowstate arrives with its CRC field 0 (unstamped, as unitree_mujoco publishes it): accepted "
                     "unchecked (--state-crc auto on loopback); a robot stamps every state"]


@pytest.mark.parametrize("runtime", [dict(local_only=False), dict(state_crc="on")])
def test_unstamped_states_off_loopback_are_named_never_no_state(g1, runtime):
    sim, rt, lines, _ = _pair(g1, connect_timeout_s=0.2, **runtime)
    clock = [0.0]

    def sleep(seconds):  # the robot publishes while the runtime waits
        sim.step(clock[0])
        clock[0] += sim.dt

    with pytest.raises(RuntimeFault) as e:
        rt.wait_for_robot(clock=lambda: clock[0], sleep=sleep)
    msg = str(e.value)
    n = rt.states.counts.messages
    assert n > 40 and rt.states.counts.unstamped == n and rt.state is None
    assert msg == (f"no valid rt/lowstate from the robot in 0.2 s: every state had its CRC field 0 (unstamped, as "
                   f"unitree_mujoco publishes it): for a simulator pass --state-crc off (on loopback --state-crc auto "
                   f"accepts them) (on rt/lowstate: {n} messages, {n} with CRC 0 (unstamped) dropped)")
    assert lines == ["rt/lowstate with its CRC field 0 (unstamped, as unitree_mujoco publishes it): dropped, further "
                     "ones counted; a robot stamps every state; for a simulator pass --state-crc off"]


def test_state_crc_off_checks_nothing():
    f = StateFilter(M.HG_LOW_STATE, "off", local_only=False, say=Lines())
    msg = M.new_state(M.HG)
    msg["crc"] = 12345
    assert f.accept(msg) and f.counts.accepted == 1


def test_a_zero_crc_after_stamped_states_is_a_bad_crc():
    lines = Lines()
    f = StateFilter(M.HG_LOW_STATE, "auto", local_only=True, say=lines)
    msg = stamp_crc(M.new_state(M.HG))
    assert f.accept(msg)
    msg["tick"] = 9
    msg["crc"] = 0
    assert not f.accept(msg) and f.counts.bad_crc == 1 and f.counts.unstamped == 0
    wrong = stamp_crc(M.new_state(M.GO))
    assert not f.accept(wrong) and f.counts.wrong_type == 1
    assert lines == ["rt/lowstate with a bad CRC (0x00000000): dropped; further ones are counted",
                     "rt/lowstate of another message layout (1180 bytes; this runtime reads 2092-byte states): dropped; "
                     "check --robot"]
    assert f.counts.describe() == "3 messages, 1 with a bad CRC, 1 of another message layout, 1 accepted"


def test_nothing_at_all_says_zero_messages(g1):
    spec, policy = g1
    rt = RobotRuntime(spec, g1_model(spec), policy, robot_def("g1"), LocalBus().endpoint(),
                      RuntimeConfig(connect_timeout_s=0.05))
    with pytest.raises(RuntimeFault, match=r"^no rt/lowstate from the robot in 0.05 s: is the robot .* running .*\? "
                                           r"\(on rt/lowstate: 0 messages\)$"):
        rt.wait_for_robot()


def test_stale_line_says_what_arrived_since(g1):
    sim, rt, lines, wrapped = _pair(g1, on=False)
    lockstep(rt, sim, 2.4)
    assert rt.mode == "policy"
    wrapped.on = True  # stamped states first, then CRC 0: corruption, not a simulator
    lockstep(rt, sim, 0.3, t0=2.4)
    assert rt.mode == "fault"
    assert lines[-1].startswith("no fresh rt/lowstate for 0.1") and lines[-1].endswith(
        "with a bad CRC): damping")
    assert "; since then on rt/lowstate: " in lines[-1] and " messages, " in lines[-1]


def test_unstamped_states_over_dds_on_loopback(g1):
    dds = pytest.importorskip("unilab_robot.dds")
    from unilab_robot.dds_config import DdsConfig

    spec, policy = g1
    config = DdsConfig(domain_id=DOMAIN)
    robot = dds.DdsTransport(config, {M.TOPIC_STATE: M.HG_LOW_STATE}, publish=(M.TOPIC_STATE,), subscribe=())
    me = dds.DdsTransport(config, {M.TOPIC_STATE: M.HG_LOW_STATE, M.TOPIC_ODOM: M.ODOM, M.TOPIC_CMD: M.HG_LOW_CMD},
                          publish=(M.TOPIC_CMD,), subscribe=(M.TOPIC_STATE, M.TOPIC_ODOM))
    lines = Lines()
    odom_pub = dds.DdsTransport(config, {M.TOPIC_ODOM: M.ODOM}, publish=(M.TOPIC_ODOM,), subscribe=())
    rt = RobotRuntime(spec, g1_model(spec), policy, robot_def("g1"), me,
                      RuntimeConfig(connect_timeout_s=10.0, local_only=config.local_only), say=lines)
    state = M.new_state(M.HG)  # crc stays 0, as unitree_mujoco's
    # (the G1 policy observes the base velocity: the runtime waits for odometry too, published stamped here)

    def sleep(seconds):
        robot.publish(M.TOPIC_STATE, state)
        odom_pub.publish(M.TOPIC_ODOM, stamp_crc(np.zeros((), M.ODOM)))
        time.sleep(0.01)

    rt.wait_for_robot(sleep=sleep)
    assert rt.state is not None and int(rt.state["crc"]) == 0 and rt.states.counts.unstamped == 0
    assert lines and lines[0].startswith("rt/lowstate arrives with its CRC field 0")
    for t in (robot, me, odom_pub):
        t.close()
