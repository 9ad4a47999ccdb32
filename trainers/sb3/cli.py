"""``unilab train --algo sb3-ppo|sb3-sac|sb3-td3 --task ...``: SB3 on a UniLab task.

``trainers/cli.py`` parses the command line and calls ``train_sb3(args)``. The run
directory ``args.out`` follows the bundled runner's layout::

    config.yaml                   resolved config (defaults <- --config <- overrides)
    progress.csv                  one row per SB3 log dump, keyed by env steps: episode/return,
                                  episode/length, reward/<term>, train/*, time/*
    tb/                           TensorBoard events (same scalars)
    checkpoint.zip                latest checkpoint, rewritten atomically every checkpoint_every
    checkpoint_vecnormalize.pkl   its VecNormalize statistics
    model.zip, model_vecnormalize.pkl   the final model and statistics (also after Ctrl-C)
    run.yaml                      the run kind (kind: sb3), what eval, export and --resume ask the registry about
    learning_curve.png            return and reward terms against env steps
    train.log                     the output once stdout/stderr closed (a dead tee); only then

``--resume <checkpoint.zip | run dir>`` continues a run up to ``--total-steps`` (from a run
dir: the newer of checkpoint.zip and model.zip).

The terminal shows a progress bar (env steps, steps per second, recent episode return);
``--no-progress`` prints periodic lines instead, and the config key ``verbose=1`` SB3's own
log tables. Ctrl-C saves the model and prints the command that continues the run.

Reload for evaluation::

    env = VecNormalize.load("out/model_vecnormalize.pkl", make_sb3_env(task, n))
    env.training, env.norm_reward = False, False
    model = PPO.load("out/model.zip", env=env)
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import torch
import yaml
from stable_baselines3 import PPO, SAC, TD3
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import CallbackList
from stable_baselines3.common.vec_env import VecEnv, VecNormalize

from trainers.common.lifecycle import learning_curve, start_line, write_run_files
from trainers.common.signals import StopRequest, stop_on_signals
from trainers.sb3.callbacks import (CheckpointCallback, DumpLogsCallback, ProgressCallback, RewardTermsCallback,
                                    StopCallback, latest_checkpoint, load_model, save_model, sb3_logger)
from trainers.sb3.config import ALGOS, ConfigError, SB3TrainConfig, load_config
from trainers.sb3.env import make_sb3_env
from trainers.sb3.noise import BatchedNormalActionNoise
from trainers.sb3.validate import check_run
from unilab_envs.threads import torch_thread_count

__all__ = ["build_env", "build_model", "train_from_args", "train_sb3"]

_ALGO_CLASSES: dict[str, type[BaseAlgorithm]] = {"sb3-ppo": PPO, "sb3-sac": SAC, "sb3-td3": TD3}


def train_from_args(args: argparse.Namespace) -> int:
    """``unilab train --algo sb3-*`` (or ``--resume`` of an SB3 run) from the parsed arguments; the exit status.

    Defaults: the task :data:`~trainers.ppo.config.DEFAULT_TASK`, 16 envs, 1M steps, ``--out
    runs/<task>_<algo>``; a ``--resume``d run's own ``config.yaml`` supplies what is not given. The run
    folder is claimed (an ``--overwrite`` moves the old run aside only once every setting is checked) and
    the output falls back to ``<out>/train.log`` as for every learner (:mod:`trainers.common.lifecycle`)."""
    import os

    from trainers.cli_checks import UsageError, check_device, check_task, fail
    from trainers.common.lifecycle import claim_run_folder, run_in_folder
    from trainers.common.run_folder import out_folder_problem
    from trainers.ppo.config import DEFAULT_TASK

    _from_resumed_run(args)
    if int(os.environ.get("WORLD_SIZE", "1") or 1) > 1:
        return fail("train", f"--algo {args.algo} is single-process; under torchrun use the bundled PPO (--algo ppo)")
    if args.init_from:
        return fail("train", f"--init-from starts the bundled PPO from a PPO run; --algo {args.algo} has no such option")
    args.task = args.task or DEFAULT_TASK
    try:
        check_task(args.task)
        check_device(args.device or "auto")
    except UsageError as e:
        return fail("train", e)
    args.num_envs = args.num_envs or 16
    args.total_steps = args.total_steps or 1_000_000
    args.out = args.out or str(Path("runs") / f"{args.task.replace('/', '_')}_{args.algo}")
    if args.overwrite:  # moved aside once every setting is checked, right before the run folder is made
        problem = out_folder_problem(args.out)  # no folder can be made there (a file): refused now all the same
        if problem:
            return fail("train", problem)
        args.before_first_write = lambda: claim_run_folder(args.out, resume=args.resume, overwrite=True)
    return run_in_folder(args.out, lambda: _run(args), claim=not (args.overwrite or args.print_config),
                         resume=args.resume)


def _run(args: argparse.Namespace) -> int:
    """The SB3 run of the checked ``args``; the exit status."""
    from trainers.cli_checks import fail
    from trainers.common.run_folder import RunFolderError
    from trainers.common.signals import exit_status

    try:
        path = train_sb3(args)  # checks every setting before it creates the run folder
    except (ConfigError, RunFolderError) as e:
        return fail("train", e)
    except KeyboardInterrupt:  # during setup; once training runs, Ctrl-C stops it and saves (train_sb3)
        print("unilab train: interrupted before the first env step; nothing was saved", file=sys.stderr)
        return 130
    print(f"model: {path}")
    return exit_status(getattr(args, "stop_signal", None)) if getattr(args, "interrupted", False) else 0


def _from_resumed_run(args: argparse.Namespace) -> None:
    """``--resume RUN`` of an SB3 run: the algo, task, envs and steps its ``config.yaml`` names, where not given."""
    folder = Path(args.resume) if args.resume else None
    if folder is not None and folder.is_file():
        folder = folder.parent
    saved: dict = {}
    if folder is not None and (folder / "config.yaml").is_file():
        saved = yaml.safe_load((folder / "config.yaml").read_text()) or {}
    args.algo = args.algo or saved.get("algo")
    args.task = args.task or saved.get("task")
    args.num_envs = args.num_envs or saved.get("num_envs")
    args.total_steps = args.total_steps or saved.get("total_steps")


def build_env(task: str, num_envs: int, cfg: SB3TrainConfig, seed: int | None) -> VecEnv:
    """The run's SB3 env: ``trainers.common.envs.make_vec_env`` (``cfg.sim2real`` included) -> adapter -> VecNormalize."""
    normalize = {"norm_obs": cfg.normalize_obs, "norm_reward": cfg.normalize_reward, "clip_obs": cfg.clip_obs,
                 "gamma": cfg.algo_kwargs.get("gamma", 0.99)}
    use_norm = cfg.normalize_obs or cfg.normalize_reward
    return make_sb3_env(task, num_envs, seed=seed, normalize=normalize if use_norm else False,
                        sim2real=cfg.sim2real, **cfg.env)


