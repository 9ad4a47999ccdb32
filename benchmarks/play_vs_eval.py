"""``unilab eval`` (the training stack) against ``unilab play --headless`` (plain MuJoCo) on one exported run.

Both run the deterministic policy from episodes drawn as in training: eval through the
batched env and its Numba kernels with the torch policy, play through ``mj_step`` with
the deploy spec's reference observation and ``policy.onnx``. Prints one Markdown table:
velocity tracking (per-step mean of ``exp(-error^2 / sigma)``, 1 = perfect; eval's
weighted reward term divided by its weight), falls, episode length, success (reach, grasp),
and play's cost per control step against the control period (one core). For the grasp,
where a success ends the episode, eval's "terminated" share counts both ends, so the
table shows success and the failed ends (the cube off the table) apart.

    unilab export runs/go1
    python benchmarks/play_vs_eval.py runs/go1 --episodes 64
    python benchmarks/play_vs_eval.py runs/go1 --episodes 64 --sim2real go1_real
    python benchmarks/play_vs_eval.py policies/ur5_grasp --episodes 32 --sim2real ur5_grasp_real

``--sim2real PROFILE`` runs eval under the profile's whole wrapper stack and play with
the profile's link and sensor sections (noise, IMU drift, latency, packet loss, action
noise, motor strength; play leaves out domain randomization and pushes).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import unilab_envs  # noqa: E402,F401
from trainers.common.deploy_export import run_task  # noqa: E402
from trainers.play import Player, find_policy, run_headless  # noqa: E402
from trainers.ppo.evaluate import evaluate  # noqa: E402


def term_weights(task: str, env_kwargs: dict) -> dict[str, float]:
    env = gym.make_vec(task, num_envs=1, num_threads=1, **env_kwargs)
    try:
        base = env.unwrapped
        return dict(zip(base.reward_names, np.asarray(base.task.reward_weights, float)))
    finally:
        env.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", help="run folder after `unilab export` (checkpoint.pt, config.yaml, policy.onnx, deploy_spec.json)")
    p.add_argument("--episodes", type=int, default=64, help="episodes on each side (default 64)")
    p.add_argument("--sim2real", help="profile for both sides (default: none)")
    p.add_argument("--seed", type=int, default=0, help="play's seed (eval uses its default 12345)")
    args = p.parse_args(argv)

    task, env_kwargs = run_task(Path(args.run))
    t0 = time.perf_counter()
    ev = evaluate(args.run, episodes=args.episodes, num_envs=min(args.episodes, 64), sim2real=args.sim2real,
                  progress=False)
    eval_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    player = Player(find_policy(args.run), sim2real=args.sim2real, seed=args.seed)
    play = run_headless(player, args.episodes, video=None, progress=False)
    play_s = time.perf_counter() - t0
    weights = term_weights(task, env_kwargs)

    def tracking(name: str) -> str:
        if name not in ev.reward_terms:
            return "-"
        return f"{ev.reward_terms[name] / weights[name]:.3f}"

    rows = [("tracking, linear (1 = perfect)", tracking("tracking_lin_vel"), play.tracking_lin_vel),
            ("tracking, yaw (1 = perfect)", tracking("tracking_ang_vel"), play.tracking_ang_vel),
            ("falls (episodes ending in a fall)", f"{ev.fall_rate:.1%}", f"{play.fall_rate:.1%}")
            if player.lift is None else  # the grasp: eval's terminated share is successes + failed ends
            ("cube off the table (failed ends)", f"{ev.fall_rate - (ev.success_rate or 0.0):.1%}", f"{play.fall_rate:.1%}"),
            ("episode length (steps)", f"{ev.mean_length:.1f}", f"{play.mean_length:.1f}"),
            ("success", "-" if ev.success_rate is None else f"{ev.success_rate:.1%}",
             "-" if play.success_rate is None else f"{play.success_rate:.1%}"),
            ("wall clock (s)", f"{eval_s:.1f}", f"{play_s:.1f}")]
    print(f"{task}, {ev.episodes} / {play.episodes} episodes, sim2real {args.sim2real or 'none'}\n")
    print("| | unilab eval (training stack) | unilab play --headless (plain MuJoCo) |")
    print("|---|---|---|")
    for name, e, pl in rows:
        if e == "-" and pl in (None, "-"):
            continue  # not this task's metric
        pl = f"{pl:.3f}" if isinstance(pl, float) else ("-" if pl is None else pl)
        print(f"| {name} | {e} | {pl} |")
    print(f"\nplay loop: {play.step_us:.0f} us per control step against a {play.control_dt * 1e3:.0f} ms control "
          f"period ({play.control_dt * 1e6 / play.step_us:.0f}x faster than real time, one core)")
    if play.speed_per_command:
        print("\nplay, forward speed per command: " + ", ".join(
            f"[{lo:+.2f}, {hi:+.2f}) -> {v:+.2f}" for lo, hi, v, _ in play.speed_per_command))
    if play.sim2real:
        print(play.sim2real)
    return 0


if __name__ == "__main__":
    sys.exit(main())
