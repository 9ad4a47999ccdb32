"""A terminal keyboard as the runtime's velocity command (``unilab robot run --command keyboard``).

A robot program runs in a terminal, often over SSH, with no window: :class:`TerminalKeyboard`
reads single key presses from a terminal in cbreak mode on a background thread (the control
loop never waits for a key) and hands them to a :class:`KeyboardCommand`, which the runtime
reads once a control step. Keys (:data:`KEYS_HELP`):

* ``w``/``s`` or Up/Down: forward speed ``vx`` +/- 0.1 m/s;
* ``a``/``d`` or Left/Right: sideways speed ``vy`` +/- 0.1 m/s (left is +);
* ``q``/``e``: yaw rate +/- 0.2 rad/s (``q`` turns left);
* Space: stop (zero command, the robot stands);
* ``x``: damping now (the runtime's latched fault mode: Kp 0; restart the runtime to walk again).

Each axis is held within the deploy spec's command range. The terminal's settings are restored
when the reader closes (also on Ctrl-C).
"""

from __future__ import annotations

import os
import select
import sys
import threading
from typing import Sequence

import numpy as np

#: one key press's step on (vx, vy, yaw rate): m/s, m/s, rad/s (as `unilab play`'s window)
VELOCITY_STEP = (0.1, 0.1, 0.2)
#: key -> (axis, sign) of a velocity step
STEP_KEYS = {"w": (0, 1), "s": (0, -1), "up": (0, 1), "down": (0, -1),
             "a": (1, 1), "d": (1, -1), "left": (1, 1), "right": (1, -1),
             "q": (2, 1), "e": (2, -1)}
STOP_KEY, DAMP_KEY = " ", "x"
KEYS_HELP = "w/s or Up/Down vx, a/d or Left/Right vy, q/e yaw rate, Space stop, x damping"
_ARROWS = {"\x1b[A": "up", "\x1b[B": "down", "\x1b[C": "right", "\x1b[D": "left",
           "\x1bOA": "up", "\x1bOB": "down", "\x1bOC": "right", "\x1bOD": "left"}


class KeyboardError(RuntimeError):
    """The keyboard cannot be read (no terminal); the message says what to use instead."""


def step_velocity(command: np.ndarray, axis: int, sign: int, ranges: Sequence[Sequence[float]]) -> np.ndarray:
    """``command`` with one step of :data:`VELOCITY_STEP` on ``axis`` (``sign`` +1/-1), within ``ranges[axis]``."""
    out = np.array(command, dtype=np.float64)
    lo, hi = ranges[axis]
    out[axis] = float(np.clip(round(out[axis] + sign * VELOCITY_STEP[axis], 3), lo, hi))
    return out


def split_keys(text: str) -> list[str]:
    """The key names in ``text`` as a terminal sends them: arrow escape sequences become
    ``up``/``down``/``left``/``right``, letters are lower-cased, other escapes are dropped."""
    keys, i = [], 0
    while i < len(text):
        if text[i] == "\x1b":
            arrow = _ARROWS.get(text[i:i + 3])
            if arrow is not None:
                keys.append(arrow)
            i += 3 if arrow is not None else 1
            continue
        keys.append(text[i].lower())
        i += 1
    return keys


class KeyboardCommand:
    """The velocity command the keys set (thread-safe): starts at zero, the robot stands.

    ``ranges``: the deploy spec's ``command.ranges`` (``((vx_lo, vx_hi), (vy_lo, vy_hi), (yaw_lo, yaw_hi))``).
    """

    def __init__(self, ranges: Sequence[Sequence[float]]) -> None:
        if len(ranges) != 3:
            raise ValueError(f"the keyboard sets a velocity command (vx, vy, yaw rate): 3 ranges, got {len(ranges)}")
        self.ranges = tuple((float(lo), float(hi)) for lo, hi in ranges)
        # standing still, or the nearest command the ranges allow
        self._still = np.clip(np.zeros(3), [r[0] for r in self.ranges], [r[1] for r in self.ranges])
        self._command = self._still.copy()
        self._damp = False
        self._lock = threading.Lock()

    def press(self, key: str) -> bool:
        """Apply one key (a name from :func:`split_keys`); ``False`` for a key that does nothing."""
        with self._lock:
            if key in STEP_KEYS:
                self._command = step_velocity(self._command, *STEP_KEYS[key], self.ranges)
            elif key == STOP_KEY:
                self._command = self._still.copy()
            elif key == DAMP_KEY:
                self._damp = True
            else:
                return False
        return True

    def command(self) -> np.ndarray:
        """The current ``(vx, vy, yaw_rate)`` (a copy)."""
        with self._lock:
            return self._command.copy()

    @property
    def damp_requested(self) -> bool:
        """Whether ``x`` was pressed (the runtime latches damping)."""
        return self._damp


class TerminalKeyboard:
    """Read key presses from the terminal ``fd`` (default: stdin) into ``keys`` on a daemon thread.

    Use as a context manager (or :meth:`start` / :meth:`close`): the terminal is put in cbreak
    mode (keys arrive one at a time, unechoed; Ctrl-C still interrupts) and restored on close.
    Raises :class:`KeyboardError` when ``fd`` is not a terminal.
    """

    def __init__(self, keys: KeyboardCommand, fd: int | None = None, on_key=None) -> None:
        self.keys, self.on_key = keys, on_key
        self.help = KEYS_HELP
        self.fd = sys.stdin.fileno() if fd is None else fd
        if not os.isatty(self.fd):
            raise KeyboardError("--command keyboard reads key presses from a terminal, and stdin is not one "
                                "(run it in a terminal, or use --command remote, fixed or script)")
        self._saved = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read_loop, name="unilab-keyboard", daemon=True)

    def start(self) -> "TerminalKeyboard":
        import termios
        import tty

        self._saved = termios.tcgetattr(self.fd)
        tty.setcbreak(self.fd)
        self._thread.start()
        return self

    def _read_loop(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if not ready:
                continue
            try:
                chunk = os.read(self.fd, 64)
            except OSError:
                return
            if not chunk:
                return
            for key in split_keys(chunk.decode("utf-8", "ignore")):
                if self.keys.press(key) and self.on_key is not None:
                    self.on_key(key, self.keys.command())

    def close(self) -> None:
        """Stop reading and restore the terminal's settings."""
        import termios

        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=1.0)
        if self._saved is not None:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
            self._saved = None

    def __enter__(self) -> "TerminalKeyboard":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()
