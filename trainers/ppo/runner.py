"""The training loop: collect -> update -> log -> checkpoint, with exact resume.

Run directory (``config.out``, default ``runs/<task>``)::

    config.yaml          the resolved config of this run
    checkpoint.pt        latest checkpoint (atomic), checkpoint_<iter>.pt if log.keep_every
    progress.csv         one row per iteration: returns, reward/<term>, losses, KL, lr, perf/*
    tb/                  TensorBoard events (same scalars)
    learning_curve.png   written at the end (also after Ctrl-C)
    train.log            ``unilab train``'s output once its stdout/stderr closed (a dead tee); only then

    run.yaml             the run kind (``kind: ppo``: what eval, export, ship and --resume ask the registry about)

The run's plumbing (files, start line, stop signals, progress bar, checkpoint cadence, the
curve) is every learner's: :mod:`trainers.common.lifecycle`. Ctrl-C (or SIGTERM, SIGHUP) asks
the loop to stop at the end of the current iteration; it then saves a checkpoint, writes the
curve and returns (a second Ctrl-C stops at once and saves the learner); ``unilab train``
exits with 128 + the signal's number.
A checkpoint holds the policy, normalizers, optimizer, lr, iteration, RNG state, the reward
normalizer, the finished-episode windows and count (``episodes``: what the ``episode/*``
stats and the ``stop:`` rule read), the stop rule's streak (``stop``) and, when the env
offers ``get_state()`` / ``set_state()`` (every UniLab env and sim-to-real wrapper stack
does: physics, task state and curricula such as the terrain levels, wrapper delay lines
and draws, RNG streams; see ``unilab_envs.core.state``), the env state and the
collector's carried observations and episode sums.

What ``resume`` guarantees: from a checkpoint saved at an iteration boundary by a
single-process run on such an env, the resumed run is the straight run, bit for bit, with
or without ``overlap``: the same parameters, optimizer, normalizers, env state, logged
statistics (all but the ``perf/*`` timings), and the same iteration at which a ``stop:``
rule ends it. Other envs (a
Gymnasium ``SyncVectorEnv``) and checkpoints saved mid-iteration (a second Ctrl-C) are
re-seeded on resume; the learner state, the episode windows (boundary saves) and the
stop streak are still restored exactly. Distributed runs restore the learner and the stop
streak; envs are re-seeded and episode windows start empty. Checkpoints from before
``episodes`` / ``stop`` were saved resume with empty windows and a zero streak. A streak
counted against another ``stop.success_rate`` (changed on resume) restarts.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import time
from pathlib import Path

import gymnasium as gym
import torch

from unilab_envs.threads import torch_thread_count

from ..common.checkpoint import CheckpointError, load_checkpoint, save_checkpoint, to_numpy, to_tensors
from ..common.denormals import denormals_flushed
from ..common.device import resolve_device
from ..common.evaluation import estimator_rmse_line
from ..common.lifecycle import Cadence, learning_curve, start_line, stopped_line, write_run_files
from ..common.logging import RunLogger
from ..common.normalizers import EmpiricalNormalizer
from ..common.progress import Progress
from ..common.signals import StopRequest, route_stop_signals
from ..common.stall import StallDetector
from .algorithm import PPO, linear_learning_rate
from .checkpoint_format import CKPT_FORMAT, CKPT_VERSION, check_compatible  # noqa: F401 (re-exported)
from .collector import Collector
from .config import TrainConfig, to_dict
from .early_stop import stop_callback
from .envs import env_dims, make_vec_env
from .estimator import truth_mirror, warmup_line, with_estimator
from .faults import TrainingFault, close_log, nonfinite_message, write_failure, write_failure_message
from .image_encoder import fix_image_columns, with_image_groups
from .models import ActorCritic
from .storage import RolloutStorage
from .warmup import critic_warmup_line, held_iterations

_REQUIRED = ("config", "dims", "algo", "iteration", "env_steps", "rng")


@dataclasses.dataclass
class TrainResult:
    out_dir: Path
    checkpoint: Path | None
    iterations: int
    env_steps: int
    wall_time: float
    interrupted: bool
    stats: dict
    learning_curve: Path | None = None
    stop_reason: str | None = None  # why training ended before total_steps (the config's stop: rule)
    stop_signal: int | None = None  # the signal that stopped an interrupted run (None: a second Ctrl-C, or none)


def build_learner(dims, cfg: TrainConfig, device: torch.device, make_algo=PPO, mirror=None, truth_mirror=None):
    """Policy, normalizers and PPO for the given env dims (initialized from ``cfg.seed``).

    ``make_algo``: the PPO class (or a factory with its signature), e.g. a data-parallel one.
    ``mirror``: the task's mirror map; with ``algo.symmetry_coef > 0`` the PPO gets the mirror loss,
    with ``policy.symmetric_actor`` the mirror-averaged mean (training passes :func:`task_mirror`, which
    refuses a task without a map). ``truth_mirror``: that mean's mirror of a state estimator's targets,
    read in the estimator's warm-up (:func:`~trainers.ppo.estimator.truth_mirror`).
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        policy = network_class(cfg.policy)(dims.obs, dims.privileged or dims.obs, dims.act, cfg.policy)
    policy.to(device)
    obs_norm = EmpiricalNormalizer(dims.obs, cfg.policy.obs_clip, enabled=cfg.policy.obs_normalization).to(device)
    critic_norm = (EmpiricalNormalizer(dims.privileged, cfg.policy.obs_clip, enabled=cfg.policy.obs_normalization)
                   .to(device) if dims.privileged else None)
    fix_image_columns(cfg.policy, obs_norm, critic_norm)  # images: a fixed scale, not running statistics
    symmetry = averaged_mean = None
    if mirror is not None:  # without a map (evaluation, export): neither, the deployed actor averages itself
        from .symmetry import MirrorAveragedMean, SymmetryLoss
        if cfg.algo.symmetry_coef > 0:
            symmetry = SymmetryLoss(mirror, cfg.algo.symmetry_coef, device)
        if cfg.policy.symmetric_actor:
            averaged_mean = MirrorAveragedMean(mirror, device, truth_mirror)
    return make_algo(policy, obs_norm, critic_norm, cfg.algo, device, symmetry=symmetry, averaged_mean=averaged_mean)


