"""``unilab bench``: one table of side-by-side ratios (see ``trainers/bench/__init__.py``).

    unilab bench [--quick] [--rows 1,2,3,4,5] [--out DIR] [--device auto|cpu|cuda] [--threads N]
    python -m trainers.bench ...
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
import traceback
from pathlib import Path

from trainers.cli_checks import positive_int

ROWS = {1: "post-processing kernels", 2: "env step vs mujoco.batch floor", 3: "rollout storage",
        4: "PPO update", 5: "end to end", 6: "two-half overlapped collection", 7: "off-policy replay on the device"}


@dataclasses.dataclass(frozen=True)
class Sizes:
    post_envs: int
    env_envs: int
    env_steps: int
    env_rounds: int
    storage_envs: int
    update_envs: int
    num_steps: int
    e2e_envs: int
    e2e_iters: int
    rounds: int
    post_reps: int  # row 1: alternating repetitions per path, each call after its own physics step


def pick_sizes(quick: bool, cuda: bool) -> Sizes:
    if quick:
        return Sizes(1024, 32, 3, 1, 64, 64, 8, 32, 2, 1, 3)
    if cuda:
        return Sizes(8192, 4096, 20, 5, 4096, 4096, 24, 4096, 5, 5, 15)
    return Sizes(8192, 1024, 10, 5, 1024, 512, 24, 1024, 5, 5, 15)  # rows 5-6 at the Go1 training size


def parse_rows(text: str) -> list[int]:
    try:
        rows = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"--rows takes comma-separated row numbers like 1,2,3, got {text!r}") from None
    bad = [r for r in rows if r not in ROWS]
    if bad or not rows:
        raise argparse.ArgumentTypeError(f"unknown rows {bad or text!r}; rows are {sorted(ROWS)}")
    return rows


DESCRIPTION = "Side-by-side performance ratios, one table. Rows: " + "; ".join(f"{k} {v}" for k, v in ROWS.items())


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m trainers.bench`` (``unilab bench`` adds the same arguments)."""
    p = argparse.ArgumentParser(prog="unilab bench", description=DESCRIPTION)
    add_arguments(p)
    return p


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The bench's options, added to ``p``: one definition for ``unilab bench`` and ``python -m trainers.bench``."""
    p.add_argument("--quick", action="store_true", help="small sizes (tests / CI); ratios are not meaningful")
    p.add_argument("--rows", type=parse_rows, default=[1, 2, 3, 4, 5],
                   help="comma-separated rows (default 1,2,3,4,5; row 6 is opt-in)")
    p.add_argument("--out", type=Path, default=Path("runs/bench"), help="folder for bench.json and bench.png")
    p.add_argument("--device", default="auto", help="learner device for rows 3-5: auto, cpu, cuda[:i]")
    p.add_argument("--threads", type=positive_int, default=None, help="CPU threads (default: UNILAB_NUM_THREADS or all)")
    p.add_argument("--tasks", nargs="+", default=None, help="tasks for row 2 (default: all registered)")


def run_row(row: int, sizes: Sizes, device, threads: int, tasks: list[str]) -> list[dict]:
    if row == 1:
        from .postprocess import bench_postprocess
        return bench_postprocess(sizes.post_envs, threads, reps=sizes.post_reps)
    if row == 2:
        from .end_to_end import bench_env_vs_floor
        return bench_env_vs_floor(tasks, sizes.env_envs, threads, sizes.env_steps, sizes.env_rounds)
    if row == 3:
        from .storage import bench_storage
        return bench_storage(sizes.storage_envs, sizes.num_steps, 101, 29, device, rounds=sizes.rounds)
    if row == 4:
        from .update import G1_LEARNER, GO1_LEARNER, bench_update, bench_update_precision
        return (bench_update(sizes.update_envs, sizes.num_steps, 101, 29, device, rounds=sizes.rounds)
                + [r for learner in (GO1_LEARNER, G1_LEARNER)  # fp32 vs bf16 at the training configs' size
                   for r in bench_update_precision(sizes.e2e_envs, sizes.num_steps, learner, device,
                                                   rounds=sizes.rounds)])
    if row == 5:
        from trainers.common.mixed_precision import cpu_has_bf16

        from .end_to_end import bench_end_to_end
        has_bf16 = device.type == "cuda" or cpu_has_bf16()
        return [r for amp in ((False, True) if has_bf16 else (False,))
                for r in bench_end_to_end("UniLab/Go1Joystick-v0", sizes.e2e_envs, sizes.num_steps,
                                          sizes.e2e_iters, device, amp=amp)]
    if row == 7:
        from .replay import bench_replay
        return bench_replay(device, rounds=sizes.rounds, updates=10 if sizes.rounds == 1 else 40,
                            transitions=20_000 if sizes.rounds == 1 else 200_000)
    if row == 6:
        from .overlap import bench_overlap
        return bench_overlap("UniLab/Go1Joystick-v0", sizes.e2e_envs, sizes.num_steps, sizes.e2e_iters, device)
    raise ValueError(row)


def main(argv: list[str] | None = None) -> int:
    """``python -m trainers.bench [options]``; returns the exit status."""
    return run(build_parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """Measure the rows ``args`` asks for (parsed by :func:`add_arguments`'s options), print the
    table, write bench.json and bench.png; 1 if a row failed, 2 for an unusable device."""
    import unilab_envs  # thread policies before torch / numba start their pools; registers tasks
    from trainers.common.device import resolve_device
    from unilab_envs.threads import configure_threads

    from . import report, stats

    threads = configure_threads(args.threads)
    try:
        device = resolve_device(args.device)
    except (RuntimeError, ValueError) as e:
        print(f"unilab bench: {e}", file=sys.stderr)
        return 2
    sizes = pick_sizes(args.quick, device.type == "cuda")
    tasks = args.tasks or sorted(unilab_envs.TASKS)
    machine = report.machine_info(threads, str(device))
    machine["quick"] = bool(args.quick)
    print(f"unilab bench: rows {args.rows} on {device} with {threads} threads"
          f"{' (quick sizes: ratios not meaningful)' if args.quick else ''}", flush=True)
    rows: list[dict] = []
    for r in args.rows:
        t0 = time.perf_counter()
        try:
            got = run_row(r, sizes, device, threads, tasks)
        except Exception as e:  # one broken row must not hide the others
            traceback.print_exc()
            got = [{"section": ROWS[r], "name": ROWS[r], "ratio": math.nan, "budget": None,
                    "error": f"{type(e).__name__}: {e}"}]
        for g in got:
            g["row"], g["seconds"] = r, round(time.perf_counter() - t0, 2)
            stats.finish(g)
        rows += got
        print(f"  row {r} ({ROWS[r]}) done in {time.perf_counter() - t0:.1f}s", flush=True)
    machine["numba_threading_layer"] = report.numba_layer()  # launched by now: the layer that ran
    print(report.format_table(machine, rows))
    args.out.mkdir(parents=True, exist_ok=True)
    js = report.write_json(args.out / "bench.json", machine, rows)
    png = report.write_png(args.out / "bench.png", machine, rows)
    print(f"wrote {js} and {png}")
    return 1 if any(r.get("error") for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
