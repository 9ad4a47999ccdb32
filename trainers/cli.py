"""``unilab``: train, evaluate and export policies.

    unilab train --task UniLab/Go1Joystick-v0 --total-steps 6e6 --out runs/go1
    unilab train --task UniLab/UR5Reach-v0 algo.learning_rate=3e-4 policy.actor_hidden=[64,64]
    unilab train --resume runs/go1/checkpoint.pt --total-steps 2e7
    unilab train --algo sb3-sac --task UniLab/UR5Reach-v0 --num-envs 16
    unilab eval runs/go1/checkpoint.pt --episodes 20 --video runs/go1/eval.mp4
    unilab export runs/go1/checkpoint.pt --out runs/go1/policy.onnx
    unilab tasks                      # the registered tasks: sizes, control rate, episode, reward terms
    unilab bench --rows 1,5           # performance ratios (same as python -m trainers.bench)
    unilab play runs/go1 --headless   # the exported policy in plain MuJoCo (a window without --headless)
    unilab play runs/go1 --headless --video   # ... and film an episode: runs/play/go1.mp4
    unilab adapt runs/go1 --sim2real go1_real --out runs/go1_adapted   # fine-tune in rounds, with a rollback fuse
    unilab distill --teacher policies/go1_rough --out runs/go1_depth  # a depth student from a height-scan teacher

Train settings layer as: task YAML defaults (``trainers/configs``) < ``--config file`` <
flags < ``key=value`` overrides. ``unilab train --task T --print-config`` shows the result.
Without ``--task`` (nor a config or checkpoint naming one) it trains ``UniLab/Go1Joystick-v0``.

An ``--out`` that holds a run is refused (``--resume`` it, pick another ``--out``, or
``--overwrite`` to move it aside); Ctrl-C, SIGTERM and SIGHUP finish the iteration, save and exit
with 130, 143, 129; a closed stdout/stderr sends the output to ``<out>/train.log`` (docs/training.md).

Mistakes (an unknown task, a bad option, config value or env keyword, ``--device cuda``
without CUDA) end in one line on stderr and exit status 2, before any run folder is made.
So do a corrupt checkpoint, a NaN learner and a full disk during training (docs/faults.md).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from trainers.cli_checks import fail, step_count
from trainers.learners import LEARNERS  # torch-free: a learner is imported when it is asked for


class _Parser(argparse.ArgumentParser):
    """argparse that answers a mistake with one line on stderr (exit 2) instead of the usage block."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``unilab`` parser: train, eval, export, tasks, bench, play."""
    from trainers.bench import cli as bench_cli
    from trainers.cli_checks import positive_int

    p = _Parser(prog="unilab", description="UniLab: train, evaluate and export robot policies.")
    sub = p.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train a policy (bundled PPO, bundled SAC/TD3 with --algo sac|td3, or SB3 with --algo sb3-*)",
                       usage="unilab train [options] [key=value ...]",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="overrides: key=value pairs on the config, e.g. algo.learning_rate=3e-4 "
                              "policy.actor_hidden=[128,128] log.tensorboard=false")
    t.add_argument("--algo", choices=LEARNERS.algos,
                   help="trainer (default: ppo, or with --resume the run's own; sac / td3: the bundled off-policy "
                        "learner, its replay buffer on the learner's device)")
    t.add_argument("--task", help="Gymnasium id, e.g. UniLab/Go1Joystick-v0 (the default) or HalfCheetah-v5; "
                                  "`unilab tasks` lists UniLab's. Your own task: module:Id (e.g. "
                                  "my_dog_joystick:MyLab/MyDogJoystick-v0) imports the module that registers it, "
                                  "from the current directory too; eval, export and play of the run import it again")
    t.add_argument("--num-envs", type=positive_int, help="parallel envs (default: the task's config)")
    t.add_argument("--total-steps", type=step_count, help="env steps to train for (e.g. 5e6)")
    t.add_argument("--device", help="auto (default), cpu, cuda, cuda:1")
    t.add_argument("--seed", type=int, help="seed of the envs and the learner (default 0)")
    t.add_argument("--out", help="run directory (default runs/<task>); one that holds a run is refused unless "
                                 "--resume names it or --overwrite is given")
    t.add_argument("--overwrite", action="store_true",
                   help="--out holds a run: move it aside to OUT.old-<timestamp> (nothing is deleted) and start anew")
    t.add_argument("--config", help="YAML file with config keys")
    t.add_argument("--resume", help="checkpoint (or run directory) to continue from")
    t.add_argument("--init-from", dest="init_from", metavar="RUN",
                   help="start a new run from RUN's weights (checkpoint or run directory): fine-tune under another "
                        "profile or config; init_fresh_normalizer=true re-learns the observation statistics")
    t.add_argument("--torch-threads", type=positive_int, help="torch intra-op threads (default: leave torch's choice)")
    t.add_argument("--no-progress", action="store_true", help="no progress bar (periodic lines instead)")
    t.add_argument("--print-config", action="store_true", help="print the resolved config and exit")
    t.add_argument("--dist-timeout", type=float, metavar="SECONDS",
                   help="under torchrun: seconds a collective may wait for the other ranks before failing "
                        "(default $UNILAB_DIST_TIMEOUT or 300)")
    t.set_defaults(overrides=[])

    e = sub.add_parser("eval", help="run the deterministic policy of a run (bundled PPO or SB3); optional video",
                       description="Deterministic return, length, termination and success of a run written by "
                                   "`unilab train` (bundled PPO or --algo sb3-*), on the env it trained on "
                                   "(sim-to-real wrappers included unless --sim2real none).")
    e.add_argument("checkpoint", help="run directory (or its checkpoint.pt / model.zip)")
    e.add_argument("--episodes", type=positive_int, default=10, help="episodes to run (default 10)")
    e.add_argument("--num-envs", type=positive_int, help="parallel envs (default: min(episodes, training num_envs))")
    e.add_argument("--task", help="evaluate on another task id with the same spaces (module:Id imports the module, "
                                  "from the current directory too)")
    e.add_argument("--sim2real", metavar="PROFILE|none",
                   help="sim-to-real wrappers: 'none' for the bare env, or a profile name / YAML path "
                        "(default: what the run trained with, which may be wider than the profile it extends; the "
                        "first line of the output names it; curricula are left out: pushes come from the "
                        "profile's whole range and a profile curriculum's sections run at full strength)")
    e.add_argument("--video", nargs="?", const="", metavar="PATH",
                   help="also film one episode of env 0 (off by default: MuJoCo's software renderer takes "
                        "~0.15-0.2 s a frame on a CPU, minutes for a 1000-step Go1 episode; a progress bar shows it). "
                        "PATH: .mp4 (needs imageio-ffmpeg) or .gif; without PATH runs/eval/<run name>.mp4 under "
                        "the working directory (.gif without imageio-ffmpeg), never into the run or policy folder. "
                        "Put it after the run folder")
    e.add_argument("--no-video", action="store_true", help=argparse.SUPPRESS)  # the old opt-out; now the default
    e.add_argument("--no-progress", action="store_true", help="no progress bar while filming")
    e.add_argument("--device", default="cpu", help="policy device: cpu (default), cuda, cuda:1")
    e.add_argument("--seed", type=int, default=12345,
                   help="seed of the evaluation envs (default 12345): env i gets SEED + i, so two evaluations "
                        "whose seeds differ by less than --num-envs share most of their episodes")
    e.add_argument("--levels", type=int, nargs=2, metavar=("LO", "HI"),
                   help="terrain tasks: the levels evaluated (default 0 5, the level set a terrain policy's headline "
                        "is stated on): every env runs one episode from a level drawn in LO..HI, so the curriculum "
                        "promotes no env during the evaluation; the second output line says what was measured")
    e.add_argument("--commands", type=float, nargs="+", metavar="VX",
                   help="joystick tasks, bundled PPO: also hold each forward-speed command (m/s) for 10 s on 32 "
                        "envs and print the measured speed, yaw rate and falls, e.g. --commands 0.3 0.6 1.0")

    x = sub.add_parser("export", help="export the deterministic policy (normalizer folded in, actions clipped) to ONNX",
                       description="Write a run's deterministic policy (bundled PPO or SB3 PPO/SAC/TD3) as ONNX: "
                                   "input 'obs' [batch, obs_dim] raw observations (the training normalizer "
                                   "folded in), output 'actions' [batch, act_dim] within the action space, as the "
                                   "env executes them.")
    x.add_argument("checkpoint", help="run directory (or its checkpoint.pt / model.zip)")
    x.add_argument("--out", help="ONNX path (default <run>/policy.onnx)")
    x.add_argument("--opset", type=int, default=17, help="ONNX opset version (default 17)")
    x.add_argument("--precision", choices=("fp32", "fp16", "int8"), default="fp32",
                   help="numeric precision of the graph (default fp32). fp16: float16 weights and activations; "
                        "int8: dynamic quantization of the weights (onnxruntime). Input and output stay float32. "
                        "The actions are checked against fp32 on observations recorded in the task (8 envs x 100 "
                        "steps), bare and under the run's sim-to-real profile when it trained under one; both errors "
                        "are printed and stored in the deploy spec, the bound applies to the worse (docs/deploy.md)")
    x.add_argument("--max-action-error", type=float, metavar="FRAC",
                   help="fp16/int8: refuse to write a model whose actions differ from fp32 by more than FRAC of the "
                        "action range (default 0.01 for fp16, 0.05 for int8)")
    x.add_argument("--force", action="store_true", help="fp16/int8: write the model even over --max-action-error")

    sh = sub.add_parser("ship", help="write a run as a policy folder: slim checkpoint, config, curve, ONNX, deploy spec",
                        description="Write a bundled-PPO or SAC / TD3 run as a shippable policy folder: the checkpoint "
                                    "without optimizer, env or replay state (eval, export and PPO's --init-from read "
                                    "it; --resume goes on from it without an exact continuation), config.yaml, "
                                    "learning_curve.png, policy.onnx and deploy_spec.json.")
    sh.add_argument("run", help="run directory (or its checkpoint.pt)")
    sh.add_argument("--out", required=True, help="the policy folder to write, e.g. policies/go1_joystick_real; "
                                                 "one that holds a policy or run is refused unless --overwrite")
    sh.add_argument("--overwrite", action="store_true",
                    help="--out holds a policy or run: move it aside to OUT.old-<timestamp> first (nothing is deleted)")

    tk = sub.add_parser("tasks", help="list the registered UniLab tasks: sizes, control rate, episode, reward terms",
                        description="The registered UniLab tasks, read from the tasks themselves.")
    tk.add_argument("--markdown", action="store_true", help="print a Markdown table (as in the README)")
    tk.add_argument("--groups", nargs="*", metavar="ID", default=None,
                    help="print the observation groups (columns, units, default noise, meaning) of these tasks "
                         "(module:Id for one of yours), or of every UniLab task when none is named")

    b = sub.add_parser("bench", help="performance ratios side by side, one table (= python -m trainers.bench)",
                       description=bench_cli.DESCRIPTION)
    bench_cli.add_arguments(b)

    from trainers import play_cli

    pl = sub.add_parser("play", help="run an exported policy in plain MuJoCo (window, or --headless metrics)",
                        description=play_cli.DESCRIPTION)
    play_cli.add_arguments(pl)

    from trainers import adapt_cli

    ad = sub.add_parser("adapt", help="fine-tune a policy in rounds under shifted dynamics, with a rollback fuse",
                        usage="unilab adapt RUN --sim2real PROFILE [options] [key=value ...]",
                        description=adapt_cli.DESCRIPTION, epilog=adapt_cli.EPILOG)
    adapt_cli.add_arguments(ad)

    from unilab_robot import robot_cli

    rb = sub.add_parser("robot", help="the DDS robot bridge: a simulated robot (sim), a policy on the robot (run)",
                        description=robot_cli.DESCRIPTION)
    robot_cli.add_arguments(rb)

    from trainers.distill import cli as distill_cli

    ds = sub.add_parser("distill", help="distill a teacher run into a student on the task's policy observation (DAgger)",
                        usage="unilab distill --teacher RUN [options] [key=value ...]",
                        description=distill_cli.DESCRIPTION, epilog=distill_cli.EPILOG)
    distill_cli.add_arguments(ds)

    from trainers import motion_cli

    mo = sub.add_parser("motion", help="reference motions: retarget the CMU clips to the G1, check motion files",
                        description=motion_cli.DESCRIPTION)
    motion_cli.add_arguments(mo)
    return p


