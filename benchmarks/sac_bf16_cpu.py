"""The off-policy update in float32 against ``algo.bf16_cpu`` (bf16 autocast on the CPU), side by side in one process.

At the three recipes' sizes (``trainers/configs/*_sac.yaml``): UR5Reach (33 obs, 6 actions, batch 512,
256x256), UR5Grasp (42 obs + 6 privileged, 4 actions, batch 512, 256x256) and Go1Joystick (50 obs + 25
privileged, 12 actions, batch 1024, actor 256-256-128, critics 512-256-128), layer norm on as they ship.
The two learners start from the same weights and take the same batches from one filled device buffer;
rounds alternate which goes first. Prints ms per update and float32 / bf16 (> 1: bf16 is faster), with the
rounds' spread. Needs a CPU with native bf16 (AVX512-BF16 or AMX on x86): elsewhere bf16 is emulated, slower,
and the learner refuses it (it trains in float32 and says so).

    python benchmarks/sac_bf16_cpu.py [--threads 1] [--rounds 7] [--updates 20]
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trainers.bench.stats import measured  # noqa: E402
from trainers.offpolicy.config import OffPolicyAlgo, OffPolicyNets  # noqa: E402
from trainers.offpolicy.learner import OffPolicyLearner  # noqa: E402
from trainers.offpolicy.replay import DeviceReplay  # noqa: E402
from trainers.common.mixed_precision import cpu_has_bf16  # noqa: E402

# name: (obs, privileged extras, actions, batch, actor widths, critic widths)
SIZES = {"UR5Reach": (33, 0, 6, 512, (256, 256), (256, 256)),
         "UR5Grasp": (42, 6, 4, 512, (256, 256), (256, 256)),
         "Go1Joystick": (50, 25, 12, 1024, (256, 256, 128), (512, 256, 128))}


def learners(obs: int, extra: int, act: int, batch: int, actor: tuple, critic: tuple, envs: int = 128, rows: int = 200):
    """Two timing closures (float32, bf16) that run ``updates`` updates on the same batches of one filled buffer."""
    torch.manual_seed(0)
    replay = DeviceReplay(rows * envs, envs, obs, act, torch.device("cpu"), extra, n_step=3, gamma=0.97)
    privileged = (lambda: torch.randn(envs, extra)) if extra else (lambda: None)
    for _ in range(rows):
        replay.add(torch.randn(envs, obs), torch.rand(envs, act) * 2 - 1, torch.randn(envs), torch.randn(envs, obs),
                   torch.rand(envs) < 0.01, torch.rand(envs) < 0.01, privileged(), privileged())
    nets = OffPolicyNets(actor_hidden=actor, critic_hidden=critic)
    fp32 = OffPolicyLearner(obs, extra, act, OffPolicyAlgo(batch_size=batch, alpha=0.001), nets, torch.device("cpu"))
    bf16 = copy.deepcopy(fp32)
    bf16.precision_device = "cpu"  # what algo.bf16_cpu gives on this CPU (trainers.offpolicy.learner.precision_device)

    def closure(learner: OffPolicyLearner):
        generator = torch.Generator().manual_seed(1)

        def run(updates: int) -> None:
            for _ in range(updates):
                learner.update(replay.sample(batch, generator))
        return run
    return {"float32": closure(fp32), "bf16": closure(bf16)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--updates", type=int, default=20)
    args = p.parse_args()
    if not cpu_has_bf16():
        sys.exit("this CPU has no native bf16 arithmetic (x86 needs AVX512-BF16 or AMX): nothing to compare")
    torch.set_num_threads(args.threads)
    print(f"off-policy (SAC) update, float32 vs bf16 autocast on the CPU, {args.threads} thread(s), "
          f"{args.rounds} rounds x {args.updates} updates")
    for name, (obs, extra, act, batch, actor, critic) in SIZES.items():
        runs = learners(obs, extra, act, batch, actor, critic)
        for run in runs.values():  # warm-up
            run(3)
        times: dict[str, list[float]] = {k: [] for k in runs}
        for r in range(args.rounds):
            for k in (list(runs) if r % 2 == 0 else list(reversed(runs))):
                t0 = time.perf_counter()
                runs[k](args.updates)
                times[k].append((time.perf_counter() - t0) / args.updates * 1e3)
        row = measured(times["float32"], times["bf16"])
        print(f"  {name} (batch {batch}, obs {obs}+{extra}, {act} actions, actor {actor}, critics {critic}): "
              f"float32 {np.median(times['float32']):.1f} ms, bf16 {np.median(times['bf16']):.1f} ms per update; "
              f"float32 / bf16 {row['ratio']:.2f}x (rounds {row['ratio_range'][0]:.2f}-{row['ratio_range'][1]:.2f})")


if __name__ == "__main__":
    main()
