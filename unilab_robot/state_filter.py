"""Which ``rt/lowstate`` messages the runtime acts on, and a count of everything that arrived.

A robot stamps every ``LowState_`` with its CRC (:mod:`unilab_robot.crc`). Unitree's own
simulator (``unitree_mujoco``) leaves the ``crc`` field 0 in every message. ``--state-crc`` says
what to do with those *unstamped* states:

* ``auto`` (default): accept them unchecked when the bridge is on loopback only (where a simulator
  runs), as long as every state so far was unstamped; drop them on a robot's network;
* ``on``: check every CRC; an unstamped state is dropped (and named as such, not as a bad CRC);
* ``off``: check no CRC at all.

Whatever is dropped is counted by kind (:class:`StateCounts`: messages, bad CRC, unstamped, another
layout), so a "no state" line can say what did arrive. Each kind's first drop is one line.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Callable

import numpy as np

from unilab_robot.crc import crc_ok

STATE_CRC_MODES = ("auto", "on", "off")
SIMULATOR = "as unitree_mujoco publishes it"


def accepts_unstamped(mode: str, local_only: bool) -> bool:
    """Whether ``--state-crc mode`` accepts states whose CRC field is 0, with the bridge ``local_only`` or not."""
    if mode not in STATE_CRC_MODES:
        raise ValueError(f"--state-crc must be one of {', '.join(STATE_CRC_MODES)}, got {mode!r}")
    return mode == "off" or (mode == "auto" and local_only)


@dataclass
class StateCounts:
    """Messages that arrived on ``rt/lowstate``, and of those: accepted, a bad CRC, CRC 0 and dropped, another layout."""

    messages: int = 0
    accepted: int = 0
    bad_crc: int = 0
    unstamped: int = 0
    wrong_type: int = 0

    def minus(self, other: "StateCounts") -> "StateCounts":
        return StateCounts(**{f.name: getattr(self, f.name) - getattr(other, f.name) for f in fields(self)})

    def describe(self) -> str:
        """E.g. ``250 messages, 250 with CRC 0 (unstamped) dropped``; ``0 messages`` when nothing arrived."""
        parts = [f"{self.messages} message{'s' if self.messages != 1 else ''}"]
        if self.bad_crc:
            parts.append(f"{self.bad_crc} with a bad CRC")
        if self.unstamped:
            parts.append(f"{self.unstamped} with CRC 0 (unstamped) dropped")
        if self.wrong_type:
            parts.append(f"{self.wrong_type} of another message layout")
        if self.accepted and self.accepted != self.messages:
            parts.append(f"{self.accepted} accepted")
        return ", ".join(parts)


class StateFilter:
    """Decides, message by message, whether the runtime acts on a state of ``dtype``; counts and says (once
    per kind) what it drops. ``local_only``: the bridge cannot reach beyond this machine (loopback)."""

    def __init__(self, dtype: np.dtype, mode: str = "auto", local_only: bool = True,
                 say: Callable[[str], None] = print) -> None:
        self.dtype, self.mode, self.say = dtype, mode, say
        self.unstamped_ok = accepts_unstamped(mode, local_only)
        self.counts = StateCounts()
        self._at_last_accept = StateCounts()
        self._stamped_seen = False
        self._said: set[str] = set()

    def since_last_accepted(self) -> StateCounts:
        """What arrived since the last state acted on."""
        return self.counts.minus(self._at_last_accept)

    def _once(self, kind: str, line: str) -> None:
        if kind not in self._said:
            self._said.add(kind)
            self.say(line)

    def accept(self, msg: np.ndarray) -> bool:
        """Whether to act on ``msg`` (counted either way)."""
        c = self.counts
        c.messages += 1
        if msg.dtype != self.dtype:
            c.wrong_type += 1
            self._once("type", f"rt/lowstate of another message layout ({msg.dtype.itemsize} bytes; this runtime reads "
                               f"{self.dtype.itemsize}-byte states): dropped; check --robot")
            return False
        if self.mode != "off":
            crc = int(msg["crc"])
            if crc_ok(msg):
                self._stamped_seen = True
            elif crc == 0 and not self._stamped_seen:
                if not self.unstamped_ok:
                    c.unstamped += 1
                    self._once("unstamped", f"rt/lowstate with its CRC field 0 (unstamped, {SIMULATOR}): dropped, "
                                            f"further ones counted; a robot stamps every state; for a simulator pass "
                                            f"--state-crc off")
                    return False
                self._once("unstamped", f"rt/lowstate arrives with its CRC field 0 (unstamped, {SIMULATOR}): accepted "
                                        f"unchecked (--state-crc {self.mode} on loopback); a robot stamps every state")
            else:
                c.bad_crc += 1
                self._once("crc", f"rt/lowstate with a bad CRC (0x{crc:08x}): dropped; further ones are counted")
                return False
        c.accepted += 1
        self._at_last_accept = StateCounts(**vars(c))
        return True

    def hint(self) -> str:
        """What to do, judged from what arrived (for a "no state" line)."""
        c = self.counts
        if c.messages == 0:
            return "is the robot (or `unilab robot sim`) running on the same DDS domain and interface?"
        if c.unstamped == c.messages:
            return (f"every state had its CRC field 0 (unstamped, {SIMULATOR}): for a simulator pass --state-crc off "
                    f"(on loopback --state-crc auto accepts them)")
        if c.wrong_type:
            return "states of another message layout arrive: is --robot the robot on the wire?"
        return "states arrive with a wrong CRC: is --robot the robot on the wire (another layout gives another CRC)?"