def _train(args: argparse.Namespace) -> int:
    """``unilab train``: the learner ``--algo`` names (default: the ``--resume``d run's own, else ppo) trains."""
    import unilab_envs  # noqa: F401  thread policies before torch starts a parallel region; registers UniLab/*

    return _learner_to_train(args).load().train(args)


def _learner_to_train(args: argparse.Namespace):
    """The registry's learner for ``--algo``; without it, the learner of the run ``--resume`` names, else PPO's."""
    from trainers.common.runs import RunError, find_run

    if args.algo:
        return LEARNERS.for_algo(args.algo)
    if args.resume:
        try:
            return LEARNERS[find_run(args.resume, "train").kind]
        except RunError:  # not a run: the PPO loader says what is wrong with it
            pass
    args.algo = "ppo"
    return LEARNERS.for_algo("ppo")


def _tasks(args: argparse.Namespace) -> int:
    """``unilab tasks``: the registered UniLab tasks, one row each."""
    from unilab_envs.catalog import format_table, group_table, task_catalog

    if args.groups is None:
        print(format_table(task_catalog(), markdown=args.markdown))
        return 0
    from trainers.common.envs import import_task_module
    from unilab_envs.tasks import TASKS

    for task in args.groups or list(TASKS):
        print(f"{task}\n{group_table(import_task_module(task))}\n")
    return 0


