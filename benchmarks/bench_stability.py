"""Is ``unilab bench`` row 1 stable? Run it several times and print the spread of its medians.

Each run is a fresh process of ``python -m trainers.bench --rows 1`` (the same
measurement as ``unilab bench --rows 1``: every call timed right after a physics step of
a live 8192-env G1 batch, NumPy and the kernel alternating, the median of the paired
ratios); this script reads each run's ``bench.json`` and prints one table: per run the
medians of NumPy, the kernel and their ratio (with the ratio's IQR) and the load
average, then the spread of the medians across runs, as the largest deviation from
their median in percent. Goal on an idle machine: every run's median ratio within
+-15% of the others' median (``--tolerance``). A benchmark, not a test: it exits 0
either way unless a run failed (1); ``--strict`` also exits 1 when the goal is missed.

    python benchmarks/bench_stability.py [--runs 5] [--threads 2] [--out runs/bench_stability] [--strict] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from trainers.cli_checks import positive_int

ROOT = Path(__file__).resolve().parents[1]
BUDGETED = "task kernel vs NumPy, same computation"  # row 1's budgeted row


def run_once(out: Path, threads: int | None, quick: bool = False) -> dict:
    """One fresh ``python -m trainers.bench --rows 1`` process; its budgeted row and its machine line."""
    cmd = [sys.executable, "-m", "trainers.bench", "--rows", "1", "--out", str(out)]
    if threads:
        cmd += ["--threads", str(threads)]
    if quick:
        cmd.append("--quick")
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if res.returncode != 0 or not (out / "bench.json").exists():
        raise RuntimeError(f"{' '.join(cmd)} failed (rc {res.returncode}):\n{res.stdout[-2000:]}{res.stderr[-2000:]}")
    data = json.loads((out / "bench.json").read_text())
    row = next(r for r in data["rows"] if BUDGETED in r["name"])
    return {"machine": data["machine"], "row": row}


def deviations(values: list[float]) -> tuple[float, float]:
    """The median of ``values`` and the largest deviation of one value from it, as a fraction."""
    med = statistics.median(values)
    return med, max(abs(v / med - 1.0) for v in values)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=positive_int, default=5, help="fresh processes of row 1 (default 5)")
    p.add_argument("--threads", type=positive_int, default=None, help="passed to the bench (default: its own)")
    p.add_argument("--tolerance", type=float, default=0.15, help="goal: medians within +-this of their median")
    p.add_argument("--out", type=Path, default=Path("runs/bench_stability"), help="one folder per run, and summary.json")
    p.add_argument("--strict", action="store_true", help="exit 1 when the goal is missed")
    p.add_argument("--quick", action="store_true", help="the bench's quick sizes: a smoke test, spreads meaningless")
    args = p.parse_args(argv)

    runs = []
    for i in range(args.runs):
        try:
            got = run_once(args.out / f"run{i + 1}", args.threads, args.quick)
        except RuntimeError as e:
            print(e, file=sys.stderr)
            return 1
        r, m = got["row"], got["machine"]
        runs.append({"run": i + 1, "numpy_ms": r["baseline"], "kernel_ms": r["ours"], "ratio": r["ratio"],
                     "ratio_iqr": r["ratio_iqr"], "kernel_iqr": r["ours_iqr"], "repetitions": r["repetitions"],
                     "status": r["status"], "load_avg_1min": m["load_avg_1min"]})
        print(f"run {i + 1}/{args.runs}: ratio {r['ratio']:.2f} (kernel {r['ours']:.3f} ms, "
              f"numpy {r['baseline']:.2f} ms, load {m['load_avg_1min']})", flush=True)

    print(f"\nunilab bench row 1, {args.runs} fresh processes ({runs[0]['repetitions']} alternating repetitions each, "
          f"every call after a physics step); {m['cpu']}, {m['cores']} cores, {m['threads']} threads, "
          f"numba layer {m.get('numba_threading_layer')}")
    print(f"{'run':>3}  {'numpy ms':>9}  {'kernel ms':>9}  {'kernel IQR':>13}  {'ratio':>6}  {'ratio IQR':>11}  "
          f"{'load':>5}  status")
    for r in runs:
        print(f"{r['run']:>3}  {r['numpy_ms']:>9.2f}  {r['kernel_ms']:>9.3f}  "
              f"{r['kernel_iqr'][0]:>6.3f}-{r['kernel_iqr'][1]:<6.3f}  {r['ratio']:>6.2f}  "
              f"{r['ratio_iqr'][0]:>5.2f}-{r['ratio_iqr'][1]:<5.2f}  {r['load_avg_1min']:>5}  {r['status']}")
    summary = {"runs": runs, "tolerance": args.tolerance}
    for key in ("ratio", "kernel_ms", "numpy_ms"):
        values = [r[key] for r in runs]
        med, dev = deviations(values)
        summary[key] = {"median": med, "min": min(values), "max": max(values), "max_deviation": dev}
        print(f"spread of the {key} medians: {min(values):.3g}-{max(values):.3g}, median {med:.3g}, "
              f"largest deviation +-{dev:.1%}")
    met = summary["ratio"]["max_deviation"] <= args.tolerance
    summary["met"] = met
    load = max(r["load_avg_1min"] for r in runs)
    print(f"goal (ratio medians within +-{args.tolerance:.0%}): {'met' if met else 'NOT met'}"
          f"{f' (load average up to {load} on {os.cpu_count()} CPUs: not an idle machine)' if load > 0.5 else ''}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2))
    return 1 if args.strict and not met else 0


if __name__ == "__main__":
    raise SystemExit(main())
