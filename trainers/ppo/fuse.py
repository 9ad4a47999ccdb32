"""The adaptation fuse: keep the best policy, roll back after ``patience`` bad rounds in a row.

Pure decision logic (no torch, no files, no envs): :class:`Fuse` is fed one evaluation
score per round (higher is better) and answers what to do with that round's weights.
``unilab adapt`` (:mod:`trainers.ppo.adapt`) runs the rounds and acts on the answers.

The rules, for a round scoring ``m`` against the best score so far ``b``:

* round 0 (the policy before any adaptation) is the first best: ``KEPT``;
* ``m > b`` (strictly): a new best, ``KEPT``; the bad streak resets. A tie is not an
  improvement: the earlier weights stay the best;
* ``m < b - tolerance * |b|`` (more than ``tolerance``, relative, below the best), or ``m``
  NaN: a bad round. The streak grows; at ``patience`` the fuse trips: ``ROLLED_BACK``
  (the caller restores the best weights and stops); before that ``NOT_KEPT``;
* otherwise (below the best, within the tolerance, ties included): ``NOT_KEPT``; the
  streak resets, since the rounds that trip the fuse must be consecutive.

Training goes on from a not-kept round's weights (a dip may recover); only the fuse, or
the end of the rounds, returns to the best. :meth:`Fuse.fail` trips the fuse at once
(a round whose learner diverged cannot be trained on).

    fuse = Fuse(patience=3, tolerance=0.05)
    fuse.observe(0.80).decision   # KEPT (round 0)
    fuse.observe(0.70).decision   # NOT_KEPT (1 bad round)
"""

from __future__ import annotations

import dataclasses
import enum
import math


class Decision(str, enum.Enum):
    """What happens to a round's weights (the ``decision`` column of the adaptation log)."""

    KEPT = "kept"                 # the new best (round 0: the start)
    NOT_KEPT = "not-kept"         # worse than the best; training goes on from it
    ROLLED_BACK = "rolled back"   # the fuse tripped: back to the best, stop

    def __str__(self) -> str:
        return self.value


@dataclasses.dataclass(frozen=True)
class Verdict:
    """The fuse's answer for one round."""

    round: int
    metric: float
    decision: Decision
    best: float          # the best score after this round
    best_round: int      # the round that scored it
    bad_streak: int      # consecutive rounds more than the tolerance below the best, this one included

    @property
    def stop(self) -> bool:
        """Whether the adaptation stops here (the fuse tripped)."""
        return self.decision is Decision.ROLLED_BACK


class Fuse:
    """Keep-the-best with a rollback after ``patience`` consecutive bad rounds (module docstring).

    ``patience >= 1``; ``tolerance`` in ``[0, 1)``, relative to the best score's magnitude.
    """

    def __init__(self, patience: int = 3, tolerance: float = 0.05):
        if isinstance(patience, bool) or not isinstance(patience, int) or patience < 1:
            raise ValueError(f"patience must be an integer >= 1, got {patience!r}")
        if not 0 <= tolerance < 1:
            raise ValueError(f"tolerance must be in [0, 1) (a fraction of the best score), got {tolerance!r}")
        self.patience = patience
        self.tolerance = float(tolerance)
        self.round = -1
        self.best: float | None = None
        self.best_round: int | None = None
        self.bad_streak = 0
        self.tripped = False

    def floor(self) -> float:
        """The lowest score that is not a bad round: ``best - tolerance * |best|``."""
        if self.best is None:
            raise RuntimeError("no round observed yet: the first observe() sets the best")
        return self.best - self.tolerance * abs(self.best)

    def observe(self, metric: float) -> Verdict:
        """The verdict on the next round, which scored ``metric`` (higher is better)."""
        self._check_open()
        metric = float(metric)
        self.round += 1
        if self.best is None:
            if not math.isfinite(metric):
                raise ValueError(f"the starting policy's score must be finite, got {metric}")
            self.best, self.best_round = metric, self.round
            return self._verdict(metric, Decision.KEPT)
        if metric > self.best:
            self.best, self.best_round, self.bad_streak = metric, self.round, 0
            return self._verdict(metric, Decision.KEPT)
        if math.isnan(metric) or metric < self.floor():
            self.bad_streak += 1
            if self.bad_streak >= self.patience:
                self.tripped = True
                return self._verdict(metric, Decision.ROLLED_BACK)
            return self._verdict(metric, Decision.NOT_KEPT)
        self.bad_streak = 0
        return self._verdict(metric, Decision.NOT_KEPT)

    def fail(self) -> Verdict:
        """Trip the fuse now: the round could not be scored (its learner diverged)."""
        self._check_open()
        if self.best is None:
            raise RuntimeError("no round observed yet: score the starting policy first")
        self.round += 1
        self.bad_streak += 1
        self.tripped = True
        return self._verdict(math.nan, Decision.ROLLED_BACK)

    def _check_open(self) -> None:
        if self.tripped:
            raise RuntimeError("the fuse has tripped (rolled back): the adaptation is over")

    def _verdict(self, metric: float, decision: Decision) -> Verdict:
        return Verdict(self.round, metric, decision, float(self.best), int(self.best_round), self.bad_streak)
