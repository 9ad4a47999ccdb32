"""Routing Ctrl-C (SIGINT), SIGTERM and SIGHUP to a training loop's handler, and back.

Every learner stops the same way (PPO, SAC / TD3, distillation, the SB3 adapter), through one
:class:`StopRequest`: the first signal asks the loop to stop at its next boundary (an iteration,
an env step) and says so, a second Ctrl-C raises ``KeyboardInterrupt`` at once, and while the run
saves (:attr:`StopRequest.saving`) a signal only says that the save is under way. Also here:
installing the handler and putting the previous ones back (:func:`route_stop_signals`), the exit
status a stopped run ends with (``128 + signal``: 130, 143, 129, as a shell reports a process the
signal killed) and :func:`say`, which prints a handler's message without letting a dead or busy
stream raise into the loop.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

#: the signals a training run treats as "stop and save" (SIGHUP: the terminal or ssh session went away)
STOP_SIGNALS = tuple(s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None)


def exit_status(signum: int | None) -> int:
    """The exit status of a run that ``signum`` stopped: ``128 + signum`` (130 for SIGINT, 143 for
    SIGTERM, 129 for SIGHUP); 130 when it is unknown (a ``KeyboardInterrupt`` from Python code)."""
    return 128 + int(signum) if signum else 128 + int(signal.SIGINT)


def say(message: str, file: TextIO | None = None) -> None:
    """Print ``message`` on stderr from a signal handler. A write can fail there (the stream's reader
    is gone, or the handler interrupted a write to the same stream: "reentrant call"); the message
    is advisory, and raising would end the loop where the handler interrupted it, so it is dropped."""
    try:
        print(message, file=file or sys.stderr, flush=True)
    except (OSError, RuntimeError, ValueError):
        pass


def route_stop_signals(handler: Callable) -> Callable[[], None]:
    """Install ``handler(signum, frame)`` for :data:`STOP_SIGNALS`; return the function that puts
    the previous handlers back. An ignored SIGHUP (``nohup``) stays ignored. Off the main thread
    (where Python cannot set handlers) nothing changes and the returned function does nothing."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    hup = getattr(signal, "SIGHUP", None)
    if previous.get(hup) is signal.SIG_IGN:  # nohup: the run is meant to outlive the terminal, so it keeps doing so
        del previous[hup]
    for s in previous:
        signal.signal(s, handler)

    def restore() -> None:
        for s, h in previous.items():
            if h is not None:  # None: a handler installed from C, which Python cannot reinstall
                signal.signal(s, h)
    return restore


class StopRequest:
    """Ctrl-C, SIGTERM or SIGHUP during a training run (the module docstring).

    ``boundary()`` names where the loop stops (``"iteration 12"``, ``"this env step"``): the first
    signal sets :attr:`requested` and says ``[unilab] SIGTERM: finishing <boundary>, then saving
    (Ctrl-C again to stop now)``; the loop checks :attr:`requested` at each boundary. A second
    Ctrl-C raises ``KeyboardInterrupt``. While :attr:`saving` is True, signals only say that the save
    is under way, so a checkpoint is never left half written. :attr:`signum` is the first signal
    (the exit status names it: :attr:`exit_status`).
    """

    def __init__(self, boundary: Callable[[], str] = lambda: "this step", file: TextIO | None = None):
        self.boundary, self.file = boundary, file
        self.requested = False
        self.saving = False
        self.signum: int | None = None

    @property
    def signal_name(self) -> str | None:
        """The first stop signal's name (``"SIGTERM"``), or ``None``."""
        return None if self.signum is None else signal.Signals(self.signum).name

    def request(self, signum: int | None = None) -> None:
        """Ask the loop to stop at its next boundary (what a signal does, without a message)."""
        self.requested = True
        self.signum = self.signum or signum

    def handle(self, signum: int, frame=None) -> None:
        """The signal handler :func:`stop_on_signals` installs."""
        name = signal.Signals(signum).name
        if self.saving:
            say(f"\n[unilab] {name}: saving the checkpoint and the learning curve, one moment", self.file)
            return
        if self.requested and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.request(signum)
        say(f"\n[unilab] {name}: finishing {self.boundary()}, then saving (Ctrl-C again to stop now)", self.file)

    def exit_status(self, interrupted: bool) -> int:
        """0 for a run that was not interrupted, else :func:`exit_status` of the first signal."""
        return exit_status(self.signum) if interrupted else 0


@contextmanager
def stop_on_signals(request: StopRequest) -> Iterator[StopRequest]:
    """Route :data:`STOP_SIGNALS` to ``request.handle`` inside the block (main thread only; elsewhere
    nothing changes), and put the previous handlers back after it."""
    restore = route_stop_signals(request.handle)
    try:
        yield request
    finally:
        restore()
