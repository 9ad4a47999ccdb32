"""Statistics of the soak's timing records (pure): nearest-rank percentiles, deadline misses, where a sweep breaks."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

#: columns of a robot's timing record, ns after ``t0``; a skipped tick has ``START == ACTED == DONE == SKIPPED``
RELEASE, START, ACTED, DONE = range(4)
SKIPPED = -1


def percentile(values: np.ndarray, q: float) -> float:
    """Nearest-rank percentile: the smallest value that at least ``q`` % of ``values`` are <= to; NaN if empty."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return math.nan
    return float(np.percentile(values, q, method="inverted_cdf"))


def _dist(values_ns: np.ndarray) -> dict[str, float]:
    ms = np.asarray(values_ns, dtype=np.float64) / 1e6
    return {"p50": percentile(ms, 50), "p99": percentile(ms, 99), "max": float(ms.max()) if ms.size else math.nan}


def summarize(records: Sequence[np.ndarray], period_ns: int, deadline_ns: int | None = None,
              include_physics: bool = False) -> dict:
    """Latency percentiles and deadline misses of K robots' timing records (``(ticks, 4)`` int64 each).

    ``latency`` is ``ACTED - RELEASE`` (``DONE - RELEASE`` with ``include_physics``); a step is
    late when its latency exceeds ``deadline_ns`` (default: one period); misses = late steps +
    skipped ticks. Times in the result are ms.
    """
    deadline_ns = period_ns if deadline_ns is None else deadline_ns
    rows = np.concatenate([np.asarray(r, dtype=np.int64).reshape(-1, 4) for r in records]) if records else \
        np.zeros((0, 4), np.int64)
    ran = rows[rows[:, START] != SKIPPED]
    end = DONE if include_physics else ACTED
    latency = ran[:, end] - ran[:, RELEASE]
    late = int((latency > deadline_ns).sum())
    skipped = int(len(rows) - len(ran))
    per_robot = []
    for r in records:
        r = np.asarray(r, dtype=np.int64).reshape(-1, 4)
        ok = r[r[:, START] != SKIPPED]
        lat = ok[:, end] - ok[:, RELEASE]
        per_robot.append({"ticks": int(len(r)), "skipped": int(len(r) - len(ok)),
                          "late": int((lat > deadline_ns).sum()),
                          "latency_max_ms": float(lat.max()) / 1e6 if lat.size else math.nan})
    return {
        "robots": len(records), "period_ms": period_ns / 1e6, "deadline_ms": deadline_ns / 1e6,
        "include_physics": include_physics, "ticks": int(len(rows)), "steps": int(len(ran)),
        "skipped": skipped, "late": late, "misses": late + skipped,
        "latency_ms": _dist(latency), "compute_ms": _dist(ran[:, ACTED] - ran[:, START]),
        "wake_ms": _dist(ran[:, START] - ran[:, RELEASE]), "physics_ms": _dist(ran[:, DONE] - ran[:, ACTED]),
        "per_robot": per_robot,
    }


def first_break(points: Sequence[dict], p99_budget_ms: float | None = None) -> dict[float, dict]:
    """Per rate, the first robot count whose run missed a deadline (or broke the p99 budget), and the
    largest count below it that held: ``{rate: {"holds": K or None, "breaks": K or None, "why": str}}``."""
    out: dict[float, dict] = {}
    for p in sorted(points, key=lambda p: (p["rate_hz"], p["robots"])):
        entry = out.setdefault(p["rate_hz"], {"holds": None, "breaks": None, "why": ""})
        if entry["breaks"] is not None:
            continue
        why = []
        if p["misses"]:
            why.append(f"{p['misses']} misses")
        if p99_budget_ms is not None and p["latency_ms"]["p99"] > p99_budget_ms:
            why.append(f"p99 {p['latency_ms']['p99']:.2f} ms > {p99_budget_ms:g} ms")
        if why:
            entry["breaks"], entry["why"] = p["robots"], ", ".join(why)
        else:
            entry["holds"] = p["robots"]
    return out
