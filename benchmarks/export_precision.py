"""fp32 vs fp16 vs int8 exports of one run: file size, batch-1 latency, action error, closed loop.

For each run, ``unilab export RUN --precision P --out TMP/P/policy.onnx`` writes the three
models (the CLI's own path: conversion, the action-error check against fp32 on recorded
observations, the deploy spec). Then, in one process:

* **size**: the ``policy.onnx`` file (it also holds the deploy spec, ~4-8 kB of JSON);
* **latency**: one observation per call (batch 1, one thread, as ``unilab play`` and a
  robot loop run it), each call timed alone; the models take turns in rounds so that
  background load hits all of them alike; median and p99 per model and their ratios to
  fp32. On every onnxruntime execution provider present that computes locally
  (``AzureExecutionProvider`` is a remote-call provider and is left out);
* **action error**: max and mean absolute difference to fp32 as a fraction of the action
  range, as ``unilab export`` measured it (in the deploy spec);
* **closed loop**: ``unilab play --headless`` (:func:`trainers.play.run_headless`) with
  each model on the same seeds: falls and velocity tracking, and whether each is within
  1 point of fp32 (falls: 1 percentage point; tracking: 0.01 on its 0-1 scale). A
  control column runs fp32 again on another seed (other episodes): how far the metrics
  move by sampling alone, at this episode count.

    python benchmarks/export_precision.py                                  # policies/go1_joystick
    python benchmarks/export_precision.py policies/go1_joystick policies/g1_joystick --episodes 16

Prints one Markdown table per run; nothing is written into the run folders.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import unilab_envs  # noqa: E402,F401
from trainers import cli  # noqa: E402
from trainers.common.deploy_export import run_task  # noqa: E402
from trainers.common.precision import PRECISIONS, record_observations  # noqa: E402
from trainers.play import Player, find_policy, run_headless  # noqa: E402
from unilab_robot.deploy import load_spec  # noqa: E402

REMOTE_PROVIDERS = {"AzureExecutionProvider"}
CONTROL = "fp32, seed + 1 (control)"


def export_all(run: str, out: Path) -> dict[str, Path]:
    """``unilab export RUN --precision P`` for each precision into ``out/P/``."""
    paths = {}
    for p in PRECISIONS:
        target = out / p / "policy.onnx"
        quiet = io.StringIO()
        with contextlib.redirect_stdout(quiet):
            code = cli.main(["export", run, "--out", str(target), "--precision", p])
        if code != 0:
            raise SystemExit(f"unilab export {run} --precision {p} failed (exit {code})")
        paths[p] = target
    return paths


def session(path: Path, provider: str):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=[provider])


def latency(paths: dict[str, Path], obs: np.ndarray, provider: str, rounds: int, calls: int) -> dict[str, np.ndarray]:
    """Per-call wall times (us) of each model, batch 1, the models taking turns each round."""
    sessions = {p: session(path, provider) for p, path in paths.items()}
    names = {p: (s.get_inputs()[0].name, s.get_outputs()[0].name) for p, s in sessions.items()}
    rows = [obs[i:i + 1] for i in range(len(obs))]
    for p, s in sessions.items():  # warm up
        for row in rows[:200]:
            s.run([names[p][1]], {names[p][0]: row})
    times = {p: [] for p in sessions}
    clock = time.perf_counter_ns
    for r in range(rounds):
        for p, s in sessions.items():
            inp, out = names[p]
            out_list, spent = [out], times[p]
            for i in range(calls):
                row = rows[(r * calls + i) % len(rows)]
                t0 = clock()
                s.run(out_list, {inp: row})
                spent.append(clock() - t0)
    return {p: np.asarray(t, dtype=np.float64) / 1e3 for p, t in times.items()}


def closed_loop(folder: Path, episodes: int, seed: int):
    return run_headless(Player(find_policy(folder), seed=seed), episodes, progress=False)


def within(value: float | None, ref: float | None, points: float) -> bool:
    return value is None or ref is None or abs(value - ref) <= points


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="*", default=["policies/go1_joystick"],
                   help="run or policy folders with a checkpoint (default policies/go1_joystick)")
    p.add_argument("--episodes", type=int, default=16, help="closed-loop episodes per precision (default 16)")
    p.add_argument("--seed", type=int, default=0, help="play's seed, the same for every precision (default 0)")
    p.add_argument("--rounds", type=int, default=20, help="latency: rounds of turns (default 20)")
    p.add_argument("--calls", type=int, default=500, help="latency: calls per model per round (default 500)")
    args = p.parse_args(argv)

    import onnxruntime as ort

    providers = [x for x in ort.get_available_providers() if x not in REMOTE_PROVIDERS]
    print(f"onnxruntime {ort.__version__}, providers {providers}; batch 1, one thread; "
          f"{args.rounds} x {args.calls} calls per model; closed loop: {args.episodes} episodes, seed {args.seed}\n")
    for run in args.runs:
        with tempfile.TemporaryDirectory(prefix="export-precision-") as work:
            paths = export_all(run, Path(work))
            task, env_kwargs = run_task(Path(run))
            obs = record_observations(paths["fp32"], task, env_kwargs, num_envs=8, steps=100, seed=1)
            lat = {prov: latency(paths, obs, prov, args.rounds, args.calls) for prov in providers}
            specs = {q: load_spec(path.parent) for q, path in paths.items()}
            loops = {q: closed_loop(path.parent, args.episodes, args.seed) for q, path in paths.items()}
            loops[CONTROL] = closed_loop(paths["fp32"].parent, args.episodes, args.seed + 1)
            sizes = {q: path.stat().st_size for q, path in paths.items()}

        print(f"### {run} ({task})\n")
        print("| | " + " | ".join(PRECISIONS) + f" | {CONTROL} |")
        print("|---" * (len(PRECISIONS) + 2) + "|")

        def row(label: str, cells) -> None:
            cells = list(cells)
            print(f"| {label} | " + " | ".join(cells + [""] * (len(PRECISIONS) + 1 - len(cells))) + " |")

        row("file size", [f"{sizes[q] / 1e3:.0f} kB ({sizes[q] / sizes['fp32']:.2f}x)" for q in PRECISIONS])
        for prov, t in lat.items():
            name = prov.replace("ExecutionProvider", "")
            med = {q: float(np.median(t[q])) for q in PRECISIONS}
            p99 = {q: float(np.percentile(t[q], 99)) for q in PRECISIONS}
            row(f"latency median, {name}", [f"{med[q]:.1f} us ({med[q] / med['fp32']:.2f}x)" for q in PRECISIONS])
            row(f"latency p99, {name}", [f"{p99[q]:.1f} us ({p99[q] / p99['fp32']:.2f}x)" for q in PRECISIONS])
        row("action error max / mean (of the range)",
            ["0 (reference)" if specs[q].precision.max_action_error is None else
             f"{specs[q].precision.max_action_error:.4f} / {specs[q].precision.mean_action_error:.5f}"
             for q in PRECISIONS])
        ref, cols = loops["fp32"], [*PRECISIONS, CONTROL]
        row("falls", [f"{loops[q].fall_rate:.1%} ({round(loops[q].fall_rate * loops[q].episodes)}/{loops[q].episodes})"
                      for q in cols])
        if ref.tracking_lin_vel is not None:
            row("tracking, linear (1 = perfect)", [f"{loops[q].tracking_lin_vel:.3f}" for q in cols])
            row("tracking, yaw", [f"{loops[q].tracking_ang_vel:.3f}" for q in cols])
        if ref.success_rate is not None:
            row("success", [f"{loops[q].success_rate:.1%}" for q in cols])
        row("episode length (steps)", [f"{loops[q].mean_length:.1f}" for q in cols])
        ok = {q: within(loops[q].fall_rate, ref.fall_rate, 0.01)
              and within(loops[q].tracking_lin_vel, ref.tracking_lin_vel, 0.01)
              and within(loops[q].tracking_ang_vel, ref.tracking_ang_vel, 0.01)
              and within(loops[q].success_rate, ref.success_rate, 0.01) for q in cols}
        row("closed loop within 1 point of fp32", ["-" if q == "fp32" else ("yes" if ok[q] else "NO") for q in cols])
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
