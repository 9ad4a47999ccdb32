"""Row 7: the off-policy learner's replay buffer on its device vs a host NumPy buffer copied per batch.

Both buffers hold the same transitions (UR5Reach-sized by default: 33 observation floats, 6
actions). One learner (:mod:`trainers.offpolicy.learner`, 256x256 networks) takes the same update
stream from each, alternating round by round:

- ours: :class:`trainers.offpolicy.replay.DeviceReplay` on the learner's device: indices drawn, the
  returns gathered and the batch built there (``sample``), then ``update``;
- baseline: the same transitions in NumPy arrays, indices drawn with NumPy, the batch gathered in
  NumPy and sent with ``torch.as_tensor(...).to(device)`` per array, as SB3's ``ReplayBuffer.sample``
  does, then ``update``.

Both give 1-step returns (SB3's buffer has none longer): like for like. Two rows: the time per update
(sample + update) and the sampling alone; ``ratio`` is baseline / ours (> 1: the device buffer is
faster). The learner's updates/s with the device buffer is in the first row's name. On a CPU the
"device" is the host, so the ratio measures NumPy gathering and the copies; on a GPU it measures what
the host round trip costs the learner.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from trainers.offpolicy.config import OffPolicyAlgo, OffPolicyNets
from trainers.offpolicy.learner import OffPolicyLearner
from trainers.offpolicy.replay import Batch, DeviceReplay

from .stats import measured


class HostReplay:
    """A NumPy replay buffer sampled SB3-style: NumPy gather, then one tensor copy per array per batch."""

    def __init__(self, device_replay: DeviceReplay) -> None:
        n = device_replay.filled * device_replay.num_envs
        self.arrays = {name: getattr(device_replay, name)[: device_replay.filled].reshape(n, -1).cpu().numpy().copy()
                       for name in ("obs", "action", "reward", "next_obs", "terminated")}
        self.size, self.gamma, self.device = n, device_replay.gamma, device_replay.device
        self.rng = np.random.default_rng(0)

    def sample(self, batch_size: int) -> Batch:
        idx = self.rng.integers(0, self.size, batch_size)
        a = {k: v[idx] for k, v in self.arrays.items()}
        to = lambda x: torch.as_tensor(x).to(self.device)  # noqa: E731
        discount = self.gamma * (1.0 - a["terminated"][:, 0].astype(np.float32))
        return Batch(to(a["obs"]), to(a["action"]), to(a["reward"][:, 0]), to(a["next_obs"]), to(discount))


def _filled_replay(transitions: int, obs: int, act: int, device: torch.device, envs: int = 32) -> DeviceReplay:
    torch.manual_seed(0)
    replay = DeviceReplay(transitions, envs, obs, act, device, n_step=1, gamma=0.97)
    for _ in range(replay.rows):
        replay.add(torch.randn(envs, obs), torch.rand(envs, act) * 2 - 1, torch.randn(envs), torch.randn(envs, obs),
                   torch.rand(envs) < 0.01, torch.rand(envs) < 0.01)
    return replay


def bench_replay(device: torch.device, batch: int = 512, obs: int = 33, act: int = 6, transitions: int = 200_000,
                 rounds: int = 7, updates: int = 40) -> list[dict]:
    """The two rows (see the module docstring)."""
    replay = _filled_replay(transitions, obs, act, device)
    host = HostReplay(replay)
    nets = OffPolicyNets(actor_hidden=(256, 256), critic_hidden=(256, 256))
    learner = OffPolicyLearner(obs, 0, act, OffPolicyAlgo(batch_size=batch), nets, device)

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    def timed(sample) -> tuple[float, float]:
        sync()
        t0, sampling = time.perf_counter(), 0.0
        for _ in range(updates):
            s0 = time.perf_counter()
            b = sample()
            sync()
            sampling += time.perf_counter() - s0
            learner.update(b)
        sync()
        return (time.perf_counter() - t0) / updates * 1e3, sampling / updates * 1e3

    samplers = {"ours": lambda: replay.sample(batch), "baseline": lambda: host.sample(batch)}
    for sample in samplers.values():  # warm-up
        timed(sample)
    got: dict[str, list[tuple[float, float]]] = {"ours": [], "baseline": []}
    for r in range(rounds):
        for name in (("ours", "baseline") if r % 2 == 0 else ("baseline", "ours")):
            got[name].append(timed(samplers[name]))
    update = measured([t for t, _ in got["baseline"]], [t for t, _ in got["ours"]])
    sampling = measured([s for _, s in got["baseline"]], [s for _, s in got["ours"]])
    shape = f"batch {batch}, {len(replay)} transitions of {obs} obs / {act} actions, {device.type}"
    per_s = 1e3 / update["ours"]
    return [{"section": "off-policy replay", "unit": "ms/update", "budget": None,
             "name": f"replay on the device vs host NumPy copied per batch: sample + update ({shape}; {per_s:.0f} updates/s)",
             "baseline_label": "host NumPy buffer", "ours_label": "DeviceReplay", **update},
            {"section": "off-policy replay", "unit": "ms/sample", "budget": None,
             "name": f"replay on the device vs host NumPy copied per batch: sampling alone ({shape})",
             "baseline_label": "host NumPy buffer", "ours_label": "DeviceReplay", **sampling}]
