"""The window's text overlays, per command kind: the keys (top right) and the command and state (top left).

Each is ``(font, gridpos, left column, right column)``, what ``Handle.set_texts`` takes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import mujoco

from unilab_robot.deploy.episodes import distance_to_target

from .keys import TARGET_STEP, VELOCITY_STEP

if TYPE_CHECKING:
    from .player import Player


def keys_overlay(kind: str) -> tuple:
    """The window's key help, ``(font, gridpos, keys, what they do)`` for ``Handle.set_texts``,
    top right (the command and speeds are top left, the robot below); the step sizes are the
    ones :func:`~trainers.play.keys.apply_key` uses."""
    if kind == "reach_target":
        step = f"{TARGET_STEP * 100:.0f} cm"
        keys = "Up / Down\nLeft / Right\nPgUp / PgDn\nCtrl + right-drag\nR"
        does = f"target x +/- {step}\ntarget y +/- {step}\ntarget z +/- {step}\nmove the target sphere\nreset the arm"
    elif kind == "lift":
        keys, does = "PgUp / PgDn\nR", f"lift height +/- {TARGET_STEP * 100:.0f} cm\nnew cube, reset the arm"
    elif kind == "motion":
        keys, does = "R", "the clip again from its start"
    else:
        vx, vy, yaw = VELOCITY_STEP
        keys = "Up / Down\nLeft / Right\nPgUp / PgDn\nSpace\nR"
        does = (f"forward speed +/- {vx:g} m/s\nsideways speed +/- {vy:g} m/s\nyaw rate +/- {yaw:g} rad/s\n"
                f"stop (zero command)\nreset the robot")
    return (mujoco.mjtFontScale.mjFONTSCALE_100, mujoco.mjtGridPos.mjGRID_TOPRIGHT, keys, does)


def status_overlay(player: Player, fallen: bool) -> tuple:
    """The command and what the robot does, top left: velocity command and base velocity (and a
    fall); the grasp's lift height, cube height, hold time and result; the reach target and distance."""
    c = player.command
    if player.state.motion is not None:  # motion tracking: the clip, the frame, the end
        m, io = player.state.motion, player.io.motion
        names = "clip\nframe\nphase\nfallen"
        end = " (end: holding it)" if io.at_end(m) else ""
        values = (f"{io.names[m.clip]}\n{m.frame} / {io.length(m.clip) - 1}{end}\n{io.ref_phase(m):.2f}\n"
                  f"{'yes (R: reset)' if fallen else 'no'}")
    elif player.spec.command.kind == "velocity":
        v = player.base_velocity()
        names = "command vx\ncommand vy\ncommand yaw\nbase vx\nbase vy\nbase yaw\nfallen"
        values = f"{c[0]:+.2f} m/s\n{c[1]:+.2f} m/s\n{c[2]:+.2f} rad/s\n{v[0]:+.2f} m/s\n{v[1]:+.2f} m/s\n{v[2]:+.2f} rad/s\n{'yes (R: reset)' if fallen else 'no'}"
    elif player.lift is not None:
        cube, lift = player.io.grasp.object_pos(player.data), player.lift
        names = "lift height\ncube height\nheld for\nresult"
        result = "lifted (R: reset)" if lift.success else "off the table (R: reset)" if lift.failed else "-"
        values = f"{c[0]:.3f} m\n{cube[2]:.3f} m\n{lift.hold_steps} steps\n{result}"
    else:
        d = distance_to_target(player.io, player.data, player.state)
        names = "target x\ntarget y\ntarget z\ndistance"
        values = f"{c[0]:+.3f} m\n{c[1]:+.3f} m\n{c[2]:+.3f} m\n{d * 100:.1f} cm"
    return (mujoco.mjtFontScale.mjFONTSCALE_150, mujoco.mjtGridPos.mjGRID_TOPLEFT, names, values)
