"""Routing Ctrl-C (SIGINT) and SIGTERM to a training loop's handler, and back.

Both trainers stop the same way (the bundled PPO's ``Runner`` and the SB3 CLI's
``StopRequest``): the first signal asks the loop to stop at its next boundary, a second
Ctrl-C raises ``KeyboardInterrupt``. What they share is installing their handler and
putting the previous handlers back.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable

#: the signals a training run treats as "stop and save"
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def route_stop_signals(handler: Callable) -> Callable[[], None]:
    """Install ``handler(signum, frame)`` for :data:`STOP_SIGNALS`; return the function that puts
    the previous handlers back. Off the main thread (where Python cannot set handlers) nothing
    changes and the returned function does nothing."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    for s in previous:
        signal.signal(s, handler)

    def restore() -> None:
        for s, h in previous.items():
            if h is not None:  # None: a handler installed from C, which Python cannot reinstall
                signal.signal(s, h)
    return restore