def network_class(cfg) -> type[ActorCritic]:
    """The actor-critic class of a ``policy`` config: :class:`ActorCritic`, the recurrent one (``policy.recurrent``)
    or the one whose actor has a state estimator (``policy.estimator``)."""
    if cfg.estimator is not None:
        from .estimator import EstimatorActorCritic
        return EstimatorActorCritic
    if cfg.recurrent is None:
        return ActorCritic
    from .recurrent import RecurrentActorCritic
    return RecurrentActorCritic


def task_mirror(env: gym.vector.VectorEnv, cfg: TrainConfig):
    """The env's task mirror map when ``algo.symmetry_coef > 0`` or ``policy.symmetric_actor`` (``None``
    otherwise); a :class:`~unilab_envs.config.ConfigError` names the task that has none."""
    if cfg.policy.symmetric_actor:
        return env_mirror(env, cfg.task, "policy.symmetric_actor", "set it to false")
    if cfg.algo.symmetry_coef <= 0:
        return None
    return env_mirror(env, cfg.task, "algo.symmetry_coef", "set it to 0")


def env_mirror(env: gym.vector.VectorEnv, task_id: str, option: str, fix: str):
    """The env's task mirror map, its ``obs_history`` columns included; a
    :class:`~unilab_envs.config.ConfigError` where the task has none, naming ``option`` and ``fix``."""
    task = getattr(env.unwrapped, "task", None)
    try:
        mirror = task.mirror
    except (AttributeError, ValueError) as e:
        from .config import ConfigError
        raise ConfigError(f"{option}: {task_id} has no left/right mirror map ({e}); {fix}") from None
    extend = getattr(env, "extend_mirror", None)  # an obs_history: its columns mirror as their groups do
    return mirror if extend is None else extend(mirror)


