"""Real-time soak: K robots' policies paced to their control rate in wall-clock time; latency and deadline misses.

Each robot is what ``unilab play`` runs (:class:`trainers.play.Player`): a plain MuJoCo Go1
(or any deploy-spec robot), its observation rebuilt by the deploy spec
(:class:`unilab_robot.deploy.PolicyIO`), ``policy.onnx`` of the chosen precision on
onnxruntime (CPU, one thread, batch 1) and the NumPy safety guard in the loop. Every robot
has its own clock: tick ``k`` of robot ``i`` is released at ``t0 + phase_i + k * period``
(wall clock, ``CLOCK_MONOTONIC``), the robot sleeps until then, acts, then its simulated
world steps the physics of one control period. For ``--duration-s`` seconds.

Per control step (``release`` = the tick's scheduled time):

* **latency** = action written - release: the wake-up delay (OS scheduling, and the GIL in
  ``--workers thread``, the other robots in ``--workers loop``) + observation build +
  inference + guard + ``ctrl`` write. ``--include-physics`` measures to the end of the
  physics substeps instead (what a simulation loop must also fit in the period);
* **compute** = action written - start of the work (observation + inference + guard alone);
* **wake** = start of the work - release; **physics** = the substeps (+ a reset after a fall
  or at an episode's end): the simulated world, not the robot's computer.

A **deadline miss** is a step whose latency exceeds the deadline (``--deadline-ms``; default
one period: the action must be out before the next tick), or a **missed tick**: a loop that
wakes after its next tick was already released skips to the newest tick (as a robot's loop
reads the newest sensor data rather than run stale steps back to back) and each skipped tick
counts as a miss. Percentiles are nearest-rank (``p99``: the smallest latency that at least
99% of the steps meet).

Concurrency (``--workers``): ``process`` (default) runs each robot in its own process, forked
from a server that imported the play stack once (``multiprocessing`` forkserver): what a
robot runs, one control program with its own interpreter, and no GIL shared between robots.
``thread`` runs K threads in one process: onnxruntime's ``run`` and ``mj_step`` release the
GIL, but observation building and the guard are NumPy on small arrays and hold it, so a robot
that wakes may wait for another robot's Python (``sys.getswitchinterval()``, 5 ms by default,
bounds a wait behind pure Python). ``loop`` runs one thread that serves all K robots
earliest-release-first: no contention, but a robot waits for the robots released before it
(queueing is in its latency). ``--rt-priority N`` runs the control loops under ``SCHED_FIFO``
priority N (root or CAP_SYS_NICE), as a robot's control loop runs; the default is the normal
scheduler, competing with whatever else runs.

    python benchmarks/realtime_soak.py                                            # 16 Go1, 50 Hz, 3 min, int8 + guard
    python benchmarks/realtime_soak.py --robots 16 --duration-s 20 --json soak.json
    python benchmarks/realtime_soak.py --sweep --sweep-duration-s 10             # where it breaks: K x rate

``--precision fp16|int8`` exports the policy with ``unilab export RUN --precision P --out
DIR/P/policy.onnx`` (the CLI's own conversion and action-error check) into a temporary folder
or ``--export-dir`` (kept and reused); ``fp32`` plays the policy folder's own ``policy.onnx``.
Nothing is written into the policy folder. ``--rate-hz`` other than the spec's rate paces the
same control step at that rate (the simulated robot then runs faster or slower than real
time): a load test of the computer, not of the policy at another rate.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one thread per robot
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.soak.fleets import FLEETS, WORKERS, RobotConfig  # noqa: E402
from benchmarks.soak.pacing import PHASES, phases  # noqa: E402
from benchmarks.soak.stats import first_break, summarize  # noqa: E402

DEFAULT_POLICY = "policies/go1_joystick_real"


# --- the policy of a precision -----------------------------------------------------------------


def policy_folder(policy: str, precision: str, export_dir: Path) -> Path:
    """The folder holding ``policy.onnx`` + ``deploy_spec.json`` of ``precision``: the policy folder for
    fp32, else ``export_dir/<precision>/`` written by ``unilab export --precision`` (reused if there)."""
    from unilab_robot.deploy import load_spec

    if precision == "fp32":
        return Path(policy)
    out = export_dir / precision
    if not (out / "policy.onnx").is_file():
        code = ("import sys; from trainers.cli import main; "
                f"sys.exit(main(['export', {policy!r}, '--out', {str(out / 'policy.onnx')!r}, "
                f"'--precision', {precision!r}]))")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=Path(__file__).resolve().parents[1])
        if done.returncode != 0:
            raise SystemExit(f"unilab export {policy} --precision {precision} failed:\n{done.stdout}{done.stderr}")
    spec = load_spec(out)
    if spec.precision.name != precision:
        raise SystemExit(f"{out} holds a {spec.precision.name} policy, not {precision}")
    return out


# --- the runs -------------------------------------------------------------------------------------


def machine() -> dict:
    import mujoco
    import onnxruntime

    from unilab_envs.threads import cpu_model

    return {"cpu": cpu_model(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "onnxruntime": onnxruntime.__version__, "mujoco": mujoco.__version__,
            "loadavg_before": list(os.getloadavg())}


def run_point(fleet, k: int, rate_hz: float, duration_s: float, args) -> dict:
    period_ns = round(1e9 / rate_hz)
    phase = phases(args.phases, k, period_ns, args.seed)
    lead_ns = round(max(0.2, 0.02 * k) * 1e9)  # time to hand t0 to every robot before it comes
    load = os.getloadavg()[0]
    records, counters = fleet.run(k, period_ns, phase, round(duration_s * 1e9), lead_ns)
    deadline_ns = round(args.deadline_ms * 1e6) if args.deadline_ms else period_ns
    s = summarize(records, period_ns, deadline_ns, args.include_physics)
    s.update(rate_hz=rate_hz, duration_s=duration_s, loadavg_1min_before=load,
             falls=sum(c["falls"] for c in counters), episodes_ended=sum(c["episodes"] for c in counters),
             guard_trips=sum(c["guard_trips"] for c in counters))
    s["passes"] = s["misses"] == 0 and s["latency_ms"]["p99"] <= args.p99_budget_ms
    return s


HEADER = ("| robots | rate | steps | misses (late + skipped) | latency p50 / p99 / max | compute p50 / p99 / max "
          "| wake p99 | physics p50 | falls | load | verdict |")


def row(s: dict) -> str:
    lat, com = s["latency_ms"], s["compute_ms"]
    return (f"| {s['robots']} | {s['rate_hz']:g} Hz | {s['steps']} | {s['misses']} ({s['late']} + {s['skipped']}) "
            f"| {lat['p50']:.3f} / {lat['p99']:.3f} / {lat['max']:.2f} ms "
            f"| {com['p50']:.3f} / {com['p99']:.3f} / {com['max']:.2f} ms | {s['wake_ms']['p99']:.3f} ms "
            f"| {s['physics_ms']['p50']:.3f} ms | {s['falls']} | {s['loadavg_1min_before']:.1f} "
            f"| {'pass' if s['passes'] else 'FAIL'} |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--policy", default=DEFAULT_POLICY, help=f"policy folder with a checkpoint (default {DEFAULT_POLICY})")
    p.add_argument("--robots", type=int, default=16, help="robots at once (default 16)")
    p.add_argument("--rate-hz", type=float, default=None, help="control rate (default: the deploy spec's)")
    p.add_argument("--duration-s", type=float, default=180.0, help="wall-clock seconds (default 180)")
    p.add_argument("--precision", choices=("fp32", "fp16", "int8"), default="int8", help="ONNX precision (default int8)")
    p.add_argument("--guard", action=argparse.BooleanOptionalAction, default=True,
                   help="the safety guard in the loop (default on: the spec's section, else the defaults)")
    p.add_argument("--workers", choices=WORKERS, default="process",
                   help="process: one process per robot (default); thread: one thread per robot; loop: one thread "
                        "serving all robots")
    p.add_argument("--phases", choices=PHASES, default="random",
                   help="each robot's tick offset: random (default; independent clocks), spread evenly, aligned")
    p.add_argument("--deadline-ms", type=float, default=None, help="deadline after the tick (default: one period)")
    p.add_argument("--p99-budget-ms", type=float, default=5.0, help="latency p99 that passes (default 5)")
    p.add_argument("--include-physics", action="store_true",
                   help="latency and deadline to the end of the physics substeps, not to the action")
    p.add_argument("--rt-priority", type=int, default=0, help="SCHED_FIFO priority of the control loops (default 0: off)")
    p.add_argument("--seed", type=int, default=0, help="robot i is seeded seed + i; phases are drawn from seed")
    p.add_argument("--export-dir", type=Path, default=None,
                   help="where fp16/int8 exports go and are reused (default: a temporary folder)")
    p.add_argument("--sweep", action="store_true", help="sweep --sweep-robots x --sweep-rates instead of one run")
    p.add_argument("--sweep-robots", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32, 64])
    p.add_argument("--sweep-rates", type=float, nargs="+", default=[50, 100, 200, 500, 1000])
    p.add_argument("--sweep-duration-s", type=float, default=10.0, help="seconds per sweep point (default 10)")
    p.add_argument("--json", type=Path, default=None, metavar="OUT", help="write every result as JSON")
    args = p.parse_args(argv)
    if args.robots < 1 or min(args.sweep_robots) < 1:
        p.error("robot counts must be >= 1")

    with contextlib.ExitStack() as stack:
        export_dir = args.export_dir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="soak-")))
        folder = policy_folder(args.policy, args.precision, export_dir)
        from unilab_robot.deploy import load_spec

        spec = load_spec(folder)
        info = machine()
        rate = args.rate_hz or spec.timing.control_hz
        robots = max(args.sweep_robots) if args.sweep else args.robots
        print(f"{spec.task.id} from {args.policy} ({args.precision}, {folder}); guard {'on' if args.guard else 'off'}; "
              f"workers {args.workers}; phases {args.phases}; {info['cpu']} x {info['cpus']} CPUs; load average "
              f"{' '.join(f'{x:.2f}' for x in info['loadavg_before'])}; onnxruntime {info['onnxruntime']}, "
              f"mujoco {info['mujoco']}, python {info['python']}"
              + (f"; GIL switch interval {sys.getswitchinterval() * 1e3:g} ms" if args.workers == "thread" else "")
              + (f"; SCHED_FIFO {args.rt_priority}" if args.rt_priority else ""), flush=True)
        configs = [RobotConfig(str(folder), args.seed + i, args.guard) for i in range(robots)]
        t_build = time.perf_counter()
        fleet = FLEETS[args.workers](configs, args.rt_priority)
        stack.callback(fleet.close)
        print(f"{robots} robots ready in {time.perf_counter() - t_build:.1f} s; latency = "
              + ("tick to end of physics" if args.include_physics else "tick to action (obs + inference + guard)")
              + "\n", flush=True)
        print(HEADER + "\n" + "|---" * HEADER.count(" | ") + "|---|", flush=True)
        points = []
        if args.sweep:
            for r in sorted(args.sweep_rates):
                for k in sorted(args.sweep_robots):
                    s = run_point(fleet, k, r, args.sweep_duration_s, args)
                    points.append(s)
                    print(row(s), flush=True)
                    if s["misses"]:
                        break  # more robots at this rate only miss more
        else:
            s = run_point(fleet, args.robots, rate, args.duration_s, args)
            points.append(s)
            print(row(s), flush=True)
    result = {"policy": args.policy, "task": spec.task.id, "precision": args.precision, "guard": args.guard,
              "workers": args.workers, "phases": args.phases, "rt_priority": args.rt_priority,
              "p99_budget_ms": args.p99_budget_ms, "machine": info, "loadavg_after": list(os.getloadavg()),
              "command": " ".join(["benchmarks/realtime_soak.py", *(argv if argv is not None else sys.argv[1:])]),
              "points": points}
    if args.sweep:
        breaks = first_break(points, args.p99_budget_ms)
        result["breaks"] = {str(k): v for k, v in breaks.items()}
        print()
        for r, b in breaks.items():
            print(f"{r:g} Hz: holds up to {b['holds'] or 0} robots; "
                  + (f"breaks at {b['breaks']} ({b['why']})" if b["breaks"] else "no break in the sweep"))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1))
    return 0 if all(s["passes"] for s in points) or args.sweep else 1


if __name__ == "__main__":
    raise SystemExit(main())