def _play(args: argparse.Namespace) -> int:
    """``unilab play``: the exported policy in plain MuJoCo (no torch)."""
    from trainers.play_cli import run

    return run(args)


def _adapt(args: argparse.Namespace) -> int:
    """``unilab adapt``: fine-tune in rounds under a shifted profile, with a fuse (:mod:`trainers.adapt_cli`)."""
    from trainers.adapt_cli import run

    return run(args)


def _distill(args: argparse.Namespace) -> int:
    """``unilab distill``: a teacher into a student, DAgger (:mod:`trainers.distill.cli`)."""
    from trainers.distill.cli import run

    return run(args)


def _robot(args: argparse.Namespace) -> int:
    """``unilab robot sim|run``: the DDS robot bridge (:mod:`trainers.robot_cli`)."""
    from unilab_robot.robot_cli import run

    return run(args)


def _motion(args: argparse.Namespace) -> int:
    """``unilab motion retarget|check``: reference motions (:mod:`trainers.motion_cli`)."""
    from trainers.motion_cli import run

    return run(args)


def _bench(args: argparse.Namespace) -> int:
    """``unilab bench``: the same run as ``python -m trainers.bench``."""
    from trainers.bench.cli import run

    return run(args)


def _eval(args: argparse.Namespace) -> int:
    """``unilab eval``: a bundled-PPO or SB3 run's deterministic policy on its (optionally wrapped) env."""
    from trainers.common.checkpoint import CheckpointError
    from trainers.common.envs import AS_TRAINED, Sim2RealError, check_task
    from trainers.common.runs import RunError, find_run
    from trainers.ppo.config import ConfigError

    try:
        run = find_run(args.checkpoint, "eval")
        if args.task:
            check_task(args.task)
    except (RunError, ValueError) as e:
        return fail("eval", e)
    if args.commands:
        try:  # before any env is built: the evaluation would run first, then --commands fail
            _check_commands(run)
        except (CheckpointError, ValueError) as e:
            return fail("eval", e)
    try:  # the first line says which profile the numbers are under
        print(_eval_header(run, args), flush=True)
        if not args.task:
            _check_run_task(run)
        terrain = _terrain_plan(run, args)
    except (CheckpointError, ValueError) as e:
        return fail("eval", e)
    video = _video_path(args, run.folder)
    kwargs = dict(episodes=args.episodes, num_envs=args.num_envs, task=args.task, video=video, seed=args.seed,
                  device=args.device, sim2real=AS_TRAINED if args.sim2real is None else args.sim2real,
                  progress=not args.no_progress)
    if terrain is not None:  # a fixed level set: one episode per env, each env's first (no promotion)
        print(terrain.line(), flush=True)
        kwargs.update(num_envs=terrain.episodes, env_kwargs=terrain.env_kwargs, skip_first=False)
    asked = _task_evaluation_kwargs(run, args)
    if asked:  # e.g. G1Track: each episode one whole clip from its first frame
        print(f"task evaluation keywords: {asked}", flush=True)
        kwargs["env_kwargs"] = {**kwargs.get("env_kwargs", {}), **asked}
    try:
        res = LEARNERS[run.kind].load().evaluate(run.path, **kwargs)
    except (CheckpointError, ConfigError, Sim2RealError) as e:
        return fail("eval", e)
    print(res.summary())
    from trainers.common.evaluation import estimator_rmse_line

    estimated = estimator_rmse_line(res.estimator_rmse)  # the same line training ends with
    if estimated:
        print(estimated)
    for line in res.group_lines():
        print(line)
    if args.commands:
        from trainers.ppo.joystick_eval import measure_commands

        try:
            for line in measure_commands(run.path, args.commands, seed=args.seed, device=args.device):
                print(line.line())
        except ValueError as e:
            return fail("eval", e)
    return 0