def build_model(algo: str, env: VecEnv, cfg: SB3TrainConfig, *, seed: int | None, device: str,
                tensorboard_log: str | None = None) -> BaseAlgorithm:
    if algo not in _ALGO_CLASSES:
        raise ConfigError(f"unknown SB3 algo {algo!r}; choose one of {ALGOS}")
    kwargs: dict[str, Any] = dict(cfg.algo_kwargs)
    if algo != "sb3-ppo" and cfg.action_noise:
        kwargs["action_noise"] = BatchedNormalActionNoise(env.num_envs, env.action_space.shape[0],
                                                          sigma=cfg.action_noise, seed=seed)
    return _ALGO_CLASSES[algo](cfg.policy, env, seed=seed, device=device, verbose=cfg.verbose,
                               tensorboard_log=tensorboard_log, **kwargs)


def _resume_paths(resume: str | Path) -> tuple[Path, Path]:
    """The checkpoint ``--resume`` names (for a run folder: the newer of checkpoint.zip and
    model.zip) and its VecNormalize statistics file."""
    path = Path(resume)
    if path.is_dir():
        path = latest_checkpoint(path) or path / "checkpoint.zip"
    if not path.exists():
        raise FileNotFoundError(f"--resume: no SB3 checkpoint at {path}")
    return path, path.with_name(path.stem + "_vecnormalize.pkl")


