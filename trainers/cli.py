"""``unilab``: train, evaluate and export policies.

    unilab train --task UniLab/Go1Joystick-v0 --total-steps 6e6 --out runs/go1
    unilab train --task UniLab/UR5Reach-v0 algo.learning_rate=3e-4 policy.actor_hidden=[64,64]
    unilab train --resume runs/go1/checkpoint.pt --total-steps 2e7
    unilab train --algo sb3-sac --task UniLab/UR5Reach-v0 --num-envs 16
    unilab eval runs/go1/checkpoint.pt --episodes 20 --video runs/go1/eval.mp4
    unilab export runs/go1/checkpoint.pt --out runs/go1/policy.onnx

Train settings layer as: task YAML defaults (``trainers/configs``) < ``--config file`` <
flags < ``key=value`` overrides. ``unilab train --task T --print-config`` shows the result.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

SB3_ALGOS = ("sb3-ppo", "sb3-sac", "sb3-td3")


def _steps(text: str) -> int:
    """``2e6``, ``2_000_000``, ``2000000`` -> 2000000."""
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a step count: {text!r}") from None
    if value < 1 or not value.is_integer():
        raise argparse.ArgumentTypeError(f"step count must be a positive integer, got {text!r}")
    return int(value)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="unilab", description="UniLab: train, evaluate and export robot policies.")
    sub = p.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train a policy (bundled PPO, or SB3 with --algo sb3-*)",
                       usage="unilab train [options] [key=value ...]",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="overrides: key=value pairs on the config, e.g. algo.learning_rate=3e-4 "
                              "policy.actor_hidden=[128,128] log.tensorboard=false")
    t.add_argument("--algo", default="ppo", choices=("ppo", *SB3_ALGOS), help="trainer (default: ppo)")
    t.add_argument("--task", help="Gymnasium id, e.g. UniLab/Go1Joystick-v0 or HalfCheetah-v5")
    t.add_argument("--num-envs", type=int, help="parallel envs")
    t.add_argument("--total-steps", type=_steps, help="env steps to train for (e.g. 5e6)")
    t.add_argument("--device", help="auto (default), cpu, cuda, cuda:1")
    t.add_argument("--seed", type=int)
    t.add_argument("--out", help="run directory (default runs/<task>)")
    t.add_argument("--config", help="YAML file with config keys")
    t.add_argument("--resume", help="checkpoint (or run directory) to continue from")
    t.add_argument("--torch-threads", type=int, help="torch intra-op threads (default: leave torch's choice)")
    t.add_argument("--no-progress", action="store_true", help="no progress bar (periodic lines instead)")
    t.add_argument("--print-config", action="store_true", help="print the resolved config and exit")
    t.add_argument("--dist-timeout", type=float, metavar="SECONDS",
                   help="under torchrun: seconds a collective may wait for the other ranks before failing "
                        "(default $UNILAB_DIST_TIMEOUT or 300)")
    t.set_defaults(overrides=[])

    e = sub.add_parser("eval", help="run the deterministic policy of a checkpoint; optional video")
    e.add_argument("checkpoint", help="checkpoint file or run directory")
    e.add_argument("--episodes", type=int, default=10)
    e.add_argument("--num-envs", type=int, help="parallel envs (default: min(episodes, training num_envs))")
    e.add_argument("--task", help="evaluate on another task id with the same spaces")
    e.add_argument("--video", help="video path (.mp4 needs imageio-ffmpeg, or .gif); default <run>/eval.mp4 or .gif")
    e.add_argument("--no-video", action="store_true")
    e.add_argument("--device", default="cpu")
    e.add_argument("--seed", type=int, default=12345)

    x = sub.add_parser("export", help="export the policy (normalizer folded in) to ONNX")
    x.add_argument("checkpoint", help="checkpoint file or run directory")
    x.add_argument("--out", help="ONNX path (default <run>/policy.onnx)")
    x.add_argument("--opset", type=int, default=17)
    return p


def _train(args: argparse.Namespace) -> int:
    if args.algo in SB3_ALGOS:
        if int(os.environ.get("WORLD_SIZE", "1") or 1) > 1:
            print(f"unilab train: --algo {args.algo} is single-process; under torchrun use the bundled PPO "
                  f"(--algo ppo)", file=sys.stderr)
            return 2
        from trainers.sb3.cli import train_sb3  # lazy: SB3 only when asked for

        if not args.task:
            raise SystemExit("unilab train --algo sb3-*: --task is required")
        args.num_envs = args.num_envs or 16
        args.total_steps = args.total_steps or 1_000_000
        args.out = args.out or str(Path("runs") / f"{args.task.replace('/', '_')}_{args.algo}")
        path = train_sb3(args)
        print(f"model: {path}")
        return 0

    if args.task and args.task.startswith("UniLab/"):
        import unilab_envs  # noqa: F401  thread policies before torch starts a parallel region
    from trainers.common.checkpoint import CheckpointError
    from trainers.ppo.config import ConfigError, load_config, to_dict
    from trainers.ppo.runner import train

    flags = dict(num_envs=args.num_envs, total_steps=args.total_steps, device=args.device, seed=args.seed,
                 out=args.out, torch_threads=args.torch_threads)
    if args.no_progress:
        args.overrides = [*args.overrides, "log.progress=false"]
    try:
        if args.resume and not args.task and not args.config:
            cfg = _config_from_checkpoint(args.resume, flags, args.overrides)
        else:
            cfg = load_config(args.task, args.config, args.overrides, **flags)
    except (ConfigError, CheckpointError) as e:
        print(f"unilab train: {e}", file=sys.stderr)
        return 2
    if args.print_config:
        import yaml
        print(yaml.safe_dump(to_dict(cfg), sort_keys=False), end="")
        return 0
    from trainers.ppo.distributed import DistributedError
    try:
        result = train(cfg, resume=args.resume, dist_timeout=args.dist_timeout)
    except CheckpointError as e:
        print(f"unilab train: {e}", file=sys.stderr)
        return 2
    except DistributedError as e:
        print(f"unilab train: distributed training aborted: {e}", file=sys.stderr, flush=True)
        return 3
    if os.environ.get("RANK", "0") not in ("", "0"):
        return 130 if result.interrupted else 0  # rank 0 reports
    s = result.stats
    print(f"{'stopped' if result.interrupted else 'done'}: {result.env_steps} steps, {result.iterations} iterations, "
          f"{result.wall_time:.0f} s; return {s.get('episode/return', float('nan')):.3f}"
          + (f", success {s['episode/success']:.1%}" if "episode/success" in s else ""))
    print(f"checkpoint: {result.checkpoint}")
    if result.learning_curve:
        print(f"learning curve: {result.learning_curve}")
    return 130 if result.interrupted else 0


def _config_from_checkpoint(path: str, flags: dict, overrides: list[str]):
    """The checkpoint's config with flags and overrides applied (``unilab train --resume ckpt``)."""
    from trainers.common.checkpoint import load_checkpoint
    from trainers.ppo.config import TrainConfig, deep_merge, from_dict, parse_overrides
    from trainers.ppo.runner import CKPT_FORMAT, CKPT_VERSION

    ckpt = load_checkpoint(path, CKPT_FORMAT, CKPT_VERSION, required=("config",))
    data = deep_merge(ckpt["config"], {k: v for k, v in flags.items() if v is not None})
    data = deep_merge(data, parse_overrides(overrides))
    if str(data.get("task", "")).startswith("UniLab/"):
        import unilab_envs  # noqa: F401
    return from_dict(TrainConfig, data)


