"""The bench's statistics: medians, spreads and the budget judgement of one row.

Every row is measured in repetitions that alternate reference and candidate in one
process (so drifting machine load hits both alike); each repetition gives one paired
ratio. A row reports the MEDIAN of those ratios and their spread (interquartile range
and min-max); the budget is judged on the median, and :func:`judge` also says when the
interquartile range straddles the budget (the verdict could flip on a rerun).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np


def summary(values: Sequence[float]) -> dict:
    """``{"median", "q1", "q3", "min", "max", "n"}`` of ``values`` (linear-interpolated quartiles)."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        raise ValueError("summary() of no values")
    q1, med, q3 = np.percentile(v, [25, 50, 75])
    return {"median": float(med), "q1": float(q1), "q3": float(q3), "min": float(v.min()), "max": float(v.max()),
            "n": int(v.size)}


def paired_ratios(baseline: Sequence[float], ours: Sequence[float], higher_is_better: bool = False) -> list[float]:
    """Repetition ``i``'s ratio, ``> 1`` when ours is better: ``baseline[i] / ours[i]`` for times,
    ``ours[i] / baseline[i]`` for throughputs (``higher_is_better``)."""
    if len(baseline) != len(ours) or not len(ours):
        raise ValueError(f"paired_ratios needs two equal, non-empty lists, got {len(baseline)} and {len(ours)}")
    return [o / b if higher_is_better else b / o for b, o in zip(baseline, ours)]


def straddles(q1: float, q3: float, budget: float | None) -> bool | None:
    """Whether ``budget`` lies inside ``[q1, q3]`` (None without a budget)."""
    if budget is None:
        return None
    return bool(q1 < budget <= q3)


def judge(row: dict) -> str:
    """``ok`` / ``BELOW`` on the median ratio (``-`` without budget, ``ERROR`` when it could not run),
    with ``, IQR straddles`` appended when the ratio's interquartile range contains the budget."""
    if row.get("error"):
        return "ERROR"
    budget, ratio = row.get("budget"), row.get("ratio")
    if budget is None:
        return "-"
    if ratio is None or not math.isfinite(ratio):
        return "BELOW"
    verdict = "ok" if ratio >= budget else "BELOW"
    iqr = row.get("ratio_iqr")
    if iqr and straddles(iqr[0], iqr[1], budget):
        verdict += ", IQR straddles"
    return verdict


def measured(baseline: Sequence[float], ours: Sequence[float], higher_is_better: bool = False) -> dict:
    """A row's measured fields from per-repetition ``baseline`` and ``ours`` values (same unit, paired
    by repetition): their medians and IQRs, the median paired ratio, its IQR and min-max range."""
    b, o = summary(baseline), summary(ours)
    r = summary(paired_ratios(baseline, ours, higher_is_better))
    return {"baseline": b["median"], "baseline_iqr": [b["q1"], b["q3"]],
            "ours": o["median"], "ours_iqr": [o["q1"], o["q3"]],
            "ratio": r["median"], "ratio_iqr": [r["q1"], r["q3"]], "ratio_range": [r["min"], r["max"]],
            "repetitions": r["n"]}


def finish(row: dict) -> dict:
    """``row`` with ``status`` and ``straddles_budget`` set from its median ratio, IQR and budget."""
    iqr = row.get("ratio_iqr")
    row["straddles_budget"] = straddles(iqr[0], iqr[1], row.get("budget")) if iqr and not row.get("error") else None
    row["status"] = judge(row)
    return row
