"""Python's garbage collector kept out of the control step: collections only in the slack before a deadline.

CPython's cyclic collector runs when allocations pass a threshold, inside whatever code allocates:
a full (generation 2) collection walks every tracked object, and the runtime's process holds ~60k
(NumPy, onnxruntime, MuJoCo bindings), so one collection takes ~10-20 ms on a 2-core VM (measured:
19 ms), most of a 20 ms period at 50 Hz. :class:`QuietCollector` freezes what start-up made (moved
to the permanent generation, never walked again), turns automatic collection off for the loop, and
collects the young generations only when the loop has time to spare before its next deadline, so a
cycle made per step is still freed. It also times every collection (``gc.callbacks``), which the
runtime's summary reports.
"""

from __future__ import annotations

import gc
import time

#: collect only with at least this much time left before the next deadline
SLACK_S = 0.005
#: control steps between two collections of the young generations
EVERY_STEPS = 25


class QuietCollector:
    """A context manager for a real-time loop; call :meth:`slack` once a step with the time left."""

    def __init__(self, slack_s: float = SLACK_S, every_steps: int = EVERY_STEPS) -> None:
        self.slack_s, self.every_steps = slack_s, every_steps
        self.collections = 0
        self.max_ms = 0.0
        self._steps = 0
        self._started: float | None = None
        self._was_enabled = True

    def _time(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        elif self._started is not None:
            self.collections += 1
            self.max_ms = max(self.max_ms, (time.perf_counter() - self._started) * 1e3)
            self._started = None

    def __enter__(self) -> QuietCollector:
        gc.collect()
        gc.freeze()
        self._was_enabled = gc.isenabled()
        gc.disable()
        gc.callbacks.append(self._time)
        return self

    def slack(self, seconds_left: float) -> None:
        """One control step ended with ``seconds_left`` before the next deadline: collect the young
        generations when it is their turn and there is time."""
        self._steps += 1
        if self._steps >= self.every_steps and seconds_left >= self.slack_s:
            gc.collect(1)
            self._steps = 0

    def __exit__(self, *exc) -> None:
        gc.callbacks.remove(self._time)
        gc.unfreeze()
        if self._was_enabled:
            gc.enable()
