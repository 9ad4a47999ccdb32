"""The 40-byte ``wireless_remote`` field of ``LowState_``: Unitree's handheld remote, and a velocity command from it.

Layout (Unitree's ``xRockerBtnDataStruct`` in ``unitree_sdk2``'s ``wireless_controller`` /
``unitree_legged_sdk``'s joystick header; little-endian): bytes 0-1 head, 2-3 the buttons
(a 16-bit field, :data:`BUTTONS` gives the bits), then five float32: ``lx`` (4-7), ``rx``
(8-11), ``ry`` (12-15), ``L2`` (16-19), ``ly`` (20-23); bytes 24-39 reserved. Sticks are in
``[-1, 1]``, up and right positive.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

SIZE = 40
_FORMAT = "<2sH5f16x"
#: button name -> bit of the 16-bit field
BUTTONS = {"R1": 0, "L1": 1, "start": 2, "select": 3, "R2": 4, "L2": 5, "F1": 6, "F2": 7,
           "A": 8, "B": 9, "X": 10, "Y": 11, "up": 12, "right": 13, "down": 14, "left": 15}


@dataclass(frozen=True)
class Remote:
    """The remote's sticks (``[-1, 1]``) and the names of the buttons held."""

    lx: float = 0.0
    ly: float = 0.0
    rx: float = 0.0
    ry: float = 0.0
    buttons: frozenset = frozenset()


def pack_remote(remote: Remote) -> np.ndarray:
    """The 40 bytes (uint8) of ``remote``."""
    bits = 0
    for name in remote.buttons:
        bits |= 1 << BUTTONS[name]
    raw = struct.pack(_FORMAT, b"\x55\x51", bits, remote.lx, remote.rx, remote.ry, 0.0, remote.ly)
    return np.frombuffer(raw, dtype=np.uint8).copy()


def unpack_remote(raw) -> Remote:
    """The remote in the 40 bytes ``raw``; non-finite sticks read as 0, sticks clipped to ``[-1, 1]``."""
    _, bits, lx, rx, ry, _l2, ly = struct.unpack(_FORMAT, bytes(np.asarray(raw, dtype=np.uint8)))
    stick = [float(np.clip(v, -1.0, 1.0)) if np.isfinite(v) else 0.0 for v in (lx, ly, rx, ry)]
    held = frozenset(n for n, b in BUTTONS.items() if bits >> b & 1)
    return Remote(stick[0], stick[1], stick[2], stick[3], held)


def velocity_command(remote: Remote, ranges, deadzone: float = 0.05) -> np.ndarray:
    """``(vx, vy, yaw_rate)`` from the sticks, as Unitree's examples map them: left stick up = forward,
    left stick left = +vy, right stick left = +yaw; each stick's full travel reaches the spec's
    command range on that side (``ranges``: ``((lo, hi), ...)``), inside ``deadzone`` it reads 0."""
    out = np.zeros(3)
    for i, value in enumerate((remote.ly, -remote.lx, -remote.rx)):
        if abs(value) < deadzone:
            continue
        lo, hi = ranges[i]
        out[i] = value * (hi if value > 0 else -lo)
    return out
