"""Stop a run once the task is learned: the ``stop:`` section of the config (:class:`StopConfig`).

The runner applies it by itself, so ``unilab train`` and ``trainers.ppo.train(cfg)`` both
stop where the config says::

    cfg = load_config("UniLab/UR5Reach-v0")   # its YAML sets stop.success_rate
    result = train(cfg)                       # result.stop_reason says why it stopped early
"""

from __future__ import annotations

from .config import StopConfig, TrainConfig


class SuccessStop:
    """True once the rolling training success rate has held ``cfg.success_rate`` for ``cfg.patience``
    consecutive iterations, after ``cfg.min_episodes`` finished episodes. ``reason`` says why it fired."""

    def __init__(self, cfg: StopConfig):
        if cfg.success_rate is None:
            raise ValueError("SuccessStop needs stop.success_rate; use stop_callback(cfg), which returns None when off")
        self.cfg = cfg
        self.streak = 0
        self.reason: str | None = None

    def __call__(self, runner, stats: dict) -> bool:
        finished = stats.get("episode/finished", 0.0)
        success = stats.get("episode/success")
        if success is None or finished < self.cfg.min_episodes or success < self.cfg.success_rate:
            self.streak = 0
            return False
        self.streak += 1
        if self.streak < self.cfg.patience:
            return False
        self.reason = (f"success {success:.1%} >= stop.success_rate {self.cfg.success_rate:.0%} "
                       f"for {self.streak} iteration(s) after {finished:.0f} episodes")
        return True

    def state_dict(self) -> dict:
        """What the rule carries between iterations (its streak), with the threshold it was counted
        against; checkpointed so a resumed run stops at the iteration a straight run stops at."""
        return {"streak": self.streak, "success_rate": self.cfg.success_rate}

    def load_state_dict(self, state: dict) -> None:
        """Go on from a :meth:`state_dict`; a streak counted against another ``success_rate`` (the
        threshold was changed on resume) restarts from zero."""
        self.streak = int(state["streak"]) if state.get("success_rate") == self.cfg.success_rate else 0


def stop_callback(cfg: TrainConfig) -> SuccessStop | None:
    """The early-stop callback the config asks for, or None (train to ``total_steps``)."""
    return SuccessStop(cfg.stop) if cfg.stop.success_rate is not None else None
