"""Train the bundled PPO from Python, evaluate it and export it to ONNX.

    python examples/train_ppo.py                                 # UR5 reach, ~1.5 min on 2 CPU cores
    python examples/train_ppo.py --task UniLab/Go1Joystick-v0 --total-steps 6e6
    python examples/train_ppo.py --task HalfCheetah-v5 --total-steps 2e5   # any Gymnasium id

The same as ``unilab train ...; unilab eval ...; unilab export ...``. UR5 reach stops once its
rolling training success reaches 97% (the ``stop:`` section of ``trainers/configs/ur5_reach.yaml``):
on 2 CPU cores (other jobs running beside it), 274k steps in 31-53 s of training, then the
16-episode evaluation with its GIF of one 75-step episode (75 frames, ~15 s) and the ONNX export:
1 min 21 s in all.
"""

from __future__ import annotations

import argparse

import gymnasium as gym

import unilab_envs  # noqa: F401  (registers UniLab/*; sets thread policies before torch runs)

from trainers.ppo import load_config, train
from trainers.ppo.evaluate import evaluate, export_onnx


def episode_steps(task: str, env_kwargs: dict) -> int:
    """The task's episode length in control steps (its time limit), 1000 when it has none."""
    return int(env_kwargs.get("max_episode_steps") or gym.spec(task).max_episode_steps or 1000)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", default="UniLab/UR5Reach-v0")
    p.add_argument("--total-steps", type=float, default=None)
    p.add_argument("--out", default=None)
    p.add_argument("overrides", nargs="*", help="key=value config overrides, e.g. algo.learning_rate=3e-4")
    args = p.parse_args()

    # task defaults from trainers/configs/*.yaml, then our changes (validated; unknown keys fail)
    cfg = load_config(args.task, overrides=args.overrides, out=args.out,
                      total_steps=int(args.total_steps) if args.total_steps else None)
    print(f"training {cfg.task}: {cfg.num_envs} envs x {cfg.algo.num_steps} steps per iteration, "
          f"up to {cfg.num_iterations} iterations -> {cfg.out_dir}")
    # writes checkpoint.pt, progress.csv, tb/, learning_curve.png; stops early where the config says
    result = train(cfg)
    print(f"trained {result.env_steps} steps in {result.wall_time:.0f} s")

    # the GIF films one episode: its length is the film's frame count (and its progress bar's total)
    ev = evaluate(result.checkpoint, episodes=16, video=result.out_dir / "eval.gif",
                  max_video_frames=episode_steps(cfg.task, cfg.env_kwargs))
    print("deterministic policy:", ev.summary())
    print("onnx:", export_onnx(result.checkpoint))


if __name__ == "__main__":
    main()
