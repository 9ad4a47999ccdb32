"""fp16 / int8 action error of sim-to-real policies: on the bare task and under the policy's own profile.

For each run and precision, ``unilab export RUN --precision P --out TMP/P/policy.onnx`` (the
CLI's own check: 800 observations recorded bare and 800 under the run's ``sim2real`` profile,
the bound on the worse) and reads the errors back from the written deploy spec's
``precision.measured``. Prints one Markdown table; nothing is written into the run folders.

    python benchmarks/export_precision_profile.py                     # the shipped _real policies
    python benchmarks/export_precision_profile.py policies/go1_joystick_real
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trainers import cli  # noqa: E402
from unilab_robot.deploy import load_spec  # noqa: E402

REAL = ["policies/go1_joystick_real", "policies/g1_joystick_real", "policies/ur5_grasp_real"]


def measure(run: str, precision: str, work: Path):
    """The written spec's precision section of ``unilab export RUN --precision P`` (forced, so an error over
    the bound is measured too), and whether the export passed its bound."""
    target = work / precision / "policy.onnx"
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["export", run, "--out", str(target), "--precision", precision, "--force"])
    if code != 0:
        raise SystemExit(f"unilab export {run} --precision {precision} failed (exit {code})")
    p = load_spec(target.parent).precision
    return p, p.max_action_error <= p.bound


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", default=REAL, help="run or policy folders (default: the shipped _real ones)")
    args = parser.parse_args(argv)
    print("| policy | precision | bare task: max / mean | own profile: max / mean | profile / bare (max) | bound | within |")
    print("|---|---|---|---|---|---|---|")
    for run in args.runs:
        for precision in ("fp16", "int8"):
            with tempfile.TemporaryDirectory(prefix="export-precision-profile-") as work:
                p, ok = measure(run, precision, Path(work))
            sets = {m.on: m for m in p.measured}
            bare = sets.pop("bare task")
            (on, prof), = sets.items() if sets else ((None, None),)
            cell = (lambda m: f"{m.max_action_error:.4f} / {m.mean_action_error:.5f}")
            print(f"| `{run}` | {precision} | {cell(bare)} | {cell(prof) + f' ({on})' if prof else '-'} | "
                  f"{prof.max_action_error / bare.max_action_error:.2f}x | {p.bound:g} | {'yes' if ok else 'NO'} |"
                  if prof else f"| `{run}` | {precision} | {cell(bare)} | - | - | {p.bound:g} | {'yes' if ok else 'NO'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
