"""What ``unilab play --headless`` measures: :class:`PlayResult` and its summary, velocity tracking,
the speed reached per command and the safety guard's counts."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .player import Player


@dataclasses.dataclass
class PlayResult:
    """The metrics of a headless run (as in ``unilab eval``); :meth:`summary` is what ``unilab play`` prints."""

    task: str
    episodes: int
    mean_length: float
    fall_rate: float
    success_rate: float | None
    tracking_lin_vel: float | None   # mean per step of exp(-|v_cmd - v|^2 / sigma), in [0, 1]
    tracking_ang_vel: float | None
    speed_per_command: list[tuple[float, float, float, int]]  # (cmd low, cmd high, mean vx, steps)
    final_distance: float | None
    step_us: float                   # wall time of one control step of the play loop
    control_dt: float
    video: Path | None = None
    sim2real: str | None = None
    safety: str | None = None        # the guard's counts, when it ran
    fall_name: str = "falls"         # what fall_rate counts (the grasp: "cube off the table")

    def summary(self) -> str:
        lines = [f"{self.task}: episodes {self.episodes}  length {self.mean_length:.1f}  {self.fall_name} {self.fall_rate:.1%}"
                 + (f"  success {self.success_rate:.1%}" if self.success_rate is not None else "")
                 + (f"  final distance {self.final_distance * 100:.1f} cm" if self.final_distance is not None else "")]
        if self.tracking_lin_vel is not None:
            lines.append(f"tracking (exp(-err^2/sigma), 1 = perfect): linear {self.tracking_lin_vel:.3f}  "
                         f"yaw {self.tracking_ang_vel:.3f}")
        if self.speed_per_command:
            lines.append("forward speed per command (settled steps, >= 1 s after a command change):")
            lines += [f"  cmd vx [{lo:+.2f}, {hi:+.2f}) m/s: vx {v:+.2f} m/s ({n} steps)"
                      for lo, hi, v, n in self.speed_per_command]
        period = self.control_dt * 1e6
        lines.append(f"play loop: {self.step_us:.0f} us per control step (policy + {self.control_dt * 1e3:.0f} ms of "
                     f"physics + I/O), {period / self.step_us:.0f}x faster than real time on one core")
        if self.sim2real:
            lines.append(self.sim2real)
        if self.safety:
            lines.append(self.safety)
        if self.video is not None:
            lines.append(f"video {self.video}")
        return "\n".join(lines)


class VelocityTracking:
    """A velocity command's tracking over a run: per step ``exp(-err^2 / sigma)`` (planar and yaw),
    and the forward speed reached on steps at least ``settle_steps`` after the command last changed."""

    def __init__(self, sigma: float, settle_steps: int) -> None:
        self.sigma, self.settle_steps = sigma, settle_steps
        self.lin: list[float] = []
        self.ang: list[float] = []
        self.commands: list[np.ndarray] = []
        self.speeds: list[np.ndarray] = []
        self._since_change, self._last_command = 0, None

    def start_episode(self, command: np.ndarray) -> None:
        self._since_change, self._last_command = 0, command.copy()

    def add(self, command: np.ndarray, velocity: np.ndarray) -> None:
        """One control step: ``command`` and the base's ``velocity``, both ``(vx, vy, yaw_rate)``."""
        c, v = command, velocity
        self.lin.append(math.exp(-((c[0] - v[0]) ** 2 + (c[1] - v[1]) ** 2) / self.sigma))
        self.ang.append(math.exp(-((c[2] - v[2]) ** 2) / self.sigma))
        self._since_change = 0 if not np.array_equal(c, self._last_command) else self._since_change + 1
        self._last_command = c.copy()
        if self._since_change >= self.settle_steps:
            self.commands.append(c.copy())
            self.speeds.append(v)

    def linear(self) -> float | None:
        return float(np.mean(self.lin)) if self.lin else None

    def yaw(self) -> float | None:
        return float(np.mean(self.ang)) if self.ang else None

    def speed_per_command(self, low: float, high: float) -> list[tuple[float, float, float, int]]:
        return speed_table(self.commands, self.speeds, low, high)


def speed_table(commands: list[np.ndarray], speeds: list[np.ndarray], low: float, high: float,
                width: float = 0.25) -> list[tuple[float, float, float, int]]:
    """``(cmd low, cmd high, mean vx, steps)`` per ``width``-wide bin of commanded vx over ``[low, high]``,
    for bins with at least 25 steps."""
    if not commands:
        return []
    cmd, vel = np.asarray(commands)[:, 0], np.asarray(speeds)[:, 0]
    edges = np.arange(math.floor(low / width) * width, high + width, width)
    table = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        mask = (cmd >= lo) & (cmd < hi)
        if mask.sum() >= 25:
            table.append((float(lo), float(hi), float(vel[mask].mean()), int(mask.sum())))
    return table


def safety_summary(player: Player, trips: dict[str, int], steps: int, episodes: int) -> str | None:
    """One line of the guard's counts over the run (joint-steps each limit moved; trips by watchdog)."""
    if player.guard is None:
        return None
    c, n = player.guard.counts, max(steps * player.guard.limits.size, 1)
    why = ", ".join(f"{k} {v}" for k, v in trips.items() if v)
    return (f"safety ({player.safety_source}): targets moved by position limits {c['position_clips']} "
            f"({c['position_clips'] / n:.2%} of joint-steps), rate limit {c['rate_limits']} ({c['rate_limits'] / n:.2%}), "
            f"torque limit {c['torque_limits']} ({c['torque_limits'] / n:.2%}); safe mode latched in "
            f"{sum(trips.values())} of {episodes} episodes" + (f" ({why})" if why else ""))