def _terrain_plan(run, args: argparse.Namespace):
    """:func:`trainers.common.terrain_eval.terrain_eval` of the evaluated task (``None``: not a terrain task)."""
    from trainers.common.terrain_eval import terrain_eval

    task = args.task or _run_config(run).get("task")
    return terrain_eval(str(task), args.episodes, args.num_envs, args.levels)


def _task_evaluation_kwargs(run, args: argparse.Namespace) -> dict:
    """:func:`trainers.common.task_eval.evaluation_kwargs` of the evaluated task."""
    from trainers.common.task_eval import evaluation_kwargs

    return evaluation_kwargs(str(args.task or _run_config(run).get("task")))


def _run_config(run) -> dict:
    """The config a run trained with (its learner's ``run_config`` hook)."""
    return LEARNERS[run.kind].load().run_config(run)


def _check_run_task(run) -> None:
    """The run's task is registered here (a ``module:Id`` task's module imports, from the current
    directory too); ``ValueError`` saying where to run otherwise. Builds no env."""
    from trainers.common.deploy_export import run_task
    from trainers.common.envs import check_task

    found = run_task(run.folder)
    if found is not None:
        check_task(found[0])


def _eval_header(run, args: argparse.Namespace) -> str:
    """``unilab eval``'s first line: the run, the task and the sim-to-real profile the numbers are under."""
    from trainers.common.profile_label import evaluation_profile

    config = _run_config(run)
    return (f"evaluating {args.checkpoint} on {args.task or config.get('task')}; "
            f"{evaluation_profile(args.sim2real, config.get('sim2real'))}")


