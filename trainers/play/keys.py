"""The window's keyboard, per command kind: what a key press does to the command, and the idle start.

Velocity (joystick): arrows and PageUp/PageDown step ``(vx, vy, yaw rate)`` within the
command ranges, Space stops. Reach: they move the target. Lift (the grasp): PageUp/PageDown
move the lift height. Motion tracking: ``R`` starts the clip again (no other key). ``R`` (or Backspace)
resets, keeping the command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from unilab_robot.keyboard import VELOCITY_STEP, step_velocity

if TYPE_CHECKING:
    from .player import Player

GLFW_KEYS = {"right": 262, "left": 263, "down": 264, "up": 265, "page_up": 266, "page_down": 267, "space": 32,
             "r": 82, "backspace": 259}
KEYS_HELP = ("joystick: Up/Down vx, Left/Right vy, PageUp/PageDown yaw rate, Space stop, R reset; "
             "reach: arrows move the target in x/y, PageUp/PageDown in z (or Ctrl + right-drag the target sphere), "
             "R reset; grasp: PageUp/PageDown the lift height, R a new cube")
TARGET_STEP = 0.02


def apply_key(player: Player, key: int) -> None:
    """Change the command (or the target) for one key press; ``R`` resets keeping the command."""
    k = GLFW_KEYS
    if key in (k["r"], k["backspace"]):
        player.reset(command=player.command.copy())
        return
    c = player.command.copy()
    if player.spec.command.kind == "velocity":
        axis_step = {k["up"]: (0, 1), k["down"]: (0, -1), k["left"]: (1, 1), k["right"]: (1, -1),
                     k["page_up"]: (2, 1), k["page_down"]: (2, -1)}
        if key == k["space"]:
            c[:] = 0.0
        elif key in axis_step:
            c = step_velocity(c, *axis_step[key], player.spec.command.ranges)
        else:
            return
    elif player.spec.command.kind == "motion":  # a clip: nothing to steer
        return
    elif player.spec.command.kind == "lift":  # the grasp: PageUp/PageDown move the lift height
        if key not in (k["page_up"], k["page_down"]):
            return
        c[0] += TARGET_STEP if key == k["page_up"] else -TARGET_STEP
    else:
        moves = {k["up"]: (0, 1), k["down"]: (0, -1), k["left"]: (1, 1), k["right"]: (1, -1),
                 k["page_up"]: (2, 1), k["page_down"]: (2, -1)}
        if key not in moves:
            return
        axis, sign = moves[key]
        c[axis] += sign * TARGET_STEP
    player.set_command(c)


def idle_command(player: Player) -> np.ndarray:
    """The command the window starts on, so the robot waits for the keyboard: zero velocity
    (a legged robot stands), or a reach target where the end effector already is (the arm
    holds still)."""
    if player.spec.command.kind == "reach_target":
        return np.array(player.io.ee_pos(player.data), dtype=np.float64)
    if player.spec.command.kind == "lift":  # the grasp has no idle command: it picks the cube at training's height
        return np.array([player.spec.command.ranges[0][0]])
    return np.zeros(len(player.spec.command.names))


def start_idle(player: Player) -> None:
    """A new episode on :func:`idle_command` (training's reset randomization, no random command)."""
    player.reset()
    player.set_command(idle_command(player))
