"""How a joystick policy turns: hold (forward speed, yaw rate) commands, measure what the base does.

    python benchmarks/joystick_turning.py policies/g1_joystick
    python benchmarks/joystick_turning.py runs/go1 --commands 0.5,0.5 0,0.8 0,-0.8

Deterministic policy, bare task, the run's own task keywords; each command is held on
``--num-envs`` envs for ``--seconds`` (no lateral command, no zero commands, no spread
starts), the first ``--settle`` seconds left out. Prints, per command, the measured forward
speed and yaw rate (means over the env steps still standing) and the share of envs that fell.
``unilab eval --commands`` measures forward speeds; this script measures turning.
"""

from __future__ import annotations

import argparse

import unilab_envs  # noqa: F401  (thread policies first, registers the tasks)
from trainers.ppo.evaluate import load_policy
from trainers.ppo.joystick_eval import hold_command

DEFAULT_COMMANDS = ("0.5,0.5", "0.5,-0.5", "0,0.8", "0,-0.8", "0,0.4", "0,-0.4")


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
    try:  # unpacking into two names also rejects a pair of the wrong length
        commands = [(vx, yaw) for vx, yaw in (map(float, c.split(",")) for c in args.commands)]
    except ValueError:
        p.error(f"--commands takes VX,YAW pairs such as 0.5,0.5 or 0,-0.8; got {' '.join(args.commands)}")
    policy, cfg, _ = load_policy(args.run, "cpu")
    for vx, yaw in commands:
        r = hold_command(policy, cfg, vx, yaw, args.seconds, args.num_envs, args.settle, args.seed)
        print(f"command vx {vx:+.2f} m/s, yaw {yaw:+.2f} rad/s -> forward {r.speed:+.3f} m/s, "
              f"yaw {r.yaw_rate:+.3f} rad/s, falls {r.fall_rate:.0%}")


if __name__ == "__main__":
    main()