def _check_commands(run) -> None:
    """``--commands`` needs a bundled-PPO run of a task with velocity commands (the joystick tasks);
    ``ValueError`` saying so otherwise. Reads the run's checkpoint, builds no env."""
    learner = LEARNERS[run.kind]
    if not learner.measures_commands:
        raise ValueError(f"--commands measures bundled-PPO runs only (this is {learner.what}); leave out --commands")
    learner.load().check_commands(run)


def _video_path(args: argparse.Namespace, run_folder: Path) -> str | None:
    """The video ``unilab eval`` writes: none unless ``--video`` is given; a bare ``--video`` writes
    ``runs/eval/<run name>.mp4`` under the working directory, never into the run or policy folder."""
    if args.video is None or args.no_video:
        return None
    from trainers.common.video import default_video_path

    return args.video or str(default_video_path("eval", run_folder))


def _export(args: argparse.Namespace) -> int:
    """``unilab export``: the deterministic policy of a bundled-PPO or SB3 run as ONNX; prints its interface."""
    import tempfile

    if args.precision == "fp32" and (args.force or args.max_action_error is not None):
        return fail("export", "--force and --max-action-error check a reduced precision: add --precision fp16 or int8")
    if args.max_action_error is not None and not args.max_action_error >= 0:
        return fail("export", f"--max-action-error is a fraction of the action range >= 0, got {args.max_action_error}")
    with tempfile.TemporaryDirectory(prefix="unilab-export-") as work:  # the fp32 graph of a reduced precision
        return _export_in(args, Path(work))