def _eval(args: argparse.Namespace) -> int:
    from trainers.common.checkpoint import CheckpointError
    from trainers.ppo.evaluate import evaluate

    ckpt = Path(args.checkpoint)
    run_dir = ckpt if ckpt.is_dir() else ckpt.parent
    if args.no_video:
        video = None
    else:
        try:
            import imageio_ffmpeg  # noqa: F401
            ext = "mp4"
        except ImportError:
            ext = "gif"
        video = args.video or str(run_dir / f"eval.{ext}")
    try:
        res = evaluate(ckpt, episodes=args.episodes, num_envs=args.num_envs, task=args.task, video=video,
                       seed=args.seed, device=args.device)
    except CheckpointError as e:
        print(f"unilab eval: {e}", file=sys.stderr)
        return 2
    print(res.summary())
    return 0


def _export(args: argparse.Namespace) -> int:
    from trainers.common.checkpoint import CheckpointError
    from trainers.ppo.evaluate import export_onnx

    try:
        path = export_onnx(args.checkpoint, args.out, opset=args.opset)
    except CheckpointError as e:
        print(f"unilab export: {e}", file=sys.stderr)
        return 2
    print(f"onnx: {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    # key=value overrides may sit anywhere among the train flags
    args, extra = parser.parse_known_args(argv)
    bad = [e for e in extra if e.startswith("-") or "=" not in e or args.command != "train"]
    if bad:
        parser.error(f"unrecognized arguments: {' '.join(bad)}")
    if args.command == "train":
        args.overrides = list(extra)
    code = {"train": _train, "eval": _eval, "export": _export}[args.command](args)
    if args.command == "train" and int(os.environ.get("WORLD_SIZE", "1")) > 1:
        from trainers.ppo.distributed import exit_finished_rank

        exit_finished_rank(code)
    return code



if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
