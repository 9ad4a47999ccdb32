"""Why does an off-policy UR5Grasp run stall? Its deterministic actor's episode, term by term, and with the lift forced.

    python benchmarks/grasp_lift_probe.py runs/sac/grasp_s0
    python benchmarks/grasp_lift_probe.py runs/sac/grasp_s0 --lift-after 40 --lift 0.5 1.0

The run's deterministic actor (``trainers.offpolicy.evaluate.load_actor``) plays two episodes on each
of ``--num-envs`` envs of the bare task with the run's ``env_kwargs`` (seed ``--seed``); the second counts (the first may start part-way,
as in ``unilab eval``). Printed per 1-s block of the episode, over the envs still in it: the share whose
pads hold the cube (the task's ``grasp`` term), the lift term as a share of its maximum, the mean
vertical command ``a[2]`` (the pinch target's change, +-1 = +-2 cm a step) and the mean gripper command
``a[3]`` (-1 open .. +1 closed); then the mean of each reward term per step. Each ``--lift Z`` adds the
same episode with ``a[2]`` forced to ``Z`` from step ``--lift-after`` on (each env's own step; the actor's
other commands kept), and with ``--grip G`` once more with the gripper also held at ``G``, and counts their
successes: an actor whose grasp holds when lifted but that never lifts by itself is stuck on exploration,
not on its grasp.
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np
import torch

import unilab_envs  # noqa: F401  (registers the tasks)
from trainers.offpolicy.evaluate import load_actor

BLOCK = 25  # control steps in one second


def play(actor, cfg, num_envs: int, seed: int, lift_after: int | None = None, lift: float = 0.0,
         grip: float | None = None) -> dict:
    """Each env's second episode (the first may start part-way: the task staggers its time limits) on the run's
    task with its ``env_kwargs``, step by step: grasp, lift (a share of the term's largest value), commands and
    terms averaged over the envs at that step of their episode, and the successes."""
    env = gym.make_vec(cfg.task, num_envs=num_envs, **dict(cfg.env_kwargs))
    task = env.unwrapped.task.config
    lift_weight = task.reward_scales.lift * task.control_dt  # the lift term's value with the cube at its target
    try:
        obs, _ = env.reset(seed=seed)
        steps = env.spec.max_episode_steps or 125
        sums = {k: np.zeros(steps) for k in ("grasp", "lift", "z", "gripper")}
        terms: dict[str, np.ndarray] = {}
        counts = np.zeros(steps)
        phase = np.zeros(num_envs, np.int64)  # 0: the first episode, 1: the counted one, 2: done
        k = np.zeros(num_envs, np.int64)  # the control step within the env's episode
        successes = 0
        while (phase < 2).any():
            with torch.no_grad():
                action = actor(torch.as_tensor(np.asarray(obs, np.float32))).numpy()
            if lift_after is not None:
                action[k >= lift_after, 2] = lift
                if grip is not None:
                    action[k >= lift_after, 3] = grip
            obs, _, terminated, truncated, info = env.step(action)
            counted = np.flatnonzero(phase == 1)
            rt = info["reward_terms"]
            at = k[counted]
            np.add.at(counts, at, 1)
            np.add.at(sums["grasp"], at, np.asarray(rt["grasp"])[counted] > 0)
            np.add.at(sums["lift"], at, np.asarray(rt["lift"])[counted])
            np.add.at(sums["z"], at, action[counted, 2])
            np.add.at(sums["gripper"], at, action[counted, 3])
            for name, value in rt.items():
                np.add.at(terms.setdefault(name, np.zeros(steps)), at, np.asarray(value)[counted])
            done = terminated | truncated
            success = np.asarray(info.get("is_success", np.zeros(num_envs, bool)))
            successes += int(np.sum(success & terminated & (phase == 1)))
            phase[done] += 1
            k = np.where(done, 0, k + 1)
        # an env that ended its episode early stays out of the later steps' means (terminated: success or drop)
        sums["lift"] /= lift_weight
        trace = {name: np.divide(v, counts, out=np.full(steps, np.nan), where=counts > 0) for name, v in sums.items()}
        return {"trace": trace, "terms": {n: float(v.sum() / counts.sum()) for n, v in terms.items()}, "successes": successes}
    finally:
        env.close()


def blocks(values: np.ndarray) -> str:
    return " | ".join(f"{np.nanmean(values[i:i + BLOCK]):+.2f}" for i in range(0, len(values), BLOCK))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", help="an off-policy run directory (unilab train --algo sac|td3) on UniLab/UR5Grasp-v0")
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--lift-after", type=int, default=40, help="control step from which --lift is forced")
    parser.add_argument("--lift", type=float, nargs="*", default=[], help="vertical commands to force (each its own episode)")
    parser.add_argument("--grip", type=float, default=None, help="also force the gripper command from --lift-after on "
                        "(each --lift row is then played with and without it)")
    args = parser.parse_args()
    actor, cfg = load_actor(args.run)
    rows = [("actor as trained", play(actor, cfg, args.num_envs, args.seed))]
    for z in args.lift:
        rows.append((f"a[2] = {z:+.1f} from step {args.lift_after}", play(actor, cfg, args.num_envs, args.seed, args.lift_after, z)))
        if args.grip is not None:
            rows.append((f"a[2] = {z:+.1f}, a[3] = {args.grip:+.1f} from step {args.lift_after}",
                         play(actor, cfg, args.num_envs, args.seed, args.lift_after, z, args.grip)))
    print(f"{args.run} ({cfg.algo.kind}), {args.num_envs} envs, seed {args.seed}; per second of the episode:\n")
    print("| episode | grasped | lift / max | a[2] | a[3] | successes |")
    print("|---|---|---|---|---|---|")
    for name, out in rows:
        tr = out["trace"]
        print(f"| {name} | {blocks(tr['grasp'])} | {blocks(tr['lift'])} | {blocks(tr['z'])} | "
              f"{blocks(tr['gripper'])} | {out['successes']} / {args.num_envs} |")
    print("\nreward terms, mean per env step (actor as trained): "
          + ", ".join(f"{k} {v:+.4f}" for k, v in rows[0][1]["terms"].items()))


if __name__ == "__main__":
    main()