def _export_in(args: argparse.Namespace, work: Path) -> int:
    from trainers.common.checkpoint import CheckpointError
    from trainers.common.onnx_export import describe_onnx
    from trainers.common.run_folder import out_file_problem
    from trainers.common.runs import RunError, find_run
    from trainers.ppo.config import ConfigError

    out = args.out if args.precision == "fp32" else work / "policy_fp32.onnx"
    try:
        run = find_run(args.checkpoint, "export")
        _check_run_task(run)
    except (RunError, CheckpointError, ValueError) as e:
        return fail("export", e)
    problem = out_file_problem(args.out) if args.out else out_file_problem(run.folder / "policy.onnx", "")
    if problem:  # a folder, a path under a file, a folder that cannot be written: one line, nothing written
        return fail("export", problem)
    try:
        path = LEARNERS[run.kind].load().export(run.path, out, opset=args.opset)
    except (RunError, CheckpointError, ConfigError, ValueError) as e:
        return fail("export", e)
    from trainers.common.deploy_export import attach_for_run
    from trainers.common.precision import PrecisionError, PrecisionReport, reduce_run_precision

    report = PrecisionReport("fp32", None, None)
    if args.precision != "fp32":  # convert, check against fp32 on recorded observations, then write
        final = Path(args.out) if args.out else run.folder / "policy.onnx"
        try:
            report = reduce_run_precision(path, final, run.folder, args.precision, args.max_action_error, args.force)
        except PrecisionError as e:
            return fail("export", e)
        path = final
    try:  # what a robot-side program needs, beside the policy and in its metadata
        spec_path = attach_for_run(path, run.folder, report.spec_section())
    except (ValueError, TypeError) as e:
        return fail("export", f"wrote {path} but not its deploy spec: {e}")
    print(describe_onnx(path).summary())
    if report.error is not None:
        print(report.summary())
    if spec_path is not None:
        print(f"deploy spec: {spec_path} (also in the ONNX metadata); run it in plain MuJoCo: "
              f"unilab play {path.parent}")
        from trainers.common.deploy_export import safety_line

        print(safety_line(spec_path))
    return 0


def _ship(args: argparse.Namespace) -> int:
    """``unilab ship RUN --out DIR``: a run as a policy folder (:mod:`trainers.common.ship`)."""
    from trainers.common.checkpoint import CheckpointError
    from trainers.common.lifecycle import claim_run_folder
    from trainers.common.run_folder import RunFolderError
    from trainers.common.runs import find_run
    from trainers.common.ship import ship
    from trainers.ppo.config import ConfigError

    if not Path(args.run).exists():
        return fail("ship", f"{args.run} does not exist: pass the run folder `unilab train --out` wrote")
    try:
        claim_run_folder(args.out, "ship", reads=args.run, overwrite=args.overwrite)
    except RunFolderError as e:
        return fail("ship", e)
    try:
        run = find_run(args.run, "ship")
        written = ship(run, LEARNERS[run.kind], args.out)
    except (CheckpointError, ConfigError, ValueError, OSError) as e:
        return fail("ship", e)
    for path in written:
        print(f"wrote {path} ({path.stat().st_size / 1e3:.0f} kB)")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run ``unilab`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    parser = build_parser()
    # key=value overrides may sit anywhere among the train flags
    args, extra = parser.parse_known_args(argv)
    takes_overrides = args.command in ("train", "adapt", "distill")
    bad = [e for e in extra if e.startswith("-") or "=" not in e or not takes_overrides]
    if bad:
        hint = " (config overrides look like key=value)" if takes_overrides else ""
        return fail(args.command, f"unrecognized arguments: {' '.join(bad)}{hint}; see `unilab {args.command} --help`")
    if takes_overrides:
        args.overrides = list(extra)
    code = {"train": _train, "eval": _eval, "export": _export, "ship": _ship, "tasks": _tasks, "bench": _bench,
            "play": _play, "adapt": _adapt, "robot": _robot, "distill": _distill, "motion": _motion}[args.command](args)
    if args.command == "train" and int(os.environ.get("WORLD_SIZE", "1")) > 1:
        from trainers.ppo.distributed import exit_finished_rank

        exit_finished_rank(code)
    return code



if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
