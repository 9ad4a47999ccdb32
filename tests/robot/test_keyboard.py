"""The terminal keyboard as the runtime's command source: keys by hand, a real pseudo-terminal, the runtime obeying it."""

from __future__ import annotations

import os
import pty
import termios
import time

import numpy as np
import pytest

from robot_support import Lines, g1_model, lockstep
from unilab_robot.keyboard import KeyboardCommand, KeyboardError, TerminalKeyboard, split_keys
from unilab_robot.motors import robot_def
from unilab_robot.runtime import RobotRuntime, RuntimeConfig
from unilab_robot.sim import SimConfig, SimRobot
from unilab_robot.wire import LocalBus

RANGES = ((-0.6, 1.0), (-0.5, 0.5), (-1.0, 1.0))


def test_keys_step_each_axis_within_the_spec_ranges():
    keys = KeyboardCommand(RANGES)
    for key in "www":
        assert keys.press(key)
    keys.press("s")
    np.testing.assert_allclose(keys.command(), [0.2, 0.0, 0.0])
    for _ in range(10):
        keys.press("d")
    keys.press("q")
    np.testing.assert_allclose(keys.command(), [0.2, -0.5, 0.2])  # vy held at its range's end
    for _ in range(20):
        keys.press("down")
    np.testing.assert_allclose(keys.command()[0], -0.6)
    assert not keys.press("z") and not keys.damp_requested
    keys.press(" ")
    np.testing.assert_allclose(keys.command(), [0.0, 0.0, 0.0])
    keys.press("x")
    assert keys.damp_requested


def test_terminal_bytes_become_key_names():
    assert split_keys("w\x1b[A\x1b[DqX ") == ["w", "up", "left", "q", "x", " "]
    assert split_keys("\x1b[1;5A") == ["[", "1", ";", "5", "a"]  # an unknown escape loses its ESC only
    assert split_keys("\x1bOC\x1b[B") == ["right", "down"]


def test_a_pseudo_terminal_drives_the_command_and_is_restored():
    master, slave = pty.openpty()
    try:
        before = termios.tcgetattr(slave)
        seen = []
        keys = KeyboardCommand(RANGES)
        with TerminalKeyboard(keys, fd=slave, on_key=lambda key, c: seen.append(key)):
            assert not termios.tcgetattr(slave)[3] & termios.ICANON  # cbreak: one key at a time
            os.write(master, b"ww\x1b[Cq")
            deadline = time.monotonic() + 30.0  # a hang guard: the reader thread may wait for a busy machine's cores
            while len(seen) < 4 and time.monotonic() < deadline:
                time.sleep(0.01)
        assert seen == ["w", "w", "right", "q"]
        np.testing.assert_allclose(keys.command(), [0.2, -0.1, 0.2])
        assert termios.tcgetattr(slave) == before
    finally:
        os.close(master)
        os.close(slave)


def test_a_pipe_is_not_a_keyboard():
    read, write = os.pipe()
    try:
        with pytest.raises(KeyboardError, match="stdin is not one.*--command remote, fixed or script"):
            TerminalKeyboard(KeyboardCommand(RANGES), fd=read)
    finally:
        os.close(read)
        os.close(write)


def test_the_runtime_walks_at_the_keyboard_command_and_damps_on_x(g1):
    spec, policy = g1
    bus, lines = LocalBus(), Lines()
    keys = KeyboardCommand(spec.command.ranges)
    sim = SimRobot(spec, g1_model(spec), robot_def("g1"), bus.endpoint(), SimConfig(), say=lines)
    rt = RobotRuntime(spec, g1_model(spec), policy, robot_def("g1"), bus.endpoint(),
                      RuntimeConfig(command="keyboard"), say=lines, keyboard=keys)
    lockstep(rt, sim, 2.2)
    assert rt.mode == "policy"
    np.testing.assert_allclose(rt.ctl.command, [0.0, 0.0, 0.0])  # the robot stands until a key
    for _ in range(5):
        keys.press("w")
    lockstep(rt, sim, 0.1, t0=2.2)
    np.testing.assert_allclose(rt.ctl.command, [0.5, 0.0, 0.0])
    keys.press("x")
    lockstep(rt, sim, 0.1, t0=2.3)
    assert rt.mode == "fault" and lines[-1] == "damping asked from the keyboard (x): damping"
    mc = rt.cmd_msg["motor_cmd"][:29]
    assert (mc["kp"] == 0).all() and np.allclose(mc["kd"], rt.damping_kd)


def test_the_keyboard_source_needs_a_keyboard(g1):
    spec, policy = g1
    with pytest.raises(ValueError, match="needs a KeyboardCommand"):
        RobotRuntime(spec, g1_model(spec), policy, robot_def("g1"), LocalBus().endpoint(), RuntimeConfig(command="keyboard"))
