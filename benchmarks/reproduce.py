"""Does every training headline reproduce with the command a user types? Runs it at several seeds.

Each headline of the README and the results pages is one row of :data:`HEADLINES`: the exact command a
user types (``unilab train ...`` with no flag the user would not pass; this script adds only ``--seed``
and ``--out``), the target it claims, and how it is judged: ``unilab eval RUN --episodes 256`` (the
deterministic policy, seed set 12345) and the steps and wall clock of the run. A seed *meets* the
target when every bound holds. The table says, per headline, the rate (seeds that met it), the median
and the worst result, and steps and wall clock per seed; docs/results/reproduce.md keeps the measured
rows, and this script prints that page's row for the headline beside what it measured.

    python benchmarks/reproduce.py --quick                      # the headlines under ~10 min a run, 5 seeds
    python benchmarks/reproduce.py --only ppo_reach --seeds 0 1 2 3 4
    python benchmarks/reproduce.py --only sac_grasp --seeds 0 --threads 1   # the 1-thread setting
    python benchmarks/reproduce.py --list

Runs go to ``--out`` (default ``runs/reproduce``), one folder per headline and seed; a folder that already
holds a finished run (its ``eval.txt``) is judged again, not retrained, so an interrupted sweep goes on.
Wall clocks are only comparable on a quiet machine: say in the report whether others ran beside it.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "docs" / "results" / "reproduce.md"
EVAL_EPISODES = 256

#: what ``unilab eval`` prints, by the metric names the targets use
METRICS = {
    "success": re.compile(r"success ([\d.]+)%"),
    "falls": re.compile(r"terminated ([\d.]+)%"),
    "tracking": re.compile(r"velocity tracking ([\d.]+)% of max"),
    "body_cm": re.compile(r"tracking_error_cm ([\d.]+)"),
}


@dataclass(frozen=True)
class Bound:
    """One inequality a seed's result must satisfy, e.g. ``Bound("success", ">=", 95)``."""

    metric: str  # a METRICS key, "steps" or "wall_s"
    op: str  # ">=" or "<=" or "<"
    value: float

    def holds(self, result: dict[str, float]) -> bool:
        got = result.get(self.metric)
        if got is None:
            return False
        return {">=": got >= self.value, "<=": got <= self.value, "<": got < self.value}[self.op]

    def __str__(self) -> str:
        return f"{self.metric} {self.op} {self.value:g}"


@dataclass(frozen=True)
class Headline:
    """A training claim: the user's command, its bounds, how it is evaluated."""

    key: str
    claim: str
    command: tuple[str, ...]  # after `unilab`, without --seed / --out
    bounds: tuple[Bound, ...]
    minutes_alone: float  # roughly, on a quiet 2-vCPU VM: what --quick selects on
    eval_args: tuple[str, ...] = ()
    #: a second stage: the key of the headline whose run (same seed) this one goes on from with ``--init-from``;
    #: that run is trained first unless its folder holds it, and steps and wall clock are the two stages' sums
    after: str | None = None

    @property
    def quick(self) -> bool:
        return self.minutes_alone <= 10


