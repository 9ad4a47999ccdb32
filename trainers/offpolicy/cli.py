"""``unilab train --algo sac|td3``: the bundled off-policy learner from the command line.

Flags and ``key=value`` overrides layer onto :class:`~trainers.offpolicy.config.OffPolicyConfig` as
PPO's do (:func:`~trainers.offpolicy.config.load_offpolicy_config`); ``--resume`` continues a run from
its checkpoint (the config it was trained with, then the flags). The run folder, the output
fallback, the stop signals (SIGINT, SIGTERM, SIGHUP: finish the env step, save, exit 128 + signal)
and the closing lines are every learner's (:mod:`trainers.common.lifecycle`).
"""

from __future__ import annotations

import argparse
import os
import sys

OFFPOLICY_ALGOS = ("sac", "td3")


def train_offpolicy(args: argparse.Namespace) -> int:
    """Run ``unilab train`` for ``args.algo`` in :data:`OFFPOLICY_ALGOS` (or ``--resume`` of such a run); the exit status."""
    from trainers.cli_checks import UsageError, check_device, check_task, fail
    from trainers.common.checkpoint import CheckpointError
    from trainers.common.lifecycle import run_in_folder
    from trainers.offpolicy.config import OffPolicyConfig, load_offpolicy_config
    from trainers.offpolicy.runner import load_run_config
    from unilab_envs.config import ConfigError, deep_merge, from_dict, parse_overrides, to_dict

    if not args.algo:  # `unilab train --resume RUN` of an off-policy run: its own algo
        try:
            args.algo = load_run_config(args.resume).algo.kind
        except CheckpointError as e:
            return fail("train", e)
    if int(os.environ.get("WORLD_SIZE", "1") or 1) > 1:
        return fail("train", f"--algo {args.algo} is single-process; under torchrun use the bundled PPO (--algo ppo)")
    if args.init_from:
        return fail("train", f"--init-from starts the bundled PPO from a PPO run; --algo {args.algo} has no such option")
    overrides = [*args.overrides, "log.progress=false"] if args.no_progress else list(args.overrides)
    flags = dict(num_envs=args.num_envs, total_steps=args.total_steps, device=args.device, seed=args.seed, out=args.out,
                 torch_threads=args.torch_threads)
    try:
        if args.resume and not args.task and not args.config:  # the run's own config, then the flags and overrides
            layers = deep_merge(to_dict(load_run_config(args.resume)), {k: v for k, v in flags.items() if v is not None})
            cfg = from_dict(OffPolicyConfig, deep_merge(layers, parse_overrides(overrides)))
        else:
            cfg = load_offpolicy_config(args.algo, args.task, args.config, overrides, **flags)
        check_task(cfg.task)
        check_device(cfg.device)
    except (ConfigError, CheckpointError, UsageError) as e:
        return fail("train", e)
    if args.print_config:
        import yaml

        print(yaml.safe_dump(to_dict(cfg), sort_keys=False), end="")
        return 0
    return run_in_folder(cfg.out_dir, lambda: _run(args, cfg), resume=args.resume, overwrite=args.overwrite)


def _run(args: argparse.Namespace, cfg) -> int:
    """The off-policy run of the resolved ``cfg``; the exit status."""
    from trainers.cli_checks import fail
    from trainers.common.checkpoint import CheckpointError
    from trainers.common.lifecycle import report
    from trainers.common.signals import exit_status
    from trainers.offpolicy.runner import train
    from unilab_envs.config import ConfigError

    try:
        result = train(cfg, resume=args.resume)
    except (CheckpointError, ConfigError, ValueError) as e:
        return fail("train", e)
    except KeyboardInterrupt:
        print("unilab train: interrupted before the first env step; nothing was saved", file=sys.stderr)
        return 130
    report(result, f"{result.updates} updates")
    return exit_status(result.stop_signal) if result.interrupted else 0

