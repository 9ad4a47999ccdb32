"""Say when a run has stopped learning, while it runs: one line, once.

A recipe that stalls (a grasp whose arm presses the cube and never lifts it) used to be found at
the end of a long run. :class:`StallDetector` watches the rolling training success and return of a
task that reports success (``is_success``) and says so as soon as, over the last ``window_steps``
env steps, the success stayed below ``max_success`` (10%) and the return moved by no more than
``tolerance`` of its size::

    detector = StallDetector(window_steps=100_000)
    line = detector.observe(env_steps, rolling_return, rolling_success)   # None, or the one line

It only speaks; the run goes on (a stalled run may still find its way; the user decides).
A task without a success signal is not judged: a flat return there is as often a policy that has
learned all it can (a walking Go1) as one that never started.
"""

from __future__ import annotations

import math
from collections import deque


def return_is_flat(returns: list[float], tolerance: float) -> bool:
    """Whether the returns span at most ``tolerance`` times their mean magnitude (at least 1.0 of it):
    ``[-80.2, -79.6, -80.9]`` at 0.05 is flat (a span of 1.3 against 4.0), ``[-80, -60]`` is not."""
    if not returns or any(not math.isfinite(r) for r in returns):
        return False
    scale = max(1.0, abs(sum(returns) / len(returns)))
    return max(returns) - min(returns) <= tolerance * scale


class StallDetector:
    """Watches ``(env_steps, rolling return, rolling success)`` and returns the stall line the first time the
    window shows no progress (see the module docstring); ``window_steps`` 0 turns it off."""

    def __init__(self, window_steps: int = 100_000, tolerance: float = 0.05, max_success: float = 0.1) -> None:
        if window_steps < 0 or not tolerance > 0 or not 0 < max_success <= 1:
            raise ValueError(f"a stall window must be >= 0 env steps, its tolerance > 0 and its max_success in (0, 1], "
                             f"got {window_steps}, {tolerance}, {max_success}")
        self.window_steps, self.tolerance, self.max_success = int(window_steps), float(tolerance), float(max_success)
        self._seen: deque[tuple[int, float, float | None]] = deque()
        self.said: str | None = None

    def observe(self, env_steps: int, rolling_return: float | None, rolling_success: float | None = None) -> str | None:
        """Record one reading; the stall line when this reading completes a stalled window (once per run), else ``None``.
        A reading without a success (``None``: the task reports none) or without a finite return (no episode
        finished yet) is skipped."""
        if (self.window_steps == 0 or self.said is not None or rolling_success is None or rolling_return is None
                or not math.isfinite(rolling_return)):
            return None
        self._seen.append((int(env_steps), float(rolling_return), rolling_success))
        while len(self._seen) > 1 and env_steps - self._seen[1][0] >= self.window_steps:
            self._seen.popleft()  # keep exactly one reading at or before the window's start
        first = self._seen[0][0]
        if env_steps - first < self.window_steps:
            return None
        returns = [r for _, r, _ in self._seen]
        best = max(s for _, _, s in self._seen)
        if best >= self.max_success or not return_is_flat(returns, self.tolerance):
            return None
        self.said = (f"[unilab] stalled at {env_steps} env steps: success at most {best:.0%} and return flat "
                     f"({min(returns):.3g} to {max(returns):.3g}) "
                     f"for the last {env_steps - first} env steps; the policy has stopped improving (for a grasp: the "
                     f"lift was never found). Training goes on; Ctrl-C saves, and another --seed or recipe may do better")
        return self.said
