"""The off-policy learner's replay buffer on its device vs a host NumPy buffer copied per batch (SB3-style).

What is compared and how: :mod:`trainers.bench.replay` (``unilab bench --rows 7`` runs the same).
Prints host / device time per update (sample + update) and for the sampling alone (> 1: the device
buffer is faster), and the learner's updates/s at the batch size with the device buffer.

    python benchmarks/replay_ratio.py [--device cpu|cuda] [--batch 512] [--rounds 7] [--updates 40]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trainers.bench.replay import bench_replay  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--obs-dim", type=int, default=33)
    p.add_argument("--action-dim", type=int, default=6)
    p.add_argument("--transitions", type=int, default=200_000)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--updates", type=int, default=40, help="updates per round and buffer")
    args = p.parse_args()
    rows = bench_replay(torch.device(args.device), args.batch, args.obs_dim, args.action_dim, args.transitions,
                        args.rounds, args.updates)
    for row in rows:
        print(f"{row['name']}\n  host {row['baseline']:.2f} {row['unit']}, device {row['ours']:.2f} {row['unit']}: "
              f"host / device {row['ratio']:.2f}x (IQR {row['ratio_iqr'][0]:.2f}-{row['ratio_iqr'][1]:.2f})")


if __name__ == "__main__":
    main()
