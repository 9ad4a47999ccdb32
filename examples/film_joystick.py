"""Film a joystick policy through a scripted command sequence: forward, turn, stop.

    python examples/film_joystick.py policies/g1_joystick --out docs/g1_walk.gif
    python examples/film_joystick.py runs/go1 --out go1.gif --script "1.0,0,0:4 0,0,1.0:4 0,0,0:3"
    python examples/film_joystick.py policies/go1_rough --out stairs.gif --script "0.5,0,0:8" \
        terrain.types=[stairs_up] init_levels=[5,5]      # task keywords on top of the run's

``--script``: space-separated ``vx,vy,yaw:seconds`` segments, held in turn (the task's own
command resampling is switched off). The deterministic policy drives env 0 of a 1-env
batch; every ``--every``-th control step is rendered (MuJoCo's software renderer takes
~0.15-0.2 s a frame on a CPU). Prints the measured forward speed and yaw rate per segment.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

import unilab_envs  # noqa: F401  (registers UniLab/*; picks a GL backend)
from unilab_envs.config import deep_merge, parse_overrides
from trainers.common.video import VideoRecorder
from trainers.ppo.envs import make_vec_env
from trainers.ppo.evaluate import load_policy
from trainers.ppo.joystick_eval import base_velocity


def parse_script(text: str) -> list[tuple[np.ndarray, float]]:
    """``"0.6,0,0:4 0,0,0.8:4"`` -> [((0.6, 0, 0), 4.0), ((0, 0, 0.8), 4.0)]."""
    segments = []
    for part in text.split():
        command, _, seconds = part.partition(":")
        values = [float(v) for v in command.split(",")]
        if len(values) != 3 or not seconds:
            raise SystemExit(f"bad segment {part!r}: write vx,vy,yaw:seconds")
        segments.append((np.array(values), float(seconds)))
    return segments


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", help="run directory or checkpoint (bundled PPO, a joystick task)")
    p.add_argument("--out", default="joystick.gif", help="video path (.gif, or .mp4 with imageio-ffmpeg)")
    p.add_argument("--script", default="0.6,0,0:4 0,0,0.8:4 0,0,0:3", help="vx,vy,yaw:seconds segments")
    p.add_argument("--every", type=int, default=2, help="render every N-th control step (default 2)")
    p.add_argument("--size", type=int, nargs=2, default=(320, 240), metavar=("W", "H"), help="frame size (default 320 240)")
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("overrides", nargs="*", help="task keywords on top of the run's, key=value (terrain.types=[stairs_up])")
    args = p.parse_intermixed_args()  # overrides may follow the options

    policy, cfg, _ = load_policy(args.run)
    task_kwargs = deep_merge(cfg.env_kwargs, parse_overrides(args.overrides, example="terrain.types=[stairs_up]"))
    kwargs = {**task_kwargs, "command_resample_time": 1e6, "spread_episode_starts": False,
              "render_width": args.size[0], "render_height": args.size[1]}
    env = make_vec_env(cfg.task, 1, kwargs, cfg.vectorization_mode, render_mode="rgb_array", obs_history=cfg.obs_history)
    base = env.unwrapped
    segments = parse_script(args.script)
    steps = sum(int(round(s / base.dt)) for _, s in segments)
    recorder = VideoRecorder(args.out, max(1, round(1.0 / (base.dt * args.every))), steps // args.every + 2)
    obs, _ = env.reset(seed=args.seed)
    try:
        for command, seconds in segments:
            base.task.command[0] = command
            obs[0, base.obs_groups["command"]] = command  # what the policy sees this step
            speeds, yaws = [], []
            for t in range(int(round(seconds / base.dt))):
                with torch.no_grad():
                    action = policy(torch.as_tensor(obs)).numpy()
                obs, _, terminated, _, _ = env.step(action)
                base.task.command[0] = command
                speed, yaw = base_velocity(base.batch, base.model)
                speeds.append(speed[0])
                yaws.append(yaw[0])
                if t % args.every == 0:
                    recorder.add(env.render())
                if terminated[0]:
                    print("fell")
            half = len(speeds) // 2  # the second half of each segment: past the transition
            print(f"command {command.tolist()}: forward {np.mean(speeds[half:]):+.2f} m/s, "
                  f"yaw {np.mean(yaws[half:]):+.2f} rad/s")
    finally:
        env.close()
    print("video:", recorder.write())


if __name__ == "__main__":
    main()