class Runner:
    """``dist``: a :class:`~trainers.ppo.distributed.DistContext` for data-parallel training (then
    ``cfg.num_envs`` is the total over ranks and ``env``, if given, holds this rank's share)."""

    def __init__(self, cfg: TrainConfig, env: gym.vector.VectorEnv | None = None, dist=None):
        self.dist = dist
        self.is_main = dist is None or dist.is_main
        if cfg.init_from:  # the policy's observation history goes with its weights
            from .init_from import inherit_history
            cfg = inherit_history(cfg, self.is_main)
        self.cfg = cfg
        self.env_offset, self.num_envs = dist.env_share(cfg.num_envs) if dist else (0, cfg.num_envs)
        if dist is not None:  # this host's cores divided among its ranks (env pools read the variable)
            os.environ["UNILAB_NUM_THREADS"] = str(dist.num_threads())
        threads = torch_thread_count(cfg.torch_threads)  # the trainer decides; envs never touch it
        if threads:
            torch.set_num_threads(threads)
        self.device = dist.device if dist is not None else resolve_device(cfg.device)
        self.owns_env = env is None
        self.envs = self._make_envs() if env is None else [
            self._with_history(e) for e in (list(env) if isinstance(env, (list, tuple)) else [env])]
        if cfg.overlap and len(self.envs) != 2:
            raise ValueError(f"overlap=true collects from two envs (two halves); got {len(self.envs)}: "
                             "pass no env (the runner builds the halves) or a list of two")
        got = sum(e.num_envs for e in self.envs)
        if got != self.num_envs:
            raise ValueError(f"env has {got} envs but config.num_envs is {cfg.num_envs}"
                             + (f" ({self.num_envs} on rank {dist.rank})" if dist else ""))
        self.dims = env_dims(self.envs[0])
        self.cfg = cfg = with_image_groups(cfg, self.envs[0])  # where the CNN's images are (none: cfg as is)
        self.cfg = cfg = with_estimator(cfg, self.envs[0])  # where the estimator's targets are (none: cfg as is)
        if any(env_dims(e) != self.dims for e in self.envs[1:]):
            raise ValueError("the envs of one run must have the same observation, action and privileged sizes")
        mirror = task_mirror(self.envs[0], cfg)
        if cfg.policy.mirror_average and mirror is None:  # refused now, not when the run is evaluated
            env_mirror(self.envs[0], cfg.task, "policy.mirror_average", "set it to false")
        est = cfg.policy.estimator
        truth = None  # the warm-up of a mirror-averaged actor mirrors the true targets too
        if est is not None and est.warmup_iterations and cfg.policy.symmetric_actor:
            truth = truth_mirror(self.envs[0], est.targets, cfg.task)
        if dist is None:
            self.algo = build_learner(self.dims, cfg, self.device, mirror=mirror, truth_mirror=truth)
        else:
            from .distributed import DistributedPPO, rank_generator_seed
            torch.set_num_threads(cfg.torch_threads or dist.num_threads())
            if self.num_envs * cfg.algo.num_steps < cfg.algo.num_minibatches:
                raise ValueError(f"rank {dist.rank}: {self.num_envs} envs x {cfg.algo.num_steps} steps is fewer "
                                 f"than algo.num_minibatches ({cfg.algo.num_minibatches})")
            eager = dataclasses.replace(cfg, algo=dataclasses.replace(cfg.algo, cuda_graph=False))
            self.algo = build_learner(self.dims, eager, self.device, functools.partial(
                DistributedPPO, weight=self.num_envs / cfg.num_envs), mirror=mirror, truth_mirror=truth)
            self.algo.broadcast_from_main()
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(cfg.seed if dist is None else rank_generator_seed(cfg.seed, dist.rank))
        self.storage = RolloutStorage(cfg.algo.num_steps, self.num_envs, self.dims.obs, self.dims.privileged,
                                      self.dims.act, self.device, hidden_size=self.algo.policy.hidden_size,
                                      target_size=len(self.algo.policy.target_columns))
        self.collector = Collector(self.envs, self.algo, self.device, self.generator,
                                   privileged=self.dims.privileged is not None, overlap=cfg.overlap)
        if dist is not None and self.collector.reward_norm is not None:  # one set of return statistics
            self.algo.share_reward_normalizer(self.collector.reward_norm)
        self.out_dir = cfg.out_dir
        self.iteration = 0
        self.env_steps = 0
        self.wall_time_before = 0.0
        self.stop_request = StopRequest(lambda: f"iteration {self.iteration + 1}")  # Ctrl-C, SIGTERM, SIGHUP
        self._agreed_stop = False  # distributed: a stop every rank has seen
        self._started = 0.0
        self.stopper = stop_callback(cfg)  # the config's stop: rule (None: off); its streak is checkpointed
        self.stall = StallDetector(cfg.log.stall_steps)  # says when success stays 0 and the return flat

    def _make_envs(self) -> list[gym.vector.VectorEnv]:
        """This process's env, or its two halves when ``cfg.overlap`` (rows keep their seeds)."""
        cfg, n = self.cfg, self.num_envs
        if cfg.overlap and n < 2:
            raise ValueError(f"overlap=true splits the envs in two halves: needs num_envs >= 2 per process, got {n}")
        sizes = [n - n // 2, n // 2] if cfg.overlap else [n]
        return [make_vec_env(cfg.task, k, cfg.env_kwargs, cfg.vectorization_mode, sim2real=cfg.profile,
                             obs_history=cfg.obs_history) for k in sizes]

    def _with_history(self, env: gym.vector.VectorEnv) -> gym.vector.VectorEnv:
        """A given env, wrapped in the config's ``obs_history`` unless it already is."""
        from ..common.envs import with_history

        return with_history(env, self.cfg.obs_history)

    @property
    def env(self) -> gym.vector.VectorEnv:
        """The env (a run without ``overlap``); see :attr:`envs`."""
        if len(self.envs) != 1:
            raise AttributeError("this run steps two env halves (overlap=true): use runner.envs")
        return self.envs[0]

    # ------------------------------------------------------------------ checkpoints

    def checkpoint_state(self, at_boundary: bool = True) -> dict:
        env_state = None  # distributed: each rank's env differs; resumed envs are re-seeded
        if at_boundary and self.dist is None and all(hasattr(e, "get_state") for e in self.envs):
            states = [to_tensors(e.get_state()) for e in self.envs]
            env_state = states[0] if len(states) == 1 else states  # one env: a plain state, as always
        return {
            "config": to_dict(self.cfg),
            "dims": dataclasses.asdict(self.dims),
            "algo": self.algo.state_dict(),
            "iteration": self.iteration,
            "env_steps": self.env_steps,
            "wall_time": self.wall_time_before + (time.perf_counter() - self._started if self._started else 0.0),
            "rng": {"generator": self.generator.get_state()},
            "env_state": env_state,
            "collector": self.collector.state_dict() if env_state is not None else None,
            "reward_norm": None if self.collector.reward_norm is None else self.collector.reward_norm.state_dict(),
            # what the stop: rule and the episode/* stats read; not saved by distributed runs (each rank has
            # its own) nor mid-iteration (those episodes come from a rollout the resumed run collects again)
            "episodes": self.collector.episodes.state_dict() if at_boundary and self.dist is None else None,
            "stop": None if self.stopper is None else self.stopper.state_dict(),
        }

    def save(self, path: Path | None = None, at_boundary: bool = True) -> Path:
        path = path or self.out_dir / "checkpoint.pt"
        if not self.is_main:  # rank 0 alone writes
            return path
        state = self.checkpoint_state(at_boundary)
        save_checkpoint(state, path, CKPT_FORMAT, CKPT_VERSION)
        k = self.cfg.log.keep_every
        if k and at_boundary and self.iteration % k == 0 and path.name == "checkpoint.pt":
            save_checkpoint(state, path.with_name(f"checkpoint_{self.iteration}.pt"), CKPT_FORMAT, CKPT_VERSION)
        return path

    def load(self, path: str | Path) -> None:
        ckpt = self._read_checkpoint(path)
        if ckpt["config"].get("task") != self.cfg.task:
            raise CheckpointError(f"checkpoint {path} was trained on task {ckpt['config'].get('task')!r}, "
                                  f"this run is {self.cfg.task!r}: resume with --task {ckpt['config'].get('task')} "
                                  "(or without --task, from the checkpoint's own config)")
        from .init_from import history_mismatch
        mismatch = history_mismatch(ckpt["config"].get("obs_history"), to_dict(self.cfg).get("obs_history"),
                                    f"checkpoint {path}")
        if mismatch:
            raise CheckpointError(f"{mismatch} (resume without --config/--task to use the checkpoint's own config)")
        check_compatible(ckpt, self.dims, path)
        slim = bool(ckpt.get("slim")) or "optimizer" not in ckpt["algo"]
        if slim and self.is_main:
            print(f"[unilab] resume: {path} is a slim (shipped) checkpoint: it has no optimizer state (Adam's "
                  "moments restart), no env state (envs are re-seeded) and no reward-normalization statistics, so "
                  "this is not an exact continuation; the counters, weights, observation normalizers and learning "
                  "rate go on", file=sys.stderr, flush=True)
        try:
            if slim:
                self.algo.load_weights(ckpt["algo"])
            else:
                self.algo.load_state_dict(ckpt["algo"])
        except (RuntimeError, KeyError, ValueError) as e:
            raise CheckpointError(f"checkpoint {path} does not fit this run's networks "
                                  f"(policy.* config changed?): {str(e).splitlines()[0]}") from None
        self.iteration = int(ckpt["iteration"])
        self.env_steps = int(ckpt["env_steps"])
        if self.is_main:
            notice = stretched_schedule_notice(self.cfg, ckpt["config"].get("total_steps"), self.iteration)
            if notice:
                print(f"[unilab] resume: {notice}", file=sys.stderr, flush=True)
        self.wall_time_before = float(ckpt.get("wall_time", 0.0))
        self.generator.set_state(ckpt["rng"]["generator"].cpu())
        if self.dist is not None and not self.is_main:  # rank 0 continues the saved stream; the others their own
            from .distributed import rank_generator_seed
            self.generator.manual_seed(rank_generator_seed(self.cfg.seed + 7919 * self.iteration, self.dist.rank))
        saved = ckpt.get("env_state")
        states = saved if isinstance(saved, list) else [saved]
        restore_envs = (self.dist is None and saved is not None and ckpt.get("collector")
                        and len(states) == len(self.envs) and all(hasattr(e, "set_state") for e in self.envs))
        if restore_envs:
            for e, state in zip(self.envs, states):
                try:
                    e.set_state(to_numpy(state))
                except (ValueError, KeyError) as error:  # StateError: another task, size or wrapper stack
                    raise CheckpointError(f"checkpoint {path}: its env state does not fit this run's env ({error}); "
                                          "to train that policy on in another env or profile, start a new run "
                                          "with --init-from") from None
            self.collector.load_state_dict(ckpt["collector"])
        else:
            if self.is_main and not slim:  # a slim checkpoint's message above has said so
                print("[unilab] resume: the env state is not in the checkpoint (the env has no get_state/set_state, "
                      "the run was stopped mid-iteration, training is distributed, or overlap changed); envs are "
                      "re-seeded, learner state restored exactly", file=sys.stderr)
            self.collector.reset(seed=self.cfg.seed + 7919 * self.iteration + self.env_offset)
        if self.collector.reward_norm is not None and ckpt.get("reward_norm") is not None:
            # re-seeded envs start new episodes: their running returns stay at zero
            self.collector.reward_norm.load_state_dict(ckpt["reward_norm"], returns=bool(restore_envs))
        # checkpoints from before these keys (or without a stop rule): the windows start empty, the streak at 0
        if self.dist is None and ckpt.get("episodes") is not None:
            self.collector.episodes.load_state_dict(ckpt["episodes"])
        if self.stopper is not None and ckpt.get("stop") is not None:
            self.stopper.load_state_dict(ckpt["stop"])

    def _read_checkpoint(self, path) -> dict:
        """The checkpoint; distributed: read by rank 0 and broadcast (other hosts need no copy)."""
        if self.dist is None:
            return load_checkpoint(path, CKPT_FORMAT, CKPT_VERSION, required=_REQUIRED, map_location=self.device)
        from .distributed import broadcast_object
        payload = None
        if self.is_main:
            try:
                payload = ("ok", load_checkpoint(path, CKPT_FORMAT, CKPT_VERSION, required=_REQUIRED))
            except CheckpointError as e:
                payload = ("error", str(e))
        kind, value = broadcast_object(payload)
        if kind == "error":
            raise CheckpointError(value)
        return value

    # ------------------------------------------------------------------ loop

    def request_stop(self) -> None:
        self.stop_request.request()

    @property
    def _stop(self) -> bool:
        return self.stop_request.requested

    @property
    def stop_signal(self) -> int | None:
        """The first stop signal received (the exit status names it), or ``None``."""
        return self.stop_request.signum

    def learn(self, resume: str | Path | None = None, callback=None) -> TrainResult:
        """Train to ``cfg.total_steps``, or until the config's ``stop:`` rule holds
        (:mod:`trainers.ppo.early_stop`). ``callback(runner, stats) -> bool`` runs after each
        iteration; returning True stops training (a checkpoint is saved as at the end).

        A learner that goes NaN/inf, or a checkpoint or log row that cannot be written (disk
        full), raises :class:`TrainingFault` naming the iteration; the last good checkpoint
        stays on disk (``docs/faults.md``)."""
        cfg = self.cfg
        self.out_dir.mkdir(parents=True, exist_ok=True)
        if resume is not None:
            self.load(resume)
        else:
            if cfg.init_from:
                from .init_from import initialize_from
                summary = initialize_from(self.algo, self.dims, cfg.task, cfg.init_from, cfg.init_fresh_normalizer,
                                          history_sources=getattr(self.envs[0], "history_sources", None),
                                          env=self.envs[0], estimator=cfg.policy.estimator,
                                          held=self._held)
                if self.dist is not None:
                    self.algo.broadcast_from_main()
                if self.is_main:
                    print(f"[unilab] {summary}", file=sys.stderr, flush=True)
            self.collector.reset(seed=cfg.seed + self.env_offset)
            self.algo.update_normalizers(*self.collector.initial_moments())
        if self.is_main:
            write_run_files(self.out_dir, "ppo", to_dict(cfg))
            logger = RunLogger(self.out_dir, cfg.log.csv, cfg.log.tensorboard,
                               resume_step=self.env_steps if resume is not None else None)
        else:
            logger = _NullLogger()
        total_its = cfg.num_iterations
        spi = cfg.steps_per_iteration
        if self.is_main:
            print(self.header(resume), flush=True)
        progress = (Progress(cfg.task, total_its * spi, self.env_steps, bar=cfg.log.progress)
                    if self.is_main else None)
        restore = route_stop_signals(self.stop_request.handle)
        denormals_before = denormals_flushed()
        torch.set_flush_denormal(True)  # see trainers.common.denormals
        self._started = time.perf_counter()
        saves = Cadence(cfg.log.save_interval, self.iteration, cfg.log.save_minutes)
        keeps = Cadence(cfg.log.keep_every, self.iteration) if cfg.log.keep_every else None
        stats: dict = {}
        stopper = self.stopper
        stop_reason = None
        interrupted = False
        ckpt_path: Path | None = None
        self._saved_at = None  # the iteration this process last wrote checkpoint.pt at (fault messages)
        try:
            first = True
            while self.iteration < total_its and not self._stopping():
                self._hold_actor(first)
                first = False
                t0 = time.perf_counter()
                stats = self.collector.collect(self.storage)
                t1 = time.perf_counter()
                stats.update(self.algo.update(self.storage, self.generator, progress=self.iteration / total_its))
                if self._warmup:  # 1 where the estimator warm-up held the actor
                    stats["estimator/warmup"] = float(self.algo.reads_truth)
                if self.cfg.algo.critic_warmup_iterations:  # 1 where a warm-up held the actor
                    stats["policy/held"] = float(self.algo.actor_held)
                t2 = time.perf_counter()
                self._check_learner(stats)  # a NaN/inf learner stops here, before it is logged or saved
                self.iteration += 1
                self.env_steps += spi
                stats.update({"perf/steps_per_s": spi / (t2 - t0), "perf/collect_steps_per_s": spi / (t1 - t0),
                              "perf/collect_s": t1 - t0, "perf/update_s": t2 - t1,
                              "perf/wall_s": self.wall_time_before + t2 - self._started})
                if self.dist is not None:  # every rank's stats; a stop any rank saw
                    from .distributed import gather_stats
                    stats, self._agreed_stop = gather_stats(stats, self._stop)
                self._log_or_stop(logger, stats)
                stalled = self.stall.observe(self.env_steps, stats.get("episode/return"), stats.get("episode/success"))
                if stalled and self.is_main:
                    print(stalled, flush=True)
                if progress is not None:
                    progress.advance(spi, functools.partial(_postfix, stats), force=True)
                if stopper is not None and self._agree(bool(stopper(self, stats))):
                    stop_reason = stopper.reason
                    break
                if callback is not None and self._agree(bool(callback(self, stats))):
                    stop_reason = "the callback asked to stop"
                    break
                due = saves.due(self.iteration) or keeps is not None and keeps.due(self.iteration)
                if due and self.iteration < total_its:
                    self._save_or_stop()
                    for cadence in (saves, keeps):
                        if cadence is not None:
                            cadence.done(self.iteration)
            self.stop_request.saving = True  # a signal now waits for the checkpoint to be written
            ckpt_path = self._save_or_stop()
            interrupted = self._stopping()
        except KeyboardInterrupt:
            interrupted = True
            self.stop_request.saving = True
            ckpt_path = self._save_or_stop(at_boundary=False)
        finally:
            restore()
            torch.set_flush_denormal(denormals_before)
            if progress is not None:
                progress.close()
            close_log(logger)
        estimated = estimator_rmse_line(stats) if self.is_main else None  # the last rollout's estimator error
        if estimated:
            print(estimated, flush=True)
        if interrupted and self.is_main:
            print(stopped_line(self.out_dir, f"iteration {self.iteration} ({self.env_steps} steps)", ckpt_path),
                  file=sys.stderr)
        curve = learning_curve(self.out_dir, cfg.task, self.is_main and cfg.log.plot and cfg.log.csv)
        return TrainResult(self.out_dir, ckpt_path, self.iteration, self.env_steps,
                           self.wall_time_before + time.perf_counter() - self._started, interrupted, stats, curve,
                           stop_reason, self.stop_signal if interrupted else None)

    def header(self, resume: str | Path | None = None) -> str:
        """The line a run starts with (:func:`~trainers.common.lifecycle.start_line`): task, device, envs,
        threads, profile, output folder, where it starts."""
        cfg = self.cfg
        start = (f"resuming {resume} at iteration {self.iteration}" if resume is not None
                 else f"from the weights of {cfg.init_from}" if cfg.init_from else "a new run")
        ranks = f" over {self.dist.world_size} ranks" if self.dist is not None else ""
        return start_line(cfg.task, "ppo", self.device, cfg.num_envs, self.out_dir, start, cfg.total_steps,
                          cfg.sim2real, ranks)

    @property
    def _warmup(self) -> int:
        """``policy.estimator.warmup_iterations`` (0 without an estimator)."""
        est = self.cfg.policy.estimator
        return 0 if est is None else est.warmup_iterations

    @property
    def _held(self) -> int:
        """How many first iterations hold the actor (:func:`~trainers.ppo.warmup.held_iterations`)."""
        return held_iterations(self.cfg.algo.critic_warmup_iterations, self._warmup)

    def _hold_actor(self, first: bool) -> None:
        """Hold the actor in a warm-up (:attr:`PPO.actor_held` for this iteration; :attr:`PPO.reads_truth` in the
        estimator's); say so when each starts (``first``: this process's first iteration) and when it ends."""
        self.algo.actor_held = self.iteration < self._held
        self.algo.reads_truth = self.iteration < self._warmup
        if not self.is_main:
            return
        lines = []
        if self._warmup and (first or self.iteration == self._warmup):
            lines.append(warmup_line(self.cfg.policy.estimator.targets, self.iteration, self._warmup,
                                     held=self.algo.actor_held))
        critic = self.cfg.algo.critic_warmup_iterations
        if critic and (first or self.iteration == critic):
            lines.append(critic_warmup_line(self.iteration, critic))
        for line in filter(None, lines):
            print(line, flush=True)

    def _stopping(self) -> bool:
        return self._stop if self.dist is None else self._agreed_stop

    def _check_learner(self, stats: dict) -> None:
        """:class:`TrainingFault` when this iteration's update left a loss, a parameter or a normalizer
        NaN/inf (distributed: on every rank when any rank's did); the state is neither logged nor saved."""
        bad = self.algo.nonfinite(stats)
        if self._agree(bool(bad)):
            raise TrainingFault(nonfinite_message(self.iteration + 1, bad or ["another rank's learner"],
                                                  self.out_dir, self._saved_at))

    def _log_or_stop(self, logger, stats: dict) -> None:
        """This iteration's row of ``progress.csv`` (and TensorBoard); a write that fails (disk full)
        becomes one :class:`TrainingFault`."""
        try:
            logger.log(self.env_steps, self.iteration, stats)
        except OSError as e:
            raise TrainingFault(write_failure_message(f"the progress.csv row of iteration {self.iteration}", e,
                                                      self.out_dir, self._saved_at)) from e

    def _save_or_stop(self, at_boundary: bool = True) -> Path:
        """:meth:`save`; a write that fails (disk full, permissions) becomes one :class:`TrainingFault`
        (the atomic write has left the previous checkpoint as it was)."""
        try:
            path = self.save(at_boundary=at_boundary)
        except (OSError, RuntimeError) as e:
            if not write_failure(e):
                raise
            raise TrainingFault(write_failure_message(f"the checkpoint of iteration {self.iteration}", e,
                                                      self.out_dir, self._saved_at)) from e
        self._saved_at = self.iteration
        return path

    def _agree(self, flag: bool) -> bool:
        """``flag`` on one process; distributed: True when any rank says so."""
        if self.dist is None:
            return flag
        from .distributed import any_rank
        return any_rank(flag)

    def close(self) -> None:
        self.collector.close()
        if self.owns_env:
            for e in self.envs:
                e.close()


class _NullLogger:
    """Ranks other than 0 log nothing."""

    def log(self, *args, **kwargs) -> None:
        pass

    def close(self) -> None:
        pass


def _postfix(s: dict) -> str:
    parts = [f"ret={s.get('episode/return', float('nan')):.3g}", f"len={s.get('episode/length', float('nan')):.0f}"]
    if "episode/success" in s:
        parts.append(f"succ={s['episode/success']:.0%}")
    if "env/terrain_level" in s:
        parts.append(f"level={s['env/terrain_level']:.2f}")
    if "env/push_level" in s:
        parts.append(f"push={s['env/push_level']:.2f}")
    if "env/profile_level" in s:
        parts.append(f"profile={s['env/profile_level']:.2f}")
    total = s.get("perf/collect_s", 0.0) + s.get("perf/update_s", 0.0)
    parts.append(f"sps={s.get('perf/steps_per_s', 0.0):.0f}")
    if total > 0:
        parts.append(f"upd={s.get('perf/update_s', 0.0) / total:.0%}")
    return " ".join(parts)


def stretched_schedule_notice(cfg: TrainConfig, saved_total_steps, iteration: int) -> str | None:
    """What a resume with another ``total_steps`` does to a linear learning-rate schedule
    (it falls to 0 at the run's *current* total, so the rest of the ramp stretches or shrinks
    and the rate steps there), or None when nothing changes."""
    if cfg.algo.schedule != "linear" or saved_total_steps in (None, cfg.total_steps):
        return None
    saved_its = dataclasses.replace(cfg, total_steps=int(saved_total_steps)).num_iterations
    before = linear_learning_rate(cfg.algo.learning_rate, iteration / saved_its)
    after = linear_learning_rate(cfg.algo.learning_rate, iteration / cfg.num_iterations)
    return (f"total_steps {int(saved_total_steps)} -> {cfg.total_steps}: the linear learning-rate schedule now "
            f"falls to 0 at the new total, so at iteration {iteration} the rate is {after:.3g} "
            f"(it would have been {before:.3g}); keep total_steps={int(saved_total_steps)} to finish the run "
            "as configured")


def train(config: TrainConfig | dict | str | Path, env: gym.vector.VectorEnv | None = None,
          resume: str | Path | None = None, callback=None, dist_timeout: float | None = None) -> TrainResult:
    """Train PPO from Python: ``trainers.ppo.train(load_config("UniLab/Go1Joystick-v0"))``.

    ``config``: a :class:`TrainConfig`, a dict of its fields, or a YAML path. ``env``: any
    Gymnasium ``VectorEnv`` (closed by the caller); by default one is made from ``config.task``.
    ``callback(runner, stats) -> bool``: called after every iteration, True stops early.

    Under ``torchrun`` (``WORLD_SIZE > 1``) this process joins the process group and trains
    data-parallel (:mod:`trainers.ppo.distributed`); ``dist_timeout`` (seconds) bounds every
    collective, so a dead rank makes the others raise instead of hang.
    """
    from .config import from_dict, load_config
    if isinstance(config, (str, Path)):
        config = load_config(config_file=config)
    elif isinstance(config, dict):
        config = from_dict(TrainConfig, config)
    from .distributed import barrier, setup, teardown
    dist = setup(config.device, dist_timeout)
    if dist is not None:  # a group torchrun restarted (--max-restarts) goes on from its last checkpoint
        from .distributed import restart_resume
        resume = restart_resume(dist, config.out_dir, resume)
    runner = Runner(config, env, dist)
    try:
        result = runner.learn(resume=resume, callback=callback)
        if dist is not None:
            barrier()  # rank 0's checkpoint is written when every rank returns
    finally:
        runner.close()
    if dist is not None and dist.owns_group:
        teardown()
    return result