HEADLINES = (
    Headline("ppo_reach", "UR5Reach with the bundled PPO: >= 95% success, the stop rule ends it near 274k steps",
             ("train", "--task", "UniLab/UR5Reach-v0"), (Bound("success", ">=", 95),), 1),
    Headline("sac_reach", "UR5Reach with the bundled SAC: >= 95% success in fewer steps than PPO's 274k",
             ("train", "--algo", "sac", "--task", "UniLab/UR5Reach-v0"),
             (Bound("success", ">=", 95), Bound("steps", "<", 274_000)), 8),
    Headline("ppo_go1_fast", "A walking Go1 in 198 s on 2 cores (go1_joystick_fast.yaml): tracking >= 70% of max, "
             "falls < 5%", ("train", "--config", "trainers/configs/go1_joystick_fast.yaml"),
             (Bound("tracking", ">=", 70), Bound("falls", "<", 5)), 5),
    Headline("ppo_grasp", "UR5Grasp with the bundled PPO: >= 94% success, the stop rule ends it near 1.27M steps",
             ("train", "--task", "UniLab/UR5Grasp-v0"), (Bound("success", ">=", 94),), 15),
    Headline("sac_grasp", "UR5Grasp with the bundled SAC: >= 94% success by 0.5M steps",
             ("train", "--algo", "sac", "--task", "UniLab/UR5Grasp-v0"),
             (Bound("success", ">=", 94), Bound("steps", "<=", 500_000)), 5),
    Headline("sac_grasp_real", "UR5Grasp with SAC under ur5_grasp_real: >= 94% under the profile in <= 1.5M steps",
             ("train", "--algo", "sac", "--config", "trainers/configs/ur5_grasp_real_sac.yaml"),
             (Bound("success", ">=", 94), Bound("steps", "<=", 1_500_000)), 100),
    Headline("sac_go1", "The Go1 walks with the bundled SAC (go1_joystick_sac.yaml): tracking >= 70%, falls < 5%",
             ("train", "--algo", "sac", "--config", "trainers/configs/go1_joystick_sac.yaml"),
             (Bound("tracking", ">=", 70), Bound("falls", "<", 5)), 120),
    Headline("ppo_g1", "The G1 walks in <= 2 h on 2 cores: tracking >= 60% of max, falls < 5%",
             ("train", "--task", "UniLab/G1Joystick-v0"),
             (Bound("tracking", ">=", 60), Bound("falls", "<", 5), Bound("wall_s", "<=", 7200)), 120),
    Headline("go1_real", "The Go1 under go1_real from scratch (go1_joystick_fast.yaml, then go1_joystick_real.yaml "
             "--init-from it): falls < 2%, tracking >= 85% of max, <= 30 min",
             ("train", "--config", "trainers/configs/go1_joystick_real.yaml"),
             (Bound("falls", "<", 2), Bound("tracking", ">=", 85), Bound("wall_s", "<=", 1800)), 25,
             eval_args=("--sim2real", "go1_real"), after="ppo_go1_fast"),
    Headline("g1_track", "The G1 tracks the 37 clips (g1_track.yaml, bare): >= 90% to the clip's end, body error <= 6 cm",
             ("train", "--config", "trainers/configs/g1_track.yaml"),
             (Bound("success", ">=", 90), Bound("body_cm", "<=", 6)), 65),
    Headline("g1_track_real", "The G1 tracks the clips under g1_track_real (g1_track.yaml, then g1_track_real.yaml "
             "--init-from it): >= 80% to the clip's end under the profile, <= 4 h",
             ("train", "--config", "trainers/configs/g1_track_real.yaml"),
             (Bound("success", ">=", 80), Bound("wall_s", "<=", 4 * 3600)), 145, after="g1_track"),
)
BY_KEY = {h.key: h for h in HEADLINES}


def parse_eval(text: str) -> dict[str, float]:
    """The metrics of ``unilab eval``'s summary line (those it printed)."""
    return {name: float(m.group(1)) for name, pattern in METRICS.items() if (m := pattern.search(text))}


def final_steps(run: Path) -> float | None:
    """The last ``step`` of the run's progress.csv (the env steps it trained for)."""
    path = run / "progress.csv"
    if not path.exists():
        return None
    with path.open() as f:
        rows = list(csv.DictReader(f))
    return float(rows[-1]["step"]) if rows else None


def unilab(*args: str, log: Path, threads: int | None) -> float:
    """Run ``unilab ARGS`` (this checkout's CLI), its output into ``log``; returns its wall clock."""
    env = dict(os.environ)
    if threads is not None:
        env["UNILAB_NUM_THREADS"] = str(threads)
    start = time.perf_counter()
    with log.open("w") as out:
        done = subprocess.run([sys.executable, "-m", "trainers.cli", *args], stdout=out, stderr=subprocess.STDOUT,
                              env=env, cwd=Path(__file__).resolve().parent.parent)
    if done.returncode != 0:
        raise RuntimeError(f"`unilab {' '.join(args)}` exited {done.returncode}; see {log}")
    return time.perf_counter() - start


