"""``unilab adapt RUN --sim2real PROFILE``'s options and entry point (the rounds: :mod:`trainers.ppo.adapt`).

    unilab adapt policies/go1_joystick_real --out runs/adapt_wet \\
        --sim2real "{extends: go1_real, domain_randomization: {friction: [0.1, 0.3]}}" \\
        --rounds 6 --steps-per-round 500000 --eval-episodes 64 --report-seed 23456
    unilab adapt runs/ur5 --sim2real ur5_real --patience 2 algo.learning_rate=3e-4

Mistakes (a missing run, ``--out`` the run itself, an unknown config key, a profile for
another robot) end in one line on stderr and exit status 2, before any folder is made.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

DESCRIPTION = ("Fine-tune a trained bundled-PPO policy (a run folder, a shipped policy folder or a checkpoint) in "
               "rounds under shifted dynamics, with a safety fuse. Before the first round and after each one, the "
               "deterministic policy is scored on the same held-out episodes (the selection set, --eval-seed) under "
               "the shifted profile; the best weights are kept, and after --patience consecutive rounds more than "
               "--tolerance (relative) below the best the fuse rolls back to the best and stops. The source and the "
               "kept policy are also scored on a second, disjoint set of held-out episodes that chooses nothing "
               "(the report set, --report-seed): the before/after to quote, since the selection set's best is the "
               "maximum of several noisy scores. Writes a NEW folder (--out): adapt_log.csv, adapt_curve.png, best/ "
               "(the kept policy as a run folder) and train/ (the rounds' training run). The source run is only read.")

EPILOG = ("overrides: key=value pairs on the source run's config, as for `unilab train`, e.g. "
          "algo.learning_rate=3e-4 algo.schedule=fixed. metric (--metric auto picks the first the task reports): "
          "success = success rate; tracking = (1 - fall rate) x planar velocity tracking share; return = mean "
          "episode return. walks (joystick tasks, printed and logged): the share of episodes that neither fell "
          "nor tracked below 80% of the maximum")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``unilab adapt`` options (defaults: :class:`trainers.ppo.adapt.AdaptConfig`)."""
    from trainers.cli_checks import positive_int, step_count
    from trainers.ppo.adapt import METRICS, AdaptConfig

    d = AdaptConfig()
    p.add_argument("run", help="the policy to adapt: run folder, shipped policy folder or checkpoint.pt "
                              "(as --init-from takes)")
    p.add_argument("--sim2real", required=True, metavar="PROFILE",
                   help="the shifted dynamics: a profile name (go1_real), a YAML path, an inline mapping "
                        "\"{extends: go1_real, domain_randomization: {friction: [0.2, 0.4]}}\" (replaces the run's "
                        "profile), or none (the bare env; shift it with env_kwargs.KEY=VALUE overrides)")
    p.add_argument("--identified", metavar="FIT.json",
                   help="fine-tune on the floor a robot's log showed: the JSON `unilab robot identify --summary` wrote; "
                        "--sim2real's floor friction becomes the fit +- --identified-spread (and its added mass the "
                        "fitted payload +- 1 kg, when one was fitted)")
    p.add_argument("--identified-spread", type=float, default=0.2, metavar="FRACTION",
                   help="--identified: the friction range is fit x (1 -+ this), the fit's stated error (default 0.2)")
    p.add_argument("--out", help="the NEW folder to write (default runs/adapt_<run name>); never the run itself")
    p.add_argument("--rounds", type=positive_int, default=d.rounds, help=f"training rounds (default {d.rounds})")
    p.add_argument("--steps-per-round", type=step_count, default=d.steps_per_round,
                   help=f"env steps per round, rounded up to whole iterations (default {d.steps_per_round})")
    p.add_argument("--eval-episodes", type=positive_int, default=d.eval_episodes,
                   help=f"held-out episodes scored before the first round and after each (default {d.eval_episodes})")
    p.add_argument("--eval-seed", type=int, default=d.eval_seed,
                   help=f"seed of the selection set's envs (row i: seed + i), fixed across rounds and apart from "
                        f"the training envs' (default {d.eval_seed}, as `unilab eval`)")
    p.add_argument("--report-seed", type=int, default=d.report_seed,
                   help=f"seed of the report set's envs, apart from the selection set's and the training envs' "
                        f"(default {d.report_seed})")
    p.add_argument("--report-episodes", type=positive_int,
                   help="held-out episodes of the report set (default: --eval-episodes)")
    p.add_argument("--metric", choices=METRICS, default=d.metric,
                   help="the score (default auto: success, else tracking, else return)")
    p.add_argument("--patience", type=positive_int, default=d.patience,
                   help=f"consecutive bad rounds that trip the fuse (default {d.patience})")
    p.add_argument("--tolerance", type=float, default=d.tolerance,
                   help=f"a bad round scores more than this fraction below the best (default {d.tolerance})")
    p.add_argument("--num-envs", type=positive_int, help="training envs (default: the run's config)")
    p.add_argument("--device", help="training device: auto, cpu, cuda, cuda:1 (default: the run's config)")
    p.add_argument("--seed", type=int, help="seed of the training envs and learner (default: the run's config)")
    p.add_argument("--torch-threads", type=positive_int, help="torch intra-op threads (default: the run's config)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (periodic lines instead)")
    p.set_defaults(overrides=[])


