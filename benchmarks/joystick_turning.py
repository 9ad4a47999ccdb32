"""How a joystick policy turns: hold (forward speed, yaw rate) commands, measure what the base does.

    python benchmarks/joystick_turning.py policies/g1_joystick
    python benchmarks/joystick_turning.py runs/go1 --commands 0.5,0.5 0,0.8 0,-0.8

Deterministic policy, bare task, the run's own task keywords; each command is held on
``--num-envs`` envs for ``--seconds`` (no lateral command, no zero commands, no spread
starts), the first ``--settle`` seconds left out. Prints, per command, the measured forward
speed and yaw rate (means over the envs still standing) and the share of envs that fell.
``unilab eval --commands`` measures forward speeds; this script measures turning.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

import unilab_envs  # noqa: F401  (thread policies first, registers the tasks)
from trainers.ppo.envs import make_vec_env
from trainers.ppo.evaluate import load_policy
from trainers.ppo.joystick_eval import base_velocity

DEFAULT_COMMANDS = ("0.5,0.5", "0.5,-0.5", "0,0.8", "0,-0.8", "0,0.4", "0,-0.4")


def measure_turn(policy, cfg, vx: float, yaw: float, num_envs: int, seconds: float, settle: float,
                 seed: int) -> tuple[float, float, float]:
    """``(forward m/s, yaw rad/s, fall share)`` under the command ``(vx, 0, yaw)``."""
    kwargs = {**cfg.env_kwargs, "command_vx": (vx, vx), "command_vy": (0.0, 0.0), "command_yaw": (yaw, yaw),
              "zero_command_probability": 0.0, "spread_episode_starts": False}
    env = make_vec_env(cfg.task, num_envs, kwargs, cfg.vectorization_mode)
    try:
        base = env.unwrapped
        steps, skip = int(round(seconds / base.dt)), int(round(settle / base.dt))
        obs, _ = env.reset(seed=seed)
        fell = np.zeros(num_envs, bool)
        speeds, yaws = [], []
        for t in range(steps):
            with torch.no_grad():
                act = policy(torch.as_tensor(obs, dtype=torch.float32)).numpy()
            obs, _, terminated, _, _ = env.step(act)
            fell |= terminated
            if t >= skip and not fell.all():
                speed, yaw_rate = base_velocity(base.batch, base.model)
                speeds.append(speed[~fell].mean())
                yaws.append(yaw_rate[~fell].mean())
    finally:
        env.close()
    return float(np.mean(speeds)), float(np.mean(yaws)), float(fell.mean())


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", help="run directory or checkpoint of a joystick task (bundled PPO)")
    p.add_argument("--commands", nargs="+", default=list(DEFAULT_COMMANDS), metavar="VX,YAW",
                   help="forward speed (m/s) and yaw rate (rad/s) pairs")
    p.add_argument("--num-envs", type=int, default=32)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--settle", type=float, default=2.0)
    p.add_argument("--seed", type=int, default=12345)
    args = p.parse_args(argv)
    try:
        commands = [tuple(float(v) for v in c.split(",")) for c in args.commands]
    except ValueError:
        p.error(f"--commands takes VX,YAW pairs such as 0.5,0.5 or 0,-0.8; got {' '.join(args.commands)}")
    if any(len(c) != 2 for c in commands):
        p.error(f"--commands takes VX,YAW pairs such as 0.5,0.5 or 0,-0.8; got {' '.join(args.commands)}")
    policy, cfg, _ = load_policy(args.run, "cpu")
    for vx, yaw in commands:
        speed, yaw_rate, falls = measure_turn(policy, cfg, vx, yaw, args.num_envs, args.seconds, args.settle, args.seed)
        print(f"command vx {vx:+.2f} m/s, yaw {yaw:+.2f} rad/s -> forward {speed:+.3f} m/s, "
              f"yaw {yaw_rate:+.3f} rad/s, falls {falls:.0%}")


if __name__ == "__main__":
    main()