def run_folder(h: Headline, seed: int, out: Path) -> Path:
    """Where one seed of a headline trains."""
    return out / h.key / f"seed{seed}"


def run_seed(h: Headline, seed: int, out: Path, threads: int | None) -> dict[str, float]:
    """Train (unless the folder holds a finished run) and evaluate one seed of a headline; a second stage
    (``h.after``) first runs or reuses its first stage's seed and adds that stage's steps and wall clock."""
    first = run_seed(BY_KEY[h.after], seed, out, threads) if h.after else {}
    run = run_folder(h, seed, out)
    judged = run / "eval.txt"
    wall_file = run / "wall_s.txt"
    if not judged.exists():
        run.parent.mkdir(parents=True, exist_ok=True)
        extra = ("--torch-threads", str(threads)) if threads is not None else ()
        if h.after:
            extra += ("--init-from", str(run_folder(BY_KEY[h.after], seed, out)))
        wall = unilab(*h.command, *extra, "--seed", str(seed), "--out", str(run), log=run.parent / f"seed{seed}.log",
                      threads=threads)
        wall_file.write_text(f"{wall:.1f}\n")
        unilab("eval", str(run), "--episodes", str(EVAL_EPISODES), "--no-progress", *h.eval_args,
               log=judged, threads=threads)
    result = parse_eval(judged.read_text())
    result["steps"] = (final_steps(run) or float("nan")) + first.get("steps", 0.0)
    if wall_file.exists():
        result["wall_s"] = float(wall_file.read_text()) + first.get("wall_s", 0.0)
    return result


def page_row(key: str) -> str:
    """The reproduce page's table row for ``key`` (``| key | ...``), or a note that it has none."""
    if PAGE.exists():
        for line in PAGE.read_text().splitlines():
            if line.startswith(f"| `{key}`"):
                return line
    return f"(no row for {key} in {PAGE.name})"


def summary(h: Headline, results: dict[int, dict[str, float]]) -> str:
    """Rate, median and worst of the headline's first bound's metric, steps and wall per seed."""
    met = [s for s, r in results.items() if all(b.holds(r) for b in h.bounds)]
    main = h.bounds[0]
    values = [r.get(main.metric, float("nan")) for r in results.values()]
    worst = min(values) if main.op == ">=" else max(values)
    per_seed = "; ".join(f"seed {s}: {r.get(main.metric, float('nan')):.1f}, {r['steps'] / 1e6:.2f}M steps, "
                         f"{r.get('wall_s', float('nan')):.0f} s" for s, r in sorted(results.items()))
    return (f"{h.key}: met {len(met)} of {len(results)} ({', '.join(map(str, h.bounds))}); {main.metric} median "
            f"{statistics.median(values):.1f}, worst {worst:.1f}\n  {per_seed}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="only the headlines under ~10 min a run")
    parser.add_argument("--only", nargs="+", choices=sorted(BY_KEY), help="these headlines")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--threads", type=int, default=None,
                        help="UNILAB_NUM_THREADS and --torch-threads (default: the user's default threads)")
    parser.add_argument("--out", type=Path, default=Path("runs/reproduce"))
    parser.add_argument("--list", action="store_true", help="print the headlines and their commands")
    args = parser.parse_args(argv)
    chosen = [BY_KEY[k] for k in args.only] if args.only else [h for h in HEADLINES if h.quick or not args.quick]
    if args.list:
        for h in chosen:
            then = f" --init-from <{h.after}'s run>" if h.after else ""
            print(f"{h.key:15s} ~{h.minutes_alone:g} min  unilab {' '.join(h.command)}{then}\n{'':15s} {h.claim}")
        return
    out = args.out.resolve() / (f"threads{args.threads}" if args.threads else "default_threads")
    for h in chosen:
        results = {seed: run_seed(h, seed, out, args.threads) for seed in args.seeds}
        print(summary(h, results))
        print(f"  page: {page_row(h.key)}", flush=True)


if __name__ == "__main__":
    main()
