"""``unilab distill --teacher RUN``'s options and entry point (the loop: :mod:`trainers.distill.dagger`).

    unilab distill --teacher policies/go1_rough --task UniLab/Go1JoystickDepth-v0 --out runs/go1_depth \\
        --num-envs 512 --total-steps 2e7 --sim2real go1_depth_real
    unilab distill --teacher runs/go1 --task UniLab/Go1Joystick-v0 --out runs/student distill.beta_decay=0.5

Mistakes (a missing teacher, a group the env lacks, a student observation holding a privileged
group, an unknown config key, an ``--out`` holding a run) end in one line on stderr and exit
status 2, before any folder is written. The run folder, the output fallback, the stop signals and
the closing lines are every learner's (:mod:`trainers.common.lifecycle`).
"""

from __future__ import annotations

import argparse

DEFAULT_TASK = "UniLab/Go1JoystickDepth-v0"

DESCRIPTION = ("Distill a trained bundled-PPO teacher into a student that sees the task's policy observation only "
               "(DAgger): each step the teacher's action is executed with probability beta (distill.beta, times "
               "distill.beta_decay per iteration), the student's otherwise, and the student's actor (the bundled PPO's, "
               "with a CNN on image groups, or a GRU with policy.recurrent=gru) is fitted to the teacher's action "
               "means on the visited states. The "
               "teacher reads its own observation, assembled by group name from the env's privileged and policy "
               "observations. Writes a bundled-PPO run (--out): config.yaml, distill.yaml, checkpoint.pt, "
               "progress.csv; `unilab eval / export / play` read it, `unilab train --init-from` fine-tunes it.")

EPILOG = ("overrides: key=value pairs on the student's run config, as for `unilab train` (policy.*, algo.num_steps "
          "= rollout length, obs_history, env_kwargs.*, log.*), and distill.* for the distillation: distill.beta, "
          "distill.beta_decay, distill.beta_min, distill.learning_rate, distill.num_epochs, distill.num_minibatches, "
          "distill.max_grad_norm")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``unilab distill`` options."""
    from trainers.cli_checks import positive_int, step_count

    p.add_argument("--teacher", required=True, metavar="RUN",
                   help="the teacher: a bundled-PPO run folder, shipped policy folder or checkpoint.pt")
    p.add_argument("--task", help=f"the student's task (default: --config's task, else {DEFAULT_TASK})")
    p.add_argument("--out", help="run directory (default runs/<task>); one that holds a run is refused unless --overwrite")
    p.add_argument("--overwrite", action="store_true", help="--out holds a run: move it aside first (nothing is deleted)")
    p.add_argument("--num-envs", type=positive_int, help="parallel envs (default: the task's config)")
    p.add_argument("--total-steps", type=step_count, help="env steps to distill for (e.g. 2e7)")
    p.add_argument("--seed", type=int, help="seed of the envs, the student and the DAgger draws (default 0)")
    p.add_argument("--device", help="auto (default), cpu, cuda, cuda:1")
    p.add_argument("--torch-threads", type=positive_int, help="torch intra-op threads")
    p.add_argument("--sim2real", metavar="PROFILE|none", help="sim-to-real wrappers on the student's env, as for train")
    p.add_argument("--config", help="YAML file with the student's run config keys, as `unilab train --config` takes")
    p.add_argument("--init-from", metavar="RUN", help="start the student from this run's actor and observation "
                   "normalizer (a student distilled before, for a new teacher or profile) instead of fresh weights")
    p.set_defaults(overrides=[])


def student_task(args: argparse.Namespace) -> str:
    """``--task``, else the task of the ``--config`` file, else :data:`DEFAULT_TASK`."""
    if args.task:
        return args.task
    from trainers.ppo.config import read_yaml

    return (read_yaml(args.config).get("task") if args.config else None) or DEFAULT_TASK


def build_configs(args: argparse.Namespace):
    """The student's :class:`~trainers.ppo.config.TrainConfig` (task defaults < ``--config`` < flags < overrides,
    as ``unilab train`` layers them) and the :class:`DistillConfig` (its ``distill.*`` overrides)."""
    from trainers.ppo.config import ConfigError, from_dict, load_config, parse_overrides

    from .config import DistillConfig

    ours = [o for o in args.overrides if o.startswith("distill.")]
    rest = [o for o in args.overrides if not o.startswith("distill.")]
    flags = dict(num_envs=args.num_envs, total_steps=args.total_steps, seed=args.seed, device=args.device,
                 out=args.out, torch_threads=args.torch_threads, sim2real=args.sim2real, init_from=args.init_from)
    cfg = load_config(student_task(args), args.config, rest, **flags)
    if cfg.policy.estimator is not None:  # DAgger fits the student's actions: its estimator would learn nothing
        raise ConfigError("policy.estimator: distilling into a student with a state estimator is not supported yet; "
                          "distill into one without (policy.estimator: null)")
    section = parse_overrides(ours).get("distill", {})
    return cfg, from_dict(DistillConfig, {**section, "teacher": args.teacher}, prefix="distill.")


def run(args: argparse.Namespace) -> int:
    """``unilab distill``: the exit status."""
    from pathlib import Path

    from trainers.cli_checks import check_device, check_task, fail
    from trainers.common.checkpoint import CheckpointError
    from trainers.common.lifecycle import run_in_folder

    if not Path(args.teacher).exists():
        return fail("distill", f"teacher {args.teacher} does not exist: pass a run folder `unilab train --out` wrote "
                               "or a shipped policy folder (e.g. policies/go1_rough)")
    try:
        check_task(student_task(args))
        cfg, dcfg = build_configs(args)
        check_device(cfg.device)
    except (CheckpointError, ValueError) as e:  # ValueError: ConfigError, UsageError, Sim2RealError
        return fail("distill", e)
    return run_in_folder(cfg.out_dir, lambda: _distill(cfg, dcfg), "distill", reads=args.teacher,
                         overwrite=args.overwrite)


def _distill(cfg, dcfg) -> int:
    """The distillation of the checked configs in their claimed folder; the exit status."""
    from pathlib import Path

    from trainers.cli_checks import UsageError, fail
    from trainers.common.checkpoint import CheckpointError

    from .dagger import Distiller

    try:
        if cfg.init_from and not Path(cfg.init_from).exists():
            raise UsageError(f"--init-from {cfg.init_from} does not exist: pass a run folder or its checkpoint.pt")
        distiller = Distiller(cfg, dcfg)
    except (CheckpointError, ValueError) as e:  # ValueError: ConfigError, UsageError, GroupError, Sim2RealError
        return fail("distill", e)
    try:
        result = distiller.learn()
    finally:
        distiller.close()
    print(f"distilled {result.iterations} iterations ({result.env_steps} steps) in {result.wall_time:.0f} s; "
          f"checkpoint {result.checkpoint}. Evaluate: unilab eval {result.out_dir}")
    return result.exit_status