def train_sb3(args: argparse.Namespace) -> Path:
    """Train an SB3 agent on ``args.task``; returns the final model path.

    Reads ``args.algo, task, num_envs, total_steps, device, seed, out`` and, when
    present, ``config`` (YAML path), ``overrides`` (``key=value`` list), ``resume``
    (checkpoint zip or run directory), ``before_first_write`` (called once every setting is
    checked, before the run folder is made: ``unilab train --overwrite`` moves the old run aside
    there; what it raises ends the run), ``torch_threads``, ``no_progress`` (periodic
    lines instead of the progress bar; config ``verbose=1`` shows SB3's own log tables
    instead of either) and ``print_config`` (print the resolved config and return its path).

    Ctrl-C, SIGTERM or SIGHUP stops training after the env step in progress (a second Ctrl-C
    stops at once), saves the model, its VecNormalize statistics and the curve as at the end,
    prints one line on stderr naming them and the command that continues the run, and sets
    ``args.interrupted = True`` (False after a complete run) and ``args.stop_signal`` (the
    signal's number; ``unilab train`` exits with 128 + it).

    Every setting (config keys, ``algo_kwargs`` against the SB3 constructor, task id,
    ``--num-envs``, ``sim2real``, ``--resume``) is checked, and the env and model are
    built, before the run folder is created: a mistake raises :class:`ConfigError`
    (one line) and leaves no folder behind.
    """
    algo = args.algo
    if algo not in _ALGO_CLASSES:
        raise ConfigError(f"unknown SB3 algo {algo!r}; choose one of {ALGOS}")
    out = Path(args.out)
    num_envs, total_steps = int(args.num_envs), int(args.total_steps)
    cfg = load_config(algo, num_envs, getattr(args, "config", None), getattr(args, "overrides", None))
    resume = getattr(args, "resume", None)
    check_run(_ALGO_CLASSES[algo], algo, args.task, num_envs, total_steps, cfg, resume)
    seed = getattr(args, "seed", None)
    device = getattr(args, "device", None) or "auto"
    run_info = {"algo": algo, "task": args.task, "num_envs": num_envs, "total_steps": total_steps,
                "seed": seed, "device": device, **cfg.to_dict()}
    saved = json.loads(json.dumps(run_info, default=str))
    if getattr(args, "print_config", False):
        print(yaml.safe_dump(saved, sort_keys=False), end="")
        return out / "config.yaml"
    threads = torch_thread_count(getattr(args, "torch_threads", None))  # as the bundled PPO decides
    if threads:
        torch.set_num_threads(threads)

    try:
        env = build_env(args.task, num_envs, cfg, seed)
    except (TypeError, ValueError) as e:  # an unknown task keyword in `env`, a value out of range ...
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise ConfigError(f"cannot build {args.task} with env={cfg.env}: {first}") from None
    try:
        model, env = _load_or_build(algo, env, cfg, resume, seed=seed, device=device)
        before_first_write = getattr(args, "before_first_write", None)
        if before_first_write is not None:  # unilab train --overwrite: the old run is moved aside here
            before_first_write()
        write_run_files(out, "sb3", saved)
        print(_header(args, model, cfg, out, resume), flush=True)
        path, interrupted, args.stop_signal = _learn_and_save(model, out, args.task, algo, total_steps, cfg,
                                                              bar=not getattr(args, "no_progress", False))
    finally:
        env.close()
    args.interrupted = interrupted
    if interrupted:
        print(_stopped_message(args, out, model.num_timesteps), file=sys.stderr, flush=True)
    return path


def _load_or_build(algo: str, env: VecEnv, cfg: SB3TrainConfig, resume: str | None, *, seed: int | None,
                   device: str) -> tuple[BaseAlgorithm, VecEnv]:
    """The model to train: loaded from ``resume`` (with its VecNormalize statistics, which
    replace ``env``'s), else a new one. SB3 rejecting a value becomes a :class:`ConfigError`."""
    try:
        if not resume:
            return build_model(algo, env, cfg, seed=seed, device=device), env
        ckpt, stats = _resume_paths(resume)
        if stats.exists() and isinstance(env, VecNormalize):
            env = VecNormalize.load(str(stats), env.venv)
        model = load_model(_ALGO_CLASSES[algo], ckpt, env, device=device, verbose=cfg.verbose)
        print(f"[unilab] resumed {ckpt} at {model.num_timesteps} env steps")
        return model, env
    except (TypeError, ValueError, AssertionError) as e:  # SB3 rejects a value (n_steps=0, a bad net_arch ...)
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise ConfigError(f"{_ALGO_CLASSES[algo].__name__} rejects this config: {first}") from None


