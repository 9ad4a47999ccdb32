"""Run logs: one CSV row and one TensorBoard point per iteration, keyed by env steps."""

from __future__ import annotations

import csv
import math
from pathlib import Path


class RunLogger:
    """Writes ``scalars`` dicts to ``<out>/progress.csv`` and ``<out>/tb/`` (TensorBoard).

    The CSV columns are fixed by the first row written (``step`` and ``iteration``
    first); keys that appear later are ignored by the CSV (TensorBoard takes them).
    ``resume_step``: rows logged after that step by an interrupted run are dropped, so a
    resumed run's log reads as one uninterrupted run.
    """

    def __init__(self, out_dir: str | Path, csv_log: bool = True, tensorboard: bool = True,
                 resume_step: int | None = None):
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.csv_path = self.out_dir / "progress.csv"
        self._fields: list[str] | None = None
        self._csv_file = None
        self._csv = None
        self._tb = None
        if csv_log:
            rows: list[dict] = []
            if resume_step is not None and self.csv_path.exists():
                with open(self.csv_path, newline="") as f:
                    reader = csv.DictReader(f)
                    self._fields = list(reader.fieldnames or []) or None
                    rows = [r for r in reader if r.get("step") and float(r["step"]) <= resume_step]
            self._csv_file = open(self.csv_path, "w", newline="")
            if self._fields:
                self._open_writer(self._fields)
                self._csv.writerows(rows)
                self._csv_file.flush()
        if tensorboard:
            from torch.utils.tensorboard import SummaryWriter  # slow import: only when used
            self._tb = SummaryWriter(str(self.out_dir / "tb"),
                                     purge_step=resume_step + 1 if resume_step is not None else None)

    def _open_writer(self, fields: list[str]) -> None:
        self._fields = fields
        self._csv = csv.DictWriter(self._csv_file, fieldnames=fields, extrasaction="ignore", restval="")
        if self._csv_file.tell() == 0:
            self._csv.writeheader()

    def log(self, step: int, iteration: int, scalars: dict[str, float]) -> None:
        if self._csv_file is not None:
            if self._csv is None:
                self._open_writer(["step", "iteration", *sorted(scalars)])
            self._csv.writerow({"step": step, "iteration": iteration, **scalars})
            self._csv_file.flush()
        if self._tb is not None:
            for k, v in scalars.items():
                if v is not None and not (isinstance(v, float) and math.isnan(v)):
                    self._tb.add_scalar(k, v, step)

    def close(self) -> None:
        if self._csv_file is not None:
            self._csv_file.close()
            self._csv_file = None
        if self._tb is not None:
            self._tb.close()
            self._tb = None


def read_csv(path: str | Path) -> dict[str, list[float]]:
    """Columns of a progress CSV as float lists (blank cells -> NaN)."""
    cols: dict[str, list[float]] = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            for k, v in row.items():
                try:
                    x = float(v) if v not in (None, "") else math.nan
                except ValueError:
                    x = math.nan
                cols.setdefault(k, []).append(x)
    return cols
