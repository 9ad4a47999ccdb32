"""Where a UR5Grasp policy's misses go: per-episode outcomes by how far the cube starts.

    python benchmarks/grasp_misses.py policies/ur5_grasp_real --sim2real none
    python benchmarks/grasp_misses.py runs/grasp --sim2real ur5_grasp_real --num-envs 512

Deterministic policy; each of ``--num-envs`` envs runs two episodes and the second counts (the
first may be partial, as in ``unilab eval``). An episode is a success, a drop (the cube left the
table: terminated without success) or a time-out, split into "never grasped" and "grasped, not
held up" by the task's ``grasp`` reward term. Success is also broken down in terciles of what the
episode drew at its start: the cube's planar distance from the pinch point (a policy that misses
mostly far cubes needs reach, one that misses everywhere needs a steadier grasp), its mass, its
sliding friction and its yaw. "Hold breaks" counts the steps where the task's hold counter fell back
to zero while the episode went on: the cube was up and grasped, then one pad lost contact or the
cube slid out of the pinch, and the 1 s hold started over.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

import unilab_envs  # noqa: F401  (thread policies first, registers the tasks)
from trainers.common.envs import AS_TRAINED, resolve_sim2real
from trainers.common.runs import find_run
from trainers.ppo.envs import make_vec_env


STARTS = ("distance", "mass", "friction", "yaw")


def episode_start(task, i: int) -> dict[str, float]:
    """What env ``i``'s episode drew at its reset: the cube's planar distance from the pinch point,
    its mass and sliding friction (the task's per-episode draws) and its yaw (from the quaternion)."""
    w, z = task.cube_quat[i, 0], task.cube_quat[i, 3]
    return {"distance": float(np.hypot(*(task.cube_pos[i, :2] - task.ee_pos[i, :2]))),
            "mass": float(task.cube_mass[i]), "friction": float(task.cube_friction[i]),
            "yaw": float(2.0 * np.arctan2(z, w))}


def deterministic_policy(run: str):
    """The run's deterministic policy (raw observation tensor -> action), its task, env keywords, profile
    and observation history: a bundled-PPO run or an off-policy one (``unilab train --algo sac|td3``)."""
    found = find_run(run, "eval")
    if found.kind in ("sac", "td3"):
        from trainers.offpolicy.evaluate import load_actor

        actor, cfg = load_actor(found.path)
        return actor, cfg.task, cfg.env_kwargs, cfg.sim2real, None
    if found.kind != "ppo":
        raise SystemExit(f"{run} is an SB3 run; this script reads bundled-PPO and SAC/TD3 runs")
    from trainers.ppo.evaluate import load_policy

    policy, cfg, _ = load_policy(found.path)
    return policy, cfg.task, cfg.env_kwargs, cfg.sim2real, cfg.obs_history


def run_outcomes(run: str, sim2real, num_envs: int, seed: int) -> dict[str, np.ndarray]:
    """Per counted episode: ``success``, ``dropped``, ``grasp_steps``, ``hold_breaks`` and what it drew
    at its start: ``distance`` (m, planar, cube to pinch point), cube ``mass`` (kg), ``friction``, ``yaw`` (rad)."""
    policy, task_id, env_kwargs, trained_sim2real, obs_history = deterministic_policy(run)
    if task_id != "UniLab/UR5Grasp-v0":
        raise SystemExit(f"{run} trained {task_id}; this script reads UniLab/UR5Grasp-v0's cube and pinch point")
    # always the native batched env (whatever the run trained with): the script reads its task state
    env = make_vec_env(task_id, num_envs, dict(env_kwargs), None,
                       sim2real=resolve_sim2real(sim2real, trained_sim2real), obs_history=obs_history)
    task = env.unwrapped.task
    low, high = env.single_action_space.low, env.single_action_space.high
    finished = np.zeros(num_envs, int)
    grasp_steps = np.zeros(num_envs, int)
    hold_breaks = np.zeros(num_envs, int)
    held = np.zeros(num_envs, int)
    start = {name: np.zeros(num_envs) for name in STARTS}
    rows: dict[str, list] = {name: [] for name in ("success", "dropped", "grasp_steps", "hold_breaks", *STARTS)}
    try:
        obs, _ = env.reset(seed=seed)
        while (finished < 2).any():
            with torch.no_grad():
                actions = policy(torch.as_tensor(obs, dtype=torch.float32)).numpy()
            obs, _, terminated, truncated, info = env.step(np.clip(actions, low, high))
            ended = terminated | truncated
            grasp_steps += (finished == 1) & (info["reward_terms"]["grasp"] > 0)
            hold_breaks += (finished == 1) & (held > 0) & (task.hold_steps == 0) & ~ended
            held = task.hold_steps.copy()
            for i in np.flatnonzero(ended):
                if finished[i] == 1:
                    success = bool(info["is_success"][i])
                    rows["success"].append(success)
                    rows["dropped"].append(bool(terminated[i]) and not success)
                    rows["grasp_steps"].append(int(grasp_steps[i]))
                    rows["hold_breaks"].append(int(hold_breaks[i]))
                    for name in STARTS:
                        rows[name].append(start[name][i])
                else:  # SAME_STEP autoreset: the task already holds the next (counted) episode
                    for name, value in episode_start(task, i).items():
                        start[name][i] = value
                finished[i] += 1
                grasp_steps[i] = hold_breaks[i] = held[i] = 0
    finally:
        env.close()
    return {k: np.asarray(v) for k, v in rows.items()}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", help="run directory or checkpoint of a UR5Grasp run (bundled PPO, SAC or TD3)")
    p.add_argument("--sim2real", default=None, metavar="PROFILE|none",
                   help="'none' for the bare task, a profile name (default: what the run trained with)")
    p.add_argument("--num-envs", type=int, default=256)
    p.add_argument("--seed", type=int, default=12345)
    args = p.parse_args(argv)
    out = run_outcomes(args.run, AS_TRAINED if args.sim2real is None else args.sim2real, args.num_envs, args.seed)
    n, success = len(out["success"]), out["success"]
    timeout = ~success & ~out["dropped"]
    print(f"{args.run}, sim2real {args.sim2real or 'as trained'}: {n} episodes, success {success.mean():.1%}")
    print(f"misses: {int(out['dropped'].sum())} dropped off the table, "
          f"{int((timeout & (out['grasp_steps'] == 0)).sum())} time-outs never grasped, "
          f"{int((timeout & (out['grasp_steps'] > 0)).sum())} time-outs grasped but not held up")
    breaks = out["hold_breaks"]
    print(f"hold breaks: {breaks.mean():.2f} an episode, in {(breaks > 0).mean():.1%} of the episodes "
          f"({(breaks[success] > 0).mean():.1%} of the successes, {(breaks[~success] > 0).mean() if (~success).any() else 0:.1%} of the misses)")
    for name, label in (("distance", "m from the pinch point"), ("mass", "kg"), ("friction", "friction"), ("yaw", "rad of |yaw|")):
        values = np.abs(out[name])
        for t, sel in enumerate(terciles(values)):
            print(f"cube {values[sel].min():.3f}-{values[sel].max():.3f} {label}: success {success[sel].mean():.1%} "
                  f"({int((~success[sel]).sum())} misses of {int(sel.sum())})")


def terciles(values: np.ndarray) -> list[np.ndarray]:
    """Three boolean masks: the lowest, middle and highest third of ``values``."""
    tercile = np.searchsorted(np.quantile(values, [1 / 3, 2 / 3]), values)
    return [tercile == t for t in range(3)]


if __name__ == "__main__":
    main()
