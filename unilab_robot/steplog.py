"""The runtime's per-step log: a CSV streamed while it runs, an ``.npz`` written atomically at the end.

One row per control step, columns (``J`` joints in the spec's action order, ``O`` the
observation size, ``A`` the action size)::

    t              s, monotonic, from the runtime's start     state_tick  the LowState tick acted on
    lateness_s     s the step started after its deadline      fresh       1 when a new state arrived
    compute_s      s from the step's start to the command sent  mode      0 wait, 1 damping, 2 move, 3 policy, 4 fault
    missed         1 when the command left after the next deadline
    command_0..2   the velocity command                        quat_0..3   IMU (w, x, y, z)
    gyro_0..2      rad/s                                        q_0..J-1, dq_0..J-1  joint readings
    obs_0..O-1     the policy's observation (0 outside policy mode)  action_0..A-1  the policy's action
    q_des_0..J-1, kp_0..J-1, kd_0..J-1   the command sent
    policy, swap   with a hot swap attached only: the acting policy's id; 1 swapped in, 2 rolled back at this step

The CSV (``<path>.csv``) has one header line and a row per step, flushed every second, so a
run that dies leaves its log; the ``.npz`` (``<path>.npz``) holds one float64 array per column
group (``t``, ``q`` ``(steps, J)``, ``obs`` ``(steps, O)``, ...), written to a temporary file
and renamed into place when the run ends.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np

MODES = ("wait", "damping", "move", "policy", "fault")
SCALARS = ("t", "lateness_s", "compute_s", "missed", "state_tick", "fresh", "mode")
#: scalar columns a log has when the runtime has a hot swap attached (unilab_robot.swap)
SWAP_SCALARS = ("policy", "swap")


def log_file(path: str | Path, suffix: str) -> Path:
    """The log file ``PATH.csv`` / ``PATH.npz`` (``suffix``) of a log named ``path``: a ``.csv`` or ``.npz`` already
    on ``path`` is replaced, any other dot is part of the name (``runs/wet_0.2`` -> ``runs/wet_0.2.npz``)."""
    path = Path(path)
    stem = path.with_suffix("") if path.suffix in (".csv", ".npz") else path
    return stem.with_name(stem.name + suffix)


class StepLog:
    """Per-step log at ``path`` (``.csv`` and ``.npz`` beside each other, :func:`log_file`); ``groups``: name -> width."""

    def __init__(self, path: str | Path, groups: dict[str, int], flush_every: int = 50) -> None:
        self.path = log_file(path, "")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.groups = {**{k: 1 for k in SCALARS}, **groups}
        self._rows: dict[str, list] = {k: [] for k in self.groups}
        self._file = open(log_file(self.path, ".csv"), "w", newline="")
        self._csv = csv.writer(self._file)
        header = [k if w == 1 and k in SCALARS + SWAP_SCALARS else f"{k}_{i}" for k, w in self.groups.items() for i in range(w)]
        self._csv.writerow(header)
        self._n, self.flush_every = 0, flush_every

    def write(self, **row) -> None:
        """One step; every group of the log given (scalars as numbers, groups as arrays of their width)."""
        flat = []
        for k, w in self.groups.items():
            v = np.asarray(row[k], dtype=np.float64).reshape(-1)
            if v.shape[0] != w:
                raise ValueError(f"log column {k!r} has width {w}, got {v.shape[0]} values")
            self._rows[k].append(v)
            flat.extend(f"{x:.6g}" for x in v)
        self._csv.writerow(flat)
        self._n += 1
        if self._n % self.flush_every == 0:
            self._file.flush()

    def __len__(self) -> int:
        """Rows written so far."""
        return self._n

    def close(self) -> Path:
        """Flush the CSV and write the ``.npz`` atomically; returns the ``.npz`` path."""
        self._file.close()
        arrays = {k: (np.stack(v) if v else np.zeros((0, self.groups[k]))) for k, v in self._rows.items()}
        arrays = {k: (a[:, 0] if k in SCALARS + SWAP_SCALARS else a) for k, a in arrays.items()}
        final = log_file(self.path, ".npz")
        tmp = final.with_name(final.name + ".tmp.npz")
        np.savez(tmp, **arrays)
        os.replace(tmp, final)
        return final


def load_log(path: str | Path) -> dict[str, np.ndarray]:
    """The ``.npz`` log as a dict of arrays."""
    with np.load(log_file(path, ".npz")) as z:
        return {k: z[k] for k in z.files}
