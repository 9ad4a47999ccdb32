"""Routing Ctrl-C (SIGINT), SIGTERM and SIGHUP to a training loop's handler, and back.

Both trainers stop the same way (the bundled PPO's ``Runner`` and the SB3 CLI's
``StopRequest``): the first signal asks the loop to stop at its next boundary, a second
Ctrl-C raises ``KeyboardInterrupt``. What they share is installing their handler, putting
the previous handlers back, the exit status a stopped run ends with (``128 + signal``:
130, 143, 129, as a shell reports a process the signal killed) and :func:`say`, which
prints a handler's message without letting a dead or busy stream raise into the loop.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable

#: the signals a training run treats as "stop and save" (SIGHUP: the terminal or ssh session went away)
STOP_SIGNALS = tuple(s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None)


def exit_status(signum: int | None) -> int:
    """The exit status of a run that ``signum`` stopped: ``128 + signum`` (130 for SIGINT, 143 for
    SIGTERM, 129 for SIGHUP); 130 when it is unknown (a ``KeyboardInterrupt`` from Python code)."""
    return 128 + int(signum) if signum else 128 + int(signal.SIGINT)


def say(message: str) -> None:
    """Print ``message`` on stderr from a signal handler. A write can fail there (the stream's reader
    is gone, or the handler interrupted a write to the same stream: "reentrant call"); the message
    is advisory, and raising would end the loop where the handler interrupted it, so it is dropped."""
    try:
        print(message, file=sys.stderr, flush=True)
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
