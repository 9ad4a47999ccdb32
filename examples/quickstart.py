"""Quickstart: make a UniLab task, step it with random actions, save a GIF.

    python examples/quickstart.py [--task UniLab/Go1Joystick-v0] [--out runs/quickstart.gif]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import gymnasium as gym
import imageio.v2 as imageio
import numpy as np

import unilab_envs  # noqa: F401  (registers the UniLab/* tasks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="UniLab/Go1Joystick-v0")
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--out", default="runs/quickstart.gif",
                        help="the GIF (default runs/quickstart.gif: runs/ holds outputs, ignored by git)")
    args = parser.parse_args()

    # One env, the Gymnasium way.
    env = gym.make(args.task, render_mode="rgb_array")
    obs, info = env.reset(seed=0)
    frames = []
    for _ in range(args.steps):
        obs, reward, terminated, truncated, info = env.step(0.3 * env.action_space.sample())
        frames.append(env.render())
        if terminated or truncated:
            obs, info = env.reset()
    env.close()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    imageio.mimsave(args.out, frames, duration=env.unwrapped.dt * 1000, loop=0)

    # Many envs, natively batched on MuJoCo's thread pool.
    envs = gym.make_vec(args.task, num_envs=args.num_envs)
    obs, info = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    total = np.zeros(args.num_envs)
    for _ in range(args.steps):
        actions = 0.3 * rng.uniform(-1, 1, size=envs.action_space.shape).astype(np.float32)
        obs, reward, terminated, truncated, info = envs.step(actions)
        total += reward
    envs.close()
    print(f"{args.task}: obs {obs.shape}, mean return over {args.steps} steps {total.mean():.3f}; wrote {args.out} ({len(frames)} frames)")


if __name__ == "__main__":
    main()
