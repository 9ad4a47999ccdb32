"""A GRU actor's cost: training steps/s against the MLP's (side by side in one process), and the control step.

**Training** (issue 71's budget: GRU >= 0.8 of the MLP's steps/s on 2 cores): the task's committed config
built twice in one process, ``policy.recurrent: null`` (A) and ``policy.recurrent: gru`` (B), same seed,
alternating full iterations (collect + update) so both see the same load
(:mod:`benchmarks.iteration_ratio`); the ratio is B's steps/s over A's (= A's seconds per iteration over
B's: the same steps per iteration).

**Control step** (``--soak``; budget p99 <= 5 ms): a GRU policy for the task (a one-iteration run,
``unilab export``: the deploy spec's ``recurrent`` section, ``obs, h_in -> actions, h_out``) paced in wall
clock by :mod:`benchmarks.realtime_soak` (``unilab play``'s Player: deploy-spec observation, onnxruntime
on one thread, safety guard), beside an MLP policy made the same way (same spec, fp32).

    python benchmarks/recurrent_throughput.py                                   # Go1, 2 threads, ratio
    python benchmarks/recurrent_throughput.py --soak --robots 1 --duration-s 20 # + the control step p99
    python benchmarks/recurrent_throughput.py num_envs=512 policy.recurrent_hidden=128
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import iteration_ratio  # noqa: E402
import realtime_soak  # noqa: E402

BUDGET = 0.8


def one_iteration_policy(config: str, out: Path, overrides: list[str], recurrent: str) -> Path:
    """A one-iteration run of ``config`` (``policy.recurrent=<recurrent>``) exported to ``out`` (policy.onnx +
    deploy_spec.json): the MLP and the GRU the soak compares, on the same spec and the same robot behaviour."""
    run = [sys.executable, "-m", "trainers.cli", "train", "--config", config, "--out", str(out), "--num-envs", "16",
           "--total-steps", "384", f"policy.recurrent={recurrent}", "init_from=null", "log.tensorboard=false",
           "log.progress=false", "log.plot=false", "algo.num_minibatches=4", *overrides]
    subprocess.run(run, check=True, capture_output=True, cwd=ROOT)
    subprocess.run([sys.executable, "-m", "trainers.cli", "export", str(out)], check=True, capture_output=True, cwd=ROOT)
    return out


def soak(folder: Path, args) -> dict:
    """realtime_soak on ``folder``'s fp32 policy: its one result."""
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        realtime_soak.main(["--policy", str(folder), "--precision", "fp32", "--robots", str(args.robots),
                            "--duration-s", str(args.duration_s), "--workers", "loop", "--json", f.name])
        data = json.loads(Path(f.name).read_text())
    return data["points"][0] if "points" in data else data


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default="trainers/configs/go1_joystick.yaml")
    p.add_argument("--iterations", type=int, default=6, help="timed iterations of each (after one warm-up)")
    p.add_argument("--threads", type=int, default=2, help="torch and env threads (default 2: the 2-core budget)")
    p.add_argument("--soak", action="store_true", help="also the control step's latency (realtime_soak)")
    p.add_argument("--no-training", action="store_true", help="skip the training ratio (with --soak: the soak alone)")
    p.add_argument("--robots", type=int, default=1)
    p.add_argument("--duration-s", type=float, default=20.0)
    p.add_argument("overrides", nargs="*", metavar="key=value", help="applied to both variants")
    args = p.parse_args(argv)
    both = [f"torch_threads={args.threads}", *args.overrides]
    import os
    os.environ.setdefault("UNILAB_NUM_THREADS", str(args.threads))
    result = {}
    if not args.no_training:
        r = iteration_ratio.main(["--config", args.config, "--iterations", str(args.iterations),
                                  "--a", "policy.recurrent=null", "--b", "policy.recurrent=gru", *both])
        ratio = r["speedup"]
        print(f"GRU / MLP training steps/s: {ratio:.3f} (budget >= {BUDGET}: {'pass' if ratio >= BUDGET else 'FAIL'})")
        result.update(training=r, gru_over_mlp_steps_per_s=ratio)
    if args.soak:
        with tempfile.TemporaryDirectory() as tmp:
            gru = soak(one_iteration_policy(args.config, Path(tmp) / "gru", args.overrides, "gru"), args)
            mlp = soak(one_iteration_policy(args.config, Path(tmp) / "mlp", args.overrides, "null"), args)
        for name, s in (("GRU", gru), ("MLP", mlp)):
            print(f"{name} control step: compute p50 {s['compute_ms']['p50']:.3f} ms, p99 {s['compute_ms']['p99']:.3f} ms; "
                  f"latency p99 {s['latency_ms']['p99']:.3f} ms (budget <= 5 ms: {'pass' if s['latency_ms']['p99'] <= 5 else 'FAIL'})")
        result.update(soak_gru=gru, soak_mlp=mlp)
    return result


if __name__ == "__main__":
    main()