def _learn_and_save(model: BaseAlgorithm, out: Path, task: str, algo: str, total_steps: int, cfg: SB3TrainConfig,
                    bar: bool) -> tuple[Path, bool, int | None]:
    """Train up to ``total_steps``, then save the model and the learning curve.

    Progress shows as a bar (``bar``) or periodic lines, or, with ``cfg.verbose``, as SB3's own
    log tables. Ctrl-C or SIGTERM stops after the env step in progress (a second Ctrl-C at
    once); the model is saved either way. Returns the model's path, whether a signal
    stopped the run, and which (``None``: none, or a ``KeyboardInterrupt`` without one).
    """
    start = model.num_timesteps
    model.set_logger(sb3_logger(out, algo, stdout=cfg.verbose > 0, resume_step=start or None))
    every = cfg.checkpoint_every or max(total_steps // 10, model.n_envs)
    request = StopRequest(lambda: "this env step")
    progress = None if cfg.verbose else ProgressCallback(desc=task, bar=bar)
    callbacks = [RewardTermsCallback(), CheckpointCallback(out, every), StopCallback(request),
                 *([progress] if progress else [])]
    log_interval: int | None = cfg.log_interval
    if algo != "sb3-ppo":
        callbacks.append(DumpLogsCallback(cfg.log_every or max(1000, 10 * model.n_envs)))
        log_interval = None
    interrupted = False
    with stop_on_signals(request):
        try:
            model.learn(total_timesteps=max(total_steps - start, 0), callback=CallbackList(callbacks),
                        log_interval=log_interval, reset_num_timesteps=not start)
        except KeyboardInterrupt:  # the second Ctrl-C: stop now
            interrupted = True
        finally:
            if progress is not None:
                progress.close()
        request.saving = True  # from here on a signal waits for the files to be written
        path = save_model(model, out, "model")
        model.logger.close()
        learning_curve(out, f"{algo} on {task}")
    return path, interrupted or request.requested, request.signum


def _header(args: argparse.Namespace, model: BaseAlgorithm, cfg: SB3TrainConfig, out: Path, resume) -> str:
    """The line a run starts with (:func:`~trainers.common.lifecycle.start_line`): algo, task, device, envs,
    threads, profile, output folder, where it starts."""
    start = f"resuming {resume} at {model.num_timesteps} env steps" if resume else "a new run"
    return start_line(args.task, args.algo, model.device, args.num_envs, out, start, args.total_steps, cfg.sim2real)


def _stopped_message(args: argparse.Namespace, out: Path, steps: int) -> str:
    """One line: where the interrupted run was saved, and the command that continues it."""
    saved = f"{out / 'model.zip'}" + (" and its VecNormalize statistics (model_vecnormalize.pkl)"
                                      if (out / "model_vecnormalize.pkl").exists() else "")
    argv = ["unilab", "train", "--algo", args.algo, "--task", args.task, "--num-envs", str(args.num_envs),
            "--total-steps", str(args.total_steps), "--out", str(out), "--resume", str(out)]
    if getattr(args, "config", None):
        argv += ["--config", str(args.config)]
    if getattr(args, "device", None) not in (None, "auto"):
        argv += ["--device", str(args.device)]
    argv += list(getattr(args, "overrides", None) or [])
    return f"[unilab] stopped at {steps} env steps; saved {saved}. Continue with: {shlex.join(argv)}"


def main(argv: list[str] | None = None) -> None:
    """Standalone entry point (``python -m trainers.sb3.cli``), same flags as ``unilab train``."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--algo", choices=ALGOS, default="sb3-ppo")
    p.add_argument("--task", required=True)
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--total-steps", type=int, default=1_000_000)
    p.add_argument("--device", default="auto")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/sb3")
    p.add_argument("--config", default=None)
    p.add_argument("overrides", nargs="*", help="key=value config overrides")
    try:
        train_sb3(p.parse_args(argv))
    except ConfigError as e:
        raise SystemExit(f"{p.prog}: {e}") from None


if __name__ == "__main__":
    main()
