"""The progress of a training run on the terminal, the same for every learner.

A tqdm bar over env steps, labelled with the task, its postfix the learner's recent statistics;
or, without a bar (``--no-progress``), one line every ``1/lines`` of the run::

    progress = Progress("UniLab/UR5Reach-v0", total=300_000, initial=0, bar=True)
    progress.advance(64, postfix=lambda: "ret=12.3 succ=40%")   # per env step or iteration
    progress.close()

``postfix`` is a callable, read at most every ``refresh_s`` seconds (and for each line), so a loop
that advances every env step pays for its statistics only when they are shown.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


class Progress:
    """A labelled bar over env steps, or periodic lines (module docstring)."""

    def __init__(self, label: str, total: int, initial: int = 0, bar: bool = True, lines: int = 20,
                 refresh_s: float = 0.5, file: TextIO | None = None) -> None:
        self.label, self.total, self.file, self.refresh_s = label, int(total), file, refresh_s
        self.steps = self._shown = int(initial)
        self._every = max((self.total - self.steps) // max(int(lines), 1), 1)
        self._next_line = self.steps + self._every
        self._last_refresh = time.perf_counter()
        self.bar = None
        if bar:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=self.total, initial=self.steps, unit="step", unit_scale=True, dynamic_ncols=True,
                            desc=label or None, smoothing=0.1, mininterval=0.5, file=file)

    def advance(self, steps: int, postfix: Callable[[], str] | None = None, force: bool = False) -> None:
        """``steps`` more env steps; ``force`` refreshes the postfix now (a loop that advances once an iteration)."""
        self.steps += int(steps)
        if self.bar is not None:
            now = time.perf_counter()
            if postfix is not None and (force or now - self._last_refresh >= self.refresh_s):
                self.bar.set_postfix_str(postfix(), refresh=False)
                self._last_refresh = now
            self.bar.update(self.steps - self._shown)
            self._shown = self.steps
        elif self.steps >= self._next_line or self.steps >= self.total > self._shown:
            self._next_line = self.steps + self._every
            self.line(postfix)

    def line(self, postfix: Callable[[], str] | None = None) -> None:
        """``[label] steps S/T (P%) postfix`` on ``file`` (stdout by default)."""
        self._shown = self.steps
        label = f"[{self.label}] " if self.label else ""
        share = f" ({self.steps / self.total:.0%})" if self.total else ""
        tail = f" {postfix()}" if postfix is not None else ""
        print(f"{label}steps {self.steps}/{self.total}{share}{tail}", file=self.file or sys.stdout, flush=True)

    def close(self, postfix: Callable[[], str] | None = None) -> None:
        """Close the bar (its last postfix shown), or print the last line when steps went unshown."""
        if self.bar is not None:
            if postfix is not None:
                self.bar.set_postfix_str(postfix(), refresh=False)
            self.bar.update(self.steps - self._shown)
            self.bar.close()
            self.bar = None
        elif self.steps > self._shown and postfix is not None:
            self.line(postfix)
            self._shown = self.steps
