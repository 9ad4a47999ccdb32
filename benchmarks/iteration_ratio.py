"""A committed training config in two variants (float32 vs bf16 by default): wall clock per iteration.

Builds the config's runner twice in one process (by default ``algo.amp=false`` and
``algo.amp=true``; ``--a KEY=VALUE``/``--b KEY=VALUE``, repeatable, set others), same seed,
and alternates full training iterations (collect + update) between them, so both see the same
machine load; prints the median seconds per iteration of each (collection and update apart) and
their ratio. With a measured wall clock of variant A to a target (``--a-seconds``) it also prints
the wall clock the ratio predicts for B, which holds if B needs the same steps (checked by
training runs, not here).

    python benchmarks/iteration_ratio.py --config trainers/configs/g1_joystick.yaml \
        --iterations 12 --a-seconds 7206
"""

from __future__ import annotations

import argparse
import tempfile

import numpy as np

from trainers.bench.end_to_end import prime, timed_iteration
from trainers.ppo.config import load_config
from trainers.ppo.runner import Runner

QUIET = ["init_from=null", "log.tensorboard=false", "log.csv=false", "log.progress=false", "log.plot=false"]


def _runner(config: str, overrides: list[str], out: str) -> Runner:
    runner = Runner(load_config(config_file=config, overrides=[*overrides, *QUIET], out=out, seed=0))
    prime(runner)
    return runner


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default="trainers/configs/g1_joystick.yaml")
    p.add_argument("--a", action="append", metavar="key=value", help="an override of variant A (repeatable; "
                   "default algo.amp=false)")
    p.add_argument("--b", action="append", metavar="key=value", help="an override of variant B (repeatable; "
                   "default algo.amp=true)")
    p.add_argument("--iterations", type=int, default=12, help="timed iterations of each (after one warm-up)")
    p.add_argument("--a-seconds", type=float, default=None, help="a measured wall clock of A to a target, to scale")
    p.add_argument("overrides", nargs="*", metavar="key=value", help="applied to both variants")
    args = p.parse_args(argv)
    args.a, args.b = args.a or ["algo.amp=false"], args.b or ["algo.amp=true"]
    with tempfile.TemporaryDirectory() as out_a, tempfile.TemporaryDirectory() as out_b:
        a = _runner(args.config, [*args.overrides, *args.a], out_a)
        b = _runner(args.config, [*args.overrides, *args.b], out_b)
        try:
            timed_iteration(a), timed_iteration(b)  # warm up (Numba, allocator, kernels)
            times_a, times_b = [], []
            for _ in range(args.iterations):
                times_a.append(timed_iteration(a))
                times_b.append(timed_iteration(b))
            steps = a.cfg.num_envs * a.cfg.algo.num_steps
        finally:
            a.close()
            b.close()
    med_a, med_b = np.median(times_a, axis=0), np.median(times_b, axis=0)
    sec_a, sec_b = float(np.median(np.sum(times_a, axis=1))), float(np.median(np.sum(times_b, axis=1)))
    result = {"config": args.config, "steps_per_iteration": steps, "a_s": sec_a, "b_s": sec_b, "speedup": sec_a / sec_b,
              "a_collect_s": float(med_a[0]), "a_update_s": float(med_a[1]),
              "b_collect_s": float(med_b[0]), "b_update_s": float(med_b[1])}
    print(f"{args.config}: {steps} steps per iteration, median of {args.iterations}")
    for name, over, sec, med in (("A", args.a, sec_a, med_a), ("B", args.b, sec_b, med_b)):
        print(f"  {name} {' '.join(over)}: {sec:.2f} s (collect {med[0]:.2f} s, update {med[1]:.2f} s)")
    print(f"  B is {sec_a / sec_b:.2f}x as fast as A")
    if args.a_seconds:
        result["b_predicted_s"] = args.a_seconds * sec_b / sec_a
        print(f"  A to the target in {args.a_seconds:.0f} s -> B {result['b_predicted_s']:.0f} s (if it needs the same steps)")
    return result


if __name__ == "__main__":
    main()
