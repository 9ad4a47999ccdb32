"""``unilab train`` (``--algo ppo``, the default) for the bundled PPO: from the parsed arguments to the exit status.

Settings layer as task YAML defaults < ``--config`` < flags < ``key=value`` overrides; ``--resume``
without ``--task`` / ``--config`` takes the checkpoint's own config. The run folder, the output
fallback, the stop signals and the closing lines are the one lifecycle of every learner
(:mod:`trainers.common.lifecycle`). Under ``torchrun`` a restarted group goes on in its own folder.
"""

from __future__ import annotations

import argparse
import os
import sys


def train(args: argparse.Namespace) -> int:
    """``unilab train --algo ppo``; the exit status."""
    from trainers.cli_checks import UsageError, check_device, check_env_kwargs, check_task, fail
    from trainers.common.checkpoint import CheckpointError
    from trainers.common.lifecycle import run_in_folder
    from trainers.ppo.config import ConfigError, load_config, to_dict

    flags = dict(num_envs=args.num_envs, total_steps=args.total_steps, device=args.device, seed=args.seed,
                 out=args.out, torch_threads=args.torch_threads, init_from=args.init_from)
    if args.resume and args.init_from:
        return fail("train", UsageError("--resume continues a run, --init-from starts a new one from its weights: give one"))
    if args.no_progress:
        args.overrides = [*args.overrides, "log.progress=false"]
    try:
        if args.resume and not args.task and not args.config:
            cfg = config_from_checkpoint(args.resume, flags, args.overrides)
        else:
            cfg = load_config(args.task, args.config, args.overrides, **flags)
        check_task(cfg.task)
        check_device(cfg.device)
        check_env_kwargs(cfg.task, cfg.env_kwargs, cfg.vectorization_mode)
    except (ConfigError, CheckpointError, UsageError) as e:
        return fail("train", e)
    if args.print_config:
        import yaml
        print(yaml.safe_dump(to_dict(cfg), sort_keys=False), end="")
        return 0
    single = int(os.environ.get("WORLD_SIZE", "1") or 1) <= 1  # torchrun: a restarted group goes on in its folder
    return run_in_folder(cfg.out_dir, lambda: _run(args, cfg), claim=single, resume=args.resume, reads=args.init_from,
                         overwrite=args.overwrite)


def _run(args: argparse.Namespace, cfg) -> int:
    """The bundled PPO's run of the resolved ``cfg``; the exit status."""
    from trainers.cli_checks import fail
    from trainers.common.checkpoint import CheckpointError
    from trainers.common.lifecycle import report
    from trainers.common.signals import exit_status
    from trainers.ppo.config import ConfigError
    from trainers.ppo.distributed import DistributedError
    from trainers.ppo.faults import TrainingFault
    from trainers.ppo.runner import train as train_runner

    try:
        result = train_runner(cfg, resume=args.resume, dist_timeout=args.dist_timeout)
    except (CheckpointError, ConfigError) as e:
        print(f"unilab train: {e}", file=sys.stderr)
        return 2
    except TrainingFault as e:  # a NaN/inf learner or a checkpoint that could not be written
        return fail("train", e)
    except DistributedError as e:
        print(f"unilab train: distributed training aborted: {e}", file=sys.stderr, flush=True)
        return 3
    except KeyboardInterrupt:  # while the envs are built; once training runs, Ctrl-C stops it and saves
        print("unilab train: interrupted before the first iteration; nothing was saved", file=sys.stderr)
        return 130
    status = exit_status(result.stop_signal) if result.interrupted else 0
    if os.environ.get("RANK", "0") not in ("", "0"):
        return status  # rank 0 reports
    report(result, f"{result.iterations} iterations")
    return status


def config_from_checkpoint(path: str, flags: dict, overrides: list[str]):
    """The checkpoint's config with flags and overrides applied (``unilab train --resume ckpt``)."""
    from trainers.common.checkpoint import load_checkpoint
    from trainers.ppo.checkpoint_format import CKPT_FORMAT, CKPT_VERSION
    from trainers.ppo.config import TrainConfig, deep_merge, from_dict, parse_overrides

    ckpt = load_checkpoint(path, CKPT_FORMAT, CKPT_VERSION, required=("config",))
    data = deep_merge(ckpt["config"], {k: v for k, v in flags.items() if v is not None})
    data = deep_merge(data, parse_overrides(overrides))
    if str(data.get("task", "")).startswith("UniLab/"):
        import unilab_envs  # noqa: F401
    return from_dict(TrainConfig, data)
