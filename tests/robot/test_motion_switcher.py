"""The robot's built-in controller: checked, released and confirmed before any low-level command (Unitree's
motion_switcher service, emulated by the simulated robot), on the in-process wire and over DDS on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from robot_support import G1_POLICY, Lines, g1_model, lockstep
from unilab_robot import api
from unilab_robot.motion_switcher import (API_CHECK_MODE, API_RELEASE_MODE, TOPIC_REQUEST, TOPIC_RESPONSE,
                                               MotionSwitcherClient, MotionSwitcherError, release_built_in)
from unilab_robot.motors import robot_def
from unilab_robot.runtime import RobotRuntime, RuntimeConfig
from unilab_robot.sim import SimConfig, SimRobot
from unilab_robot.wire import LocalBus

DOMAIN = 200 + os.getpid() % 30  # domains of this test run's own (test_robot_dds uses 100..199)


def _sim(g1, bus, lines, **config):
    spec, _ = g1
    return SimRobot(spec, g1_model(spec), robot_def("g1"), bus.endpoint(), SimConfig(**config), say=lines)


def _client(sim, bus, timeout_s=2.0):
    """A client whose waiting steps the simulated robot (one virtual clock)."""
    clock = [0.0]

    def sleep(seconds):
        for _ in range(max(1, round(seconds / sim.dt))):
            sim.step(clock[0])
            clock[0] += sim.dt

    return MotionSwitcherClient(bus.endpoint(), timeout_s=timeout_s, clock=lambda: clock[0], sleep=sleep)


def test_release_sequence_checks_releases_and_confirms(g1):
    bus, lines = LocalBus(), Lines()
    sim = _sim(g1, bus, lines, built_in="normal", release_delay_s=0.5)
    assert sim.service.active
    assert release_built_in(_client(sim, bus), lines, robot="g1", wait_s=0.2) == "normal"
    assert not sim.service.active and sim.summary()["built_in"] is None
    assert lines == [
        "motion_switcher: CheckMode: built-in controller 'normal' active: releasing it (ReleaseMode, api 1003)",
        "motion_switcher: built-in controller released: motors in damping (Kp 0, Kd 1) until a valid rt/lowcmd",
        "motion_switcher: released 'normal'; CheckMode confirms no built-in controller: low-level commands from now on"]
    a = sim.driver.actuators  # released: damping, as a G1 in debug mode
    assert (sim.model.actuator_gainprm[a, 0] == 0).all() and (sim.model.actuator_biasprm[a, 2] == -1.0).all()


def test_no_built_in_controller_is_one_line(g1):
    bus, lines = LocalBus(), Lines()
    sim = _sim(g1, bus, lines)
    assert release_built_in(_client(sim, bus), lines) == ""
    assert lines == ["motion_switcher: CheckMode: no built-in controller active (low-level mode): low-level commands allowed"]


def test_a_controller_that_stays_is_refused_in_one_line(g1):
    bus, lines = LocalBus(), Lines()
    sim = _sim(g1, bus, lines, built_in="ai", release_delay_s=1e9)  # never lets go
    with pytest.raises(MotionSwitcherError) as e:
        release_built_in(_client(sim, bus), lines, robot="g1", tries=3, wait_s=0.1)
    msg = str(e.value)
    assert msg.startswith("the built-in controller 'ai' is still active after 3 ReleaseMode calls (CheckMode still "
                          "answers 'ai'): low-level commands refused, none sent")
    assert "L2+R2" in msg and "\n" not in msg  # the G1's debug mode, by hand
    assert sim.service.active and sim.stats.commands == 0


def test_no_service_is_refused_in_one_line():
    client = MotionSwitcherClient(LocalBus().endpoint(), timeout_s=0.05, poll_s=0.01)
    with pytest.raises(MotionSwitcherError, match=r"did not answer CheckMode \(api 1001\) in 0.05 s.*no low-level "
                                                  r"command sent.*--motion-switcher off"):
        release_built_in(client, print)


def test_service_answers_as_unitrees(g1):
    bus, lines = LocalBus(), Lines()
    sim = _sim(g1, bus, lines, built_in="normal", release_delay_s=0.0)
    me = bus.endpoint()
    me.publish(TOPIC_REQUEST, api.Request(id=7, api_id=API_CHECK_MODE))
    me.publish(TOPIC_REQUEST, api.Request(id=8, api_id=API_RELEASE_MODE))
    me.publish(TOPIC_REQUEST, api.Request(id=9, api_id=4242))
    sim.step()
    check, release, unknown = me.take(TOPIC_RESPONSE)
    assert (check.id, check.api_id, check.code, json.loads(check.data)) == (7, 1001, 0, {"form": "0", "name": "normal"})
    assert (release.id, release.code) == (8, 0) and (unknown.id, unknown.code) == (9, 3203)


def test_built_in_controller_holds_and_ignores_low_level_commands(g1):
    spec, policy = g1
    bus, lines = LocalBus(), Lines()
    sim = _sim(g1, bus, lines, built_in="normal")
    q0 = sim.data.qpos[sim.driver.qadr].copy()
    rt = RobotRuntime(spec, g1_model(spec), policy, robot_def("g1"), bus.endpoint(),
                      RuntimeConfig(command="fixed", fixed_command=(0.5, 0.0, 0.0)), say=lines)
    lockstep(rt, sim, 3.0)  # a runtime that never asked: everything it sends is ignored
    assert sim.stats.commands == 0 and sim.stats.ignored == 149 and sim.on_gantry  # every command (none at the first tick)
    assert lines == ["rt/lowcmd while the built-in controller 'normal' holds the robot: ignored (release it first: "
                     "motion_switcher ReleaseMode); further ones are counted"]
    assert np.abs(sim.data.qpos[sim.driver.qadr] - q0).max() < 0.05  # held where it stood


def _unilab(*args):
    return [sys.executable, "-c", "import sys; from trainers.cli import main; sys.exit(main())", *args]


def test_run_releases_the_sims_built_in_controller_over_dds(tmp_path):
    pytest.importorskip("cyclonedds")
    d = str(DOMAIN)
    sim = subprocess.Popen(_unilab("robot", "sim", G1_POLICY, "--domain", d, "--duration", "9", "--built-in", "normal",
                                   "--summary", str(tmp_path / "sim.json")),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run = subprocess.run(_unilab("robot", "run", G1_POLICY, "--domain", d, "--motion-switcher", "on", "--command", "fixed",
                                 "--duration", "3", "--connect-timeout", "20"), capture_output=True, text=True, timeout=60)
    sim.communicate(timeout=60)
    assert run.returncode == 0, run.stderr
    lines = [ln for ln in run.stderr.splitlines() if "motion_switcher" in ln]
    assert lines == [
        "unilab robot run: motion_switcher: CheckMode: built-in controller 'normal' active: releasing it (ReleaseMode, api 1003)",
        "unilab robot run: motion_switcher: released 'normal'; CheckMode confirms no built-in controller: low-level "
        "commands from now on"], run.stderr
    robot = json.loads((tmp_path / "sim.json").read_text())
    assert robot["ignored_cmd"] == 0 and robot["commands"] > 100 and robot["built_in"] is None  # nothing sent before


def test_run_refuses_while_the_controller_stays_over_dds(tmp_path):
    pytest.importorskip("cyclonedds")
    d = str(DOMAIN + 1)
    sim = subprocess.Popen(_unilab("robot", "sim", G1_POLICY, "--domain", d, "--duration", "12", "--built-in", "ai",
                                   "--release-delay", "1000", "--summary", str(tmp_path / "sim.json")),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run = subprocess.run(_unilab("robot", "run", G1_POLICY, "--domain", d, "--motion-switcher", "on",
                                 "--connect-timeout", "20"), capture_output=True, text=True, timeout=60)
    sim.communicate(timeout=60)
    assert run.returncode == 2
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("unilab robot: the built-in controller 'ai' is still active after 5 ReleaseMode calls") and \
        "none sent" in last and "L2+R2" in last
    robot = json.loads((tmp_path / "sim.json").read_text())
    assert robot["ignored_cmd"] == 0 and robot["commands"] == 0 and robot["built_in"] == "ai"  # not one command sent
