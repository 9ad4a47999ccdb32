"""Film a UR5Grasp policy picking the cube, a few episodes in a row.

    python examples/film_grasp.py policies/ur5_grasp --out docs/ur5_grasp.gif
    python examples/film_grasp.py runs/UniLab_UR5Grasp-v0 --episodes 4 --seed 7

The deterministic policy drives env 0 of a 1-env batch, one episode per seed
(``--seed``, ``--seed + 1``...); every ``--every``-th control step is rendered from a
camera on the workspace, and a success holds the last frame for half a second. Prints
each episode's outcome and length.
"""

from __future__ import annotations

import argparse

import torch

import unilab_envs  # noqa: F401  (registers UniLab/*; picks a GL backend)
from trainers.common.video import VideoRecorder
from trainers.ppo.envs import make_vec_env
from trainers.ppo.evaluate import load_policy


def aim_at_workspace(env) -> None:
    """Point the env's render camera at the table in front of the arm (after a first render)."""
    camera = env.unwrapped._renderer._camera
    camera.lookat[:] = (-0.12, 0.48, 0.22)
    camera.distance, camera.elevation, camera.azimuth = 1.2, -18.0, -50.0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", help="run directory or checkpoint (bundled PPO, UniLab/UR5Grasp-v0)")
    p.add_argument("--out", default="ur5_grasp.gif", help="video path (.gif, or .mp4 with imageio-ffmpeg)")
    p.add_argument("--episodes", type=int, default=3)
    p.add_argument("--every", type=int, default=2, help="render every N-th control step (default 2)")
    p.add_argument("--size", type=int, nargs=2, default=(320, 240), metavar=("W", "H"), help="frame size (default 320 240)")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()

    policy, cfg, _ = load_policy(args.run)
    kwargs = {**cfg.env_kwargs, "spread_episode_starts": False, "render_width": args.size[0], "render_height": args.size[1]}
    env = make_vec_env(cfg.task, 1, kwargs, cfg.vectorization_mode, render_mode="rgb_array", obs_history=cfg.obs_history)
    base = env.unwrapped
    fps = max(1, round(1.0 / (base.dt * args.every)))
    recorder = VideoRecorder(args.out, fps, args.episodes * (base.max_episode_steps // args.every + fps) + 2)
    try:
        for episode in range(args.episodes):
            obs, _ = env.reset(seed=args.seed + episode)
            frame = env.render()
            if episode == 0:
                aim_at_workspace(env)
                frame = env.render()
            recorder.add(frame)
            for t in range(base.max_episode_steps):
                with torch.no_grad():
                    action = policy(torch.as_tensor(obs)).numpy()
                last = base.task.cube_pos[0].copy()
                obs, _, terminated, truncated, info = env.step(action)
                if terminated[0] or truncated[0]:
                    break  # the row was reset within the step: its frame is the next episode's
                if t % args.every == 0:
                    recorder.add(env.render())
            won = bool(info["is_success"][0])
            for _ in range(fps // 2 if won else 0):
                recorder.add(recorder.frames[-1])  # hold the lifted cube on screen
            print(f"episode {episode}: {'success' if won else 'no success'} after {t + 1} steps "
                  f"(cube last at height {last[2] - 0.025:.3f} m)")
    finally:
        env.close()
    print("video:", recorder.write())


if __name__ == "__main__":
    main()
