"""Env throughput vs the ``mujoco.batch`` floor, side by side in one process.

For every registered task and each N: steps/s of our vector env (zero-cost
policy: a fixed random action batch), of the same model stepped by
``mujoco.batch.Batch`` alone (same N, threads and substeps: the floor), their
ratio (budget >= 0.90), and Gymnasium's ``SyncVectorEnv`` / ``AsyncVectorEnv``
over our single env. The measurements live in ``trainers/bench/env_speed.py`` (row 2 of
``unilab bench`` runs the same code); this script prints them as a table.

    python benchmarks/bench_envs.py [--num-envs 256 1024] [--tasks ...] [--threads 2]
"""

from __future__ import annotations

import argparse
import gc

import unilab_envs
from trainers.bench.env_speed import bench_gymnasium_vector, bench_ours_vs_floor
from unilab_envs.threads import resolve_num_threads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", type=int, nargs="+", default=[256, 1024])
    parser.add_argument("--tasks", nargs="+", default=sorted(unilab_envs.TASKS))
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--async-envs", type=int, default=16, help="AsyncVectorEnv starts one process per env: cap N")
    parser.add_argument("--sync-envs", type=int, default=256, help="SyncVectorEnv holds N whole single envs in memory: cap N")
    parser.add_argument("--skip-gymnasium", action="store_true")
    args = parser.parse_args()
    threads = resolve_num_threads(args.threads)

    print(f"threads={threads}  steps/round={args.steps}  rounds={args.rounds}  (env steps/s; ratio = ours / floor, median)")
    header = f"{'task':<24} {'N':>5} {'ours':>10} {'floor':>10} {'ratio':>6} {'Sync':>15} {'Async':>14} {'ours/Sync':>9}"
    print(header)
    print("-" * len(header))
    for task_id in args.tasks:
        for n in args.num_envs:
            row = bench_ours_vs_floor(task_id, n, threads, args.steps, args.rounds)
            sync = async_ = float("nan")
            async_n = min(n, args.async_envs)
            sync_n = min(n, args.sync_envs)
            if not args.skip_gymnasium:
                # Async first: forking after Sync's N single envs were allocated can exhaust memory
                async_ = bench_gymnasium_vector(task_id, async_n, "async", max(2, args.steps // 2))
                sync = bench_gymnasium_vector(task_id, sync_n, "sync", max(2, args.steps // 4))
                gc.collect()
            name = task_id.split("/")[-1]
            print(
                f"{name:<24} {n:>5} {row['ours']:>10.0f} {row['floor']:>10.0f} {row['ratio']:>6.2f} "
                f"{sync:>7.0f} (N={sync_n:<3}) {async_:>6.0f} (N={async_n:<3}) {row['ours'] / sync:>8.1f}x",
                flush=True,
            )


if __name__ == "__main__":
    main()
