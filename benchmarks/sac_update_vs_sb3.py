"""Our SAC update against SB3's SAC gradient step at the same batch and widths, side by side in one process.

Go1Joystick's sizes by default (obs 50, 25 privileged extras for our critic, 12 actions; batch 1024; actor
256-256-128, critics 512-256-128): what `unilab train --algo sac` and `--algo sb3-sac` run in the
Go1 comparison of docs/results/off_policy.md. Rounds alternate which goes first; each times ``--updates``
updates (ours: ``OffPolicyLearner.update`` on batches drawn from a filled ``DeviceReplay``; SB3:
``SAC.train(gradient_steps=...)`` on its filled host buffer). Ours runs with layer norm (the default) and
without; SB3's networks have none; both use ELU / ReLU as they ship (ours ELU, SB3 ReLU). Prints ms per update
and ours / SB3 (> 1: ours is slower), with the rounds' spread.

    python benchmarks/sac_update_vs_sb3.py [--threads 1] [--batch 1024] [--rounds 5] [--updates 20]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trainers.bench.stats import measured  # noqa: E402
from trainers.offpolicy.config import OffPolicyAlgo, OffPolicyNets  # noqa: E402
from trainers.offpolicy.learner import OffPolicyLearner  # noqa: E402
from trainers.offpolicy.replay import DeviceReplay  # noqa: E402


def ours(obs: int, extra: int, act: int, batch: int, actor: tuple, critic: tuple, layer_norm: bool, rows: int):
    """A timing closure: ``updates`` of our learner on a filled device buffer."""
    torch.manual_seed(0)
    replay = DeviceReplay(rows * 128, 128, obs, act, torch.device("cpu"), extra, n_step=3, gamma=0.97)
    for _ in range(rows):
        replay.add(torch.randn(128, obs), torch.rand(128, act) * 2 - 1, torch.randn(128), torch.randn(128, obs),
                   torch.rand(128) < 0.01, torch.rand(128) < 0.01, torch.randn(128, extra), torch.randn(128, extra))
    nets = OffPolicyNets(actor_hidden=actor, critic_hidden=critic, layer_norm=layer_norm)
    learner = OffPolicyLearner(obs, extra, act, OffPolicyAlgo(batch_size=batch, alpha=0.001), nets, torch.device("cpu"))

    def run(updates: int) -> None:
        for _ in range(updates):
            learner.update(replay.sample(batch))
    return run


def sb3(obs: int, act: int, batch: int, actor: tuple, critic: tuple, rows: int):
    """A timing closure: ``SAC.train(gradient_steps=updates)`` on SB3's filled replay buffer."""
    from stable_baselines3 import SAC
    from stable_baselines3.common.env_util import make_vec_env

    class Spaces(gym.Env):
        observation_space = gym.spaces.Box(-np.inf, np.inf, (obs,), np.float32)
        action_space = gym.spaces.Box(-1.0, 1.0, (act,), np.float32)

    model = SAC("MlpPolicy", make_vec_env(Spaces, n_envs=1), batch_size=batch, ent_coef="auto_0.001", gamma=0.97,
                buffer_size=rows * 128, policy_kwargs={"net_arch": {"pi": list(actor), "qf": list(critic)}},
                device="cpu", seed=0)
    buf, rng = model.replay_buffer, np.random.default_rng(0)
    n = rows * 128
    buf.observations[:n] = rng.normal(size=buf.observations[:n].shape)
    buf.next_observations[:n] = rng.normal(size=buf.next_observations[:n].shape)
    buf.actions[:n] = rng.uniform(-1, 1, buf.actions[:n].shape)
    buf.rewards[:n] = rng.normal(size=buf.rewards[:n].shape)
    buf.dones[:n] = rng.random(buf.dones[:n].shape) < 0.01
    buf.pos, buf.full = 0, True
    model._logger = __import__("stable_baselines3.common.logger", fromlist=["configure"]).configure(None, [""])

    def run(updates: int) -> None:
        model.train(gradient_steps=updates, batch_size=batch)
    return run


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--obs", type=int, default=50)
    p.add_argument("--extra", type=int, default=25, help="our critic's privileged extras")
    p.add_argument("--actions", type=int, default=12)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--updates", type=int, default=20)
    p.add_argument("--rows", type=int, default=400, help="batch steps of 128 envs in each buffer")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    actor, critic = (256, 256, 128), (512, 256, 128)
    runs = {"ours (layer norm)": ours(args.obs, args.extra, args.actions, args.batch, actor, critic, True, args.rows),
            "ours (no layer norm)": ours(args.obs, args.extra, args.actions, args.batch, actor, critic, False, args.rows),
            "SB3 SAC": sb3(args.obs, args.actions, args.batch, actor, critic, args.rows)}
    for run in runs.values():  # warm-up
        run(3)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for r in range(args.rounds):
        order = list(runs) if r % 2 == 0 else list(reversed(runs))
        for name in order:
            t0 = time.perf_counter()
            runs[name](args.updates)
            times[name].append((time.perf_counter() - t0) / args.updates * 1e3)
    print(f"SAC update, batch {args.batch}, obs {args.obs} (+{args.extra} for our critic), {args.actions} actions, "
          f"actor {actor}, critics {critic}, {args.threads} thread(s), {args.rounds} rounds x {args.updates} updates")
    for name in runs:
        row = measured(times["SB3 SAC"], times[name])
        print(f"  {name}: {np.median(times[name]):.1f} ms/update; / SB3: {1 / row['ratio']:.2f}x "
              f"(rounds {min(times[name]):.1f}-{max(times[name]):.1f} ms)")


if __name__ == "__main__":
    main()
