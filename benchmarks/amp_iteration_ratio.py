"""A committed training config in float32 vs bf16 (``algo.amp``): wall clock per training iteration.

Builds the config's runner twice in one process (``algo.amp=false`` and ``algo.amp=true``, same
seed, same env count and rollout) and alternates full training iterations (collect + update)
between them, so both see the same machine load; prints the median seconds per iteration of
each and their ratio. With a measured float32 wall clock to a target (``--fp32-seconds``) it also
prints the bf16 wall clock the ratio predicts, which holds if bf16 needs the same steps (checked
separately by the learning tests, not here).

    python benchmarks/amp_iteration_ratio.py --config trainers/configs/g1_joystick.yaml \
        --iterations 12 --fp32-seconds 7206
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np

from trainers.ppo.config import load_config
from trainers.ppo.runner import Runner


def _runner(config: str, amp: bool, out: str, overrides: list[str]) -> Runner:
    cfg = load_config(config_file=config, overrides=[*overrides, f"algo.amp={str(amp).lower()}", "init_from=null",
                                                     "log.tensorboard=false", "log.csv=false", "log.progress=false",
                                                     "log.plot=false"], out=out, seed=0)
    runner = Runner(cfg)
    runner.collector.reset(seed=0)
    runner.algo.update_normalizers(*runner.collector.initial_moments())
    return runner


def _iteration_seconds(runner: Runner) -> float:
    t0 = time.perf_counter()
    runner.collector.collect(runner.storage)
    runner.algo.update(runner.storage, runner.generator)
    return time.perf_counter() - t0


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default="trainers/configs/g1_joystick.yaml")
    p.add_argument("--iterations", type=int, default=12, help="timed iterations of each (after one warm-up)")
    p.add_argument("--fp32-seconds", type=float, default=None,
                   help="a measured float32 wall clock to the target, to scale by the ratio")
    p.add_argument("overrides", nargs="*", metavar="key=value")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        fp32, bf16 = _runner(args.config, False, a, args.overrides), _runner(args.config, True, b, args.overrides)
        try:
            _iteration_seconds(fp32), _iteration_seconds(bf16)  # warm up (Numba, allocator, kernels)
            t_fp32, t_bf16 = [], []
            for _ in range(args.iterations):
                t_fp32.append(_iteration_seconds(fp32))
                t_bf16.append(_iteration_seconds(bf16))
            steps = fp32.cfg.num_envs * fp32.cfg.algo.num_steps
        finally:
            fp32.close()
            bf16.close()
    s32, s16 = float(np.median(t_fp32)), float(np.median(t_bf16))
    result = {"config": args.config, "steps_per_iteration": steps, "fp32_s": s32, "bf16_s": s16, "speedup": s32 / s16}
    print(f"{args.config}: {steps} steps per iteration, median of {args.iterations}: "
          f"float32 {s32:.2f} s, bf16 {s16:.2f} s, bf16 {s32 / s16:.2f}x faster")
    if args.fp32_seconds:
        result["bf16_predicted_s"] = args.fp32_seconds * s16 / s32
        print(f"float32 to the target {args.fp32_seconds:.0f} s -> bf16 {result['bf16_predicted_s']:.0f} s "
              f"(if it needs the same steps)")
    return result


if __name__ == "__main__":
    main()
