"""The off-policy learner's replay buffer on its device vs a host NumPy buffer copied per batch (SB3-style).

Both buffers hold the same transitions (UR5Reach-sized: 33 observation floats, 6 actions;
``--obs-dim`` / ``--action-dim`` for others). One learner (``trainers.offpolicy.learner``, the
recipe's networks) takes the same update stream from each, alternating round by round:

- device: :class:`trainers.offpolicy.replay.DeviceReplay` on the learner's device: indices drawn,
  the returns gathered and the batch built there (``sample``), then ``update``;
- host: the same transitions in NumPy arrays; indices drawn with NumPy, the batch gathered in
  NumPy and sent with ``torch.as_tensor(...).to(device)`` per array, as SB3's
  ``ReplayBuffer.sample`` does, then ``update``.

Both give 1-step returns (SB3's buffer has no n-step returns): like for like.

Reported: the median per round of host time / device time per update (> 1: the device buffer is
faster), the sampling alone likewise, and the learner's updates/s at the batch size with the
device buffer. On a CPU the "device" is the host: the ratio measures NumPy gathering and the
copies; on a GPU (``--device cuda``) it measures what the host round trip costs the learner.

    python benchmarks/replay_ratio.py [--device cpu] [--batch 512] [--rounds 7] [--updates 40]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trainers.offpolicy.config import OffPolicyAlgo, OffPolicyNets  # noqa: E402
from trainers.offpolicy.learner import OffPolicyLearner  # noqa: E402
from trainers.offpolicy.replay import Batch, DeviceReplay  # noqa: E402


class HostReplay:
    """A NumPy replay buffer sampled SB3-style: NumPy gather, then one tensor copy per array per batch."""

    def __init__(self, device_replay: DeviceReplay) -> None:
        n = device_replay.filled * device_replay.num_envs
        self.arrays = {name: getattr(device_replay, name)[: device_replay.filled].reshape(n, -1).cpu().numpy().copy()
                       for name in ("obs", "action", "reward", "next_obs", "terminated")}
        self.size, self.gamma, self.device = n, device_replay.gamma, device_replay.device

    def sample(self, batch_size: int, rng: np.random.Generator) -> Batch:
        idx = rng.integers(0, self.size, batch_size)
        a = {k: v[idx] for k, v in self.arrays.items()}
        to = lambda x: torch.as_tensor(x).to(self.device)  # noqa: E731
        discount = self.gamma * (1.0 - a["terminated"][:, 0].astype(np.float32))
        return Batch(to(a["obs"]), to(a["action"]), to(a["reward"][:, 0]), to(a["next_obs"]), to(discount))


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
    device = torch.device(args.device)
    torch.manual_seed(0)
    envs = 32
    replay = DeviceReplay(args.transitions, envs, args.obs_dim, args.action_dim, device, n_step=1, gamma=0.97)
    for _ in range(replay.rows):
        replay.add(torch.randn(envs, args.obs_dim), torch.rand(envs, args.action_dim) * 2 - 1, torch.randn(envs),
                   torch.randn(envs, args.obs_dim), torch.rand(envs) < 0.01, torch.rand(envs) < 0.01)
    host = HostReplay(replay)
    nets = OffPolicyNets(actor_hidden=(256, 256), critic_hidden=(256, 256))
    learner = OffPolicyLearner(args.obs_dim, 0, args.action_dim, OffPolicyAlgo(batch_size=args.batch), nets, device)
    rng = np.random.default_rng(0)

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    def timed(sample) -> tuple[float, float]:
        sync()
        t0, sampling = time.perf_counter(), 0.0
        for _ in range(args.updates):
            s0 = time.perf_counter()
            batch = sample()
            sync()
            sampling += time.perf_counter() - s0
            learner.update(batch)
        sync()
        return (time.perf_counter() - t0) / args.updates, sampling / args.updates

    samplers = {"device": lambda: replay.sample(args.batch), "host": lambda: host.sample(args.batch, rng)}
    for sample in samplers.values():  # warm-up
        timed(sample)
    ratios, sample_ratios, device_times = [], [], []
    for r in range(args.rounds):
        order = ("device", "host") if r % 2 == 0 else ("host", "device")
        got = {name: timed(samplers[name]) for name in order}
        ratios.append(got["host"][0] / got["device"][0])
        sample_ratios.append(got["host"][1] / got["device"][1])
        device_times.append(got["device"][0])
    print(f"device {device} ({torch.cuda.get_device_name(device) if device.type == 'cuda' else 'host CPU'}), batch {args.batch}, "
          f"{len(replay)} transitions of {args.obs_dim} obs / {args.action_dim} actions, {args.rounds} rounds x {args.updates} updates")
    print(f"update time host-buffer / device-buffer: {statistics.median(ratios):.2f}x  "
          f"(sampling alone: {statistics.median(sample_ratios):.2f}x)")
    print(f"learner updates/s with the device buffer: {1.0 / statistics.median(device_times):.0f}")


if __name__ == "__main__":
    main()