def run(args: argparse.Namespace) -> int:
    """``unilab adapt``: check everything, then run the rounds; 0 when done (fuse or not), 130 on Ctrl-C."""
    import unilab_envs  # noqa: F401  thread policies before torch starts a parallel region; registers UniLab/*
    from trainers.cli_checks import UsageError, check_device, check_env_kwargs, check_task, fail
    from trainers.common.checkpoint import CheckpointError
    from trainers.common.runs import RunError, find_run
    from trainers.learners import LEARNERS
    from trainers.ppo import adapt as ad
    from trainers.ppo.config import ConfigError

    if int(os.environ.get("WORLD_SIZE", "1") or 1) > 1:
        return fail("adapt", "adapt is single-process; run it without torchrun")
    overrides = list(args.overrides) + (["log.progress=false"] if args.no_progress else [])
    try:
        settings = ad.AdaptConfig(rounds=args.rounds, steps_per_round=args.steps_per_round,
                                  eval_episodes=args.eval_episodes, patience=args.patience,
                                  tolerance=args.tolerance, metric=args.metric, eval_seed=args.eval_seed,
                                  report_seed=args.report_seed, report_episodes=args.report_episodes)
        source = find_run(args.run, "adapt")
        learner = LEARNERS[source.kind]
        if not learner.ppo_checkpoint:
            raise UsageError(f"{args.run} is {learner.what}; adapt fine-tunes bundled-PPO runs (unilab train --algo ppo)")
        out = Path(args.out) if args.out else Path("runs") / f"adapt_{source.folder.resolve().name}"
        ad.check_out(out, source.folder)
        sim2real = ad.parse_sim2real(args.sim2real)
        if args.identified:
            from unilab_robot.identified import identified_profile, load_fit

            sim2real = identified_profile(sim2real, load_fit(args.identified), args.identified_spread)
        cfg = ad.train_config(source.path, sim2real, out, settings, overrides,
                              num_envs=args.num_envs, device=args.device, seed=args.seed,
                              torch_threads=args.torch_threads)
        check_task(cfg.task)
        check_device(cfg.device)
        check_env_kwargs(cfg.task, cfg.env_kwargs, cfg.vectorization_mode)
        ad.check_seeds(cfg, settings)
    except (RunError, UsageError, ConfigError, CheckpointError, ValueError) as e:
        return fail("adapt", e)
    print(f"adapting {source.path} -> {out}: {settings.rounds} round(s) of {ad.round_steps(cfg, settings)} steps "
          f"under sim2real {_profile_text(cfg.sim2real)}; held-out episodes: {settings.eval_episodes} to choose the "
          f"best round (selection set, seed {settings.eval_seed}), {settings.report_count} to report it (report set, "
          f"seed {settings.report_seed}); fuse: patience {settings.patience}, tolerance {settings.tolerance:.0%}",
          flush=True)
    from trainers.ppo.faults import TrainingFault

    try:
        result = ad.adapt(cfg, settings, out, title=f"adapting {source.folder.name}",
                          echo=lambda line: print(line, flush=True))
    except (ConfigError, CheckpointError, TrainingFault) as e:
        return fail("adapt", e)
    except KeyboardInterrupt:
        print(f"unilab adapt: interrupted; what was finished is in {out} (adapt_log.csv, best/)", file=sys.stderr)
        return 130
    print(ad.summary(result))
    return 130 if result.interrupted else 0


def _profile_text(sim2real) -> str:
    if sim2real is None:
        return "none (the bare env)"
    if isinstance(sim2real, dict):
        import json
        return json.dumps(sim2real, separators=(", ", ": "))
    return str(sim2real)

