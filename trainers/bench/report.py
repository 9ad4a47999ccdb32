"""The machine description and the one table: printed, written as JSON and as a PNG.

Every row is a ratio measured side by side in one run; ``ratio >= budget`` passes.
A row holds ``section, name, baseline_label, baseline, ours_label, ours, unit, ratio,
budget`` (``budget`` None: reported, not judged) and ``error`` when it could not run.
``baseline``, ``ours`` and ``ratio`` are medians over ``repetitions`` alternating
repetitions (``ratio``: of the per-repetition ratios), with their spreads
``baseline_iqr``, ``ours_iqr``, ``ratio_iqr`` ([q1, q3]) and ``ratio_range`` ([min, max]);
``status`` is the judgement of the median (:func:`.stats.judge`) and ``straddles_budget``
says whether the ratio's interquartile range contains the budget.
"""

from __future__ import annotations

import json
import math
import os
import platform
from pathlib import Path

from .stats import judge


def numba_layer() -> str | None:
    """The layer Numba's threads run on, once launched; else the one asked for."""
    import numba

    try:
        return numba.threading_layer()
    except ValueError:  # no parallel region has run yet
        return os.environ.get("NUMBA_THREADING_LAYER")


def machine_info(threads: int, device: str) -> dict:
    import mujoco
    import numba
    import numpy as np
    import torch

    from unilab_envs.threads import available_cpus, cpu_model

    cpu = cpu_model()
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    try:
        load = os.getloadavg()[0]
    except OSError:  # pragma: no cover
        load = float("nan")
    return {"cpu": cpu, "cores": available_cpus(), "threads": threads, "load_avg_1min": round(load, 2),
            "gpu": gpu, "device": device, "python": platform.python_version(), "torch": torch.__version__,
            "numpy": np.__version__, "numba": numba.__version__, "mujoco": mujoco.__version__,
            "numba_threading_layer": numba_layer(),
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY")}


def status(row: dict) -> str:
    """The row's verdict: ``ok`` / ``BELOW`` on the median (``, IQR straddles`` when the spread
    contains the budget), ``-`` without a budget, ``ERROR``."""
    return judge(row)


def _spread(row: dict) -> str:
    iqr = row.get("ratio_iqr")
    if not iqr or row.get("error"):
        return ""
    return f"{_num(iqr[0])}-{_num(iqr[1])}"


def _num(v) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"


def format_table(machine: dict, rows: list[dict]) -> str:
    gpu = machine["gpu"] or "none"
    lines = [f"machine: {machine['cpu']} | {machine['cores']} cores ({machine['threads']} threads used, "
             f"load {machine['load_avg_1min']}) | GPU: {gpu} | device: {machine['device']} | "
             f"torch {machine['torch']}, numba {machine['numba']} ({machine.get('numba_threading_layer')}), "
             f"mujoco {machine['mujoco']}"]
    w = max([len(r["name"]) for r in rows] + [20])
    head = (f"{'#':>2}  {'measurement':<{w}}  {'baseline':>12}  {'ours':>12}  {'unit':<10} {'ratio':>7} "
            f"{'IQR':>13} {'n':>3} {'budget':>7}  status")
    lines += [head, "-" * len(head)]
    for r in rows:
        budget = f">={r['budget']:g}" if r.get("budget") is not None else ""
        lines.append(f"{r['row']:>2}  {r['name']:<{w}}  {_num(r.get('baseline')):>12}  {_num(r.get('ours')):>12}  "
                     f"{r.get('unit', ''):<10} {_num(r.get('ratio')):>7} {_spread(r):>13} {r.get('repetitions', ''):>3} "
                     f"{budget:>7}  {status(r)}")
        if r.get("error"):
            lines.append(f"    {r['error']}")
    lines.append("baseline/ours columns: each row's own unit, medians over n alternating repetitions; ratio: the "
                 "median of the n per-repetition ratios, > 1 means ours is faster (rows 2 and 5: ours' throughput as "
                 "a fraction of the baseline's), IQR its interquartile range; status judges the median, "
                 "'IQR straddles' when the budget lies inside the IQR (a rerun may flip it); row 1 times each "
                 "call right after a physics step, as the env runs it")
    return "\n".join(lines)


def _finite(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return [_finite(x) for x in v] if isinstance(v, (list, tuple)) else v


def write_json(path: Path, machine: dict, rows: list[dict]) -> Path:
    """``{"machine": ..., "rows": [...]}``, non-finite numbers as null (see the module docstring for a row's keys)."""
    clean = [{k: _finite(v) for k, v in r.items()} for r in rows]
    path.write_text(json.dumps({"machine": machine, "rows": clean}, indent=2))
    return path


def write_png(path: Path, machine: dict, rows: list[dict]) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in rows if not r.get("error") and math.isfinite(r.get("ratio", float("nan")))]
    fig, ax = plt.subplots(figsize=(11, 0.45 * max(len(ok), 1) + 1.6))
    labels = [f"{r['row']}. {r['name']}" for r in ok]
    ratios = [r["ratio"] for r in ok]
    colors = ["tab:gray" if r.get("budget") is None else ("tab:green" if r["ratio"] >= r["budget"] else "tab:red")
              for r in ok]
    y = list(range(len(ok)))[::-1]
    ax.barh(y, ratios, color=colors)
    for yi, r in zip(y, ok):  # the ratio's interquartile range
        if r.get("ratio_iqr") and all(v is not None and v > 0 for v in r["ratio_iqr"]):
            ax.plot(r["ratio_iqr"], [yi, yi], color="black", lw=1)
    for yi, r in zip(y, ok):
        if r.get("budget") is not None:
            ax.plot([r["budget"]] * 2, [yi - 0.4, yi + 0.4], color="black", lw=2)
        ax.text(r["ratio"], yi, f" {r['ratio']:.2f}", va="center", fontsize=8)
    ax.axvline(1.0, color="black", lw=0.5, ls=":")
    ax.set_yticks(y, labels, fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("median ratio (ours vs baseline; line = its IQR; black tick = budget; green meets it, red misses it)")
    ax.set_title(f"unilab bench: {machine['cores']} cores, GPU {machine['gpu'] or 'none'}, device {machine['device']}",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path
