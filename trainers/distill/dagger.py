"""Teacher-student distillation with DAgger: a student on the task's policy observation learns the teacher's actions.

One iteration (``T = algo.num_steps`` control steps of ``num_envs`` envs)::

    for each step: teacher_obs = [obs | privileged_obs | clean obs][:, teacher_index]     (trainers.distill.observations)
                   a_T = teacher(teacher_obs); a_S = student(normalize(obs))
                   execute a_T with probability beta (per env and step), a_S otherwise
                   store (obs, a_T)
    update the student's observation normalizer (images keep their fixed scale)
    fit the student's actor: num_epochs x num_minibatches steps of || student(normalize(obs)) - a_T ||^2

A recurrent student (``policy.recurrent: gru``) keeps each env's state through the rollouts, zeroed where an
episode starts, and is fitted by truncated backpropagation through time over the rollout: its minibatches
are whole env sequences (:mod:`trainers.distill.memory`).

The student is the bundled PPO's learner (:func:`trainers.ppo.runner.build_learner`: actor with
the image encoder, critic, normalizers, log-std) and the run folder is a bundled-PPO run, so
``unilab eval / export / play / ship`` read it and ``unilab train --init-from`` fine-tunes it with
PPO (its critic starts untrained). Run folder::

    config.yaml        the student's run config (a TrainConfig: `unilab train --config` takes it)
    distill.yaml       the distillation's own settings (distill.*), the teacher and its task
    checkpoint.pt      bundled-PPO format, written atomically (also every log.save_interval iterations)
    progress.csv, tb/  per iteration: distill/loss, distill/action_error (RMS, student vs teacher on the
                       rollout, before the fit), distill/beta, episode/return, episode/length, env/terrain_level
    run.yaml           the run kind (``kind: distill``: eval, export and ship read it as a bundled-PPO run)
    learning_curve.png written at the end (also after Ctrl-C)

The run's plumbing (files, start line, SIGINT / SIGTERM / SIGHUP: finish the iteration and save,
the progress bar, checkpoint cadence, the curve) is every learner's: :mod:`trainers.common.lifecycle`.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from unilab_envs.threads import torch_thread_count

from ..common.checkpoint import save_checkpoint
from ..common.device import resolve_device
from ..common.envs import autoreset_mode
from ..common.lifecycle import Cadence, learning_curve, start_line, stopped_line, write_run_files
from ..common.logging import RunLogger
from ..common.normalizers import EmpiricalNormalizer
from ..common.progress import Progress
from ..common.signals import StopRequest, route_stop_signals
from ..ppo.checkpoint_format import CKPT_FORMAT, CKPT_VERSION
from ..ppo.collector import critic_input
from ..ppo.config import ConfigError, TrainConfig, to_dict
from ..ppo.envs import env_dims, make_vec_env
from ..ppo.image_encoder import with_image_groups
from ..ppo.runner import build_learner
from .config import DistillConfig
from .memory import StudentMemory
from .observations import check_student_observation, clean_observation_tap, env_groups, teacher_index
from .teacher import Teacher


@dataclasses.dataclass
class DistillResult:
    out_dir: Path
    checkpoint: Path
    iterations: int
    env_steps: int
    wall_time: float
    interrupted: bool
    stats: dict
    exit_status: int = 0  # 0, or 128 + the signal that stopped it (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP)


class Distiller:
    """The student, the teacher, the env and the loop (module docstring). ``env``: a vector env of
    ``cfg.task`` to use instead of building one (closed by the caller)."""

    def __init__(self, cfg: TrainConfig, dcfg: DistillConfig, env: gym.vector.VectorEnv | None = None):
        threads = torch_thread_count(cfg.torch_threads)
        if threads:
            torch.set_num_threads(threads)
        self.device = resolve_device(cfg.device)
        self.teacher = Teacher(dcfg.teacher, self.device)
        self.owns_env = env is None
        self.env = env if env is not None else make_vec_env(
            cfg.task, cfg.num_envs, cfg.env_kwargs, cfg.vectorization_mode, sim2real=cfg.profile,
            obs_history=cfg.obs_history)
        try:
            if self.env.num_envs != cfg.num_envs:
                raise ConfigError(f"the env has {self.env.num_envs} envs but num_envs is {cfg.num_envs}")
            check_student_observation(self.env, cfg.task, dcfg.shared_groups)
            self.dims = env_dims(self.env)
            policy, privileged = env_groups(self.env)
            self.privileged = self.dims.privileged is not None
            self.tap = clean_observation_tap(self.env)  # the observation before the sim-to-real wrappers, or None
            width = self.dims.privileged if self.privileged else self.dims.obs  # of [obs | privileged_obs], the critic's input
            clean_at = width if self.tap is not None else None
            self.index = torch.as_tensor(teacher_index(self.teacher.groups, policy, privileged, self.dims.obs, cfg.task,
                                                       clean_at), device=self.device)
            self.cfg = cfg = with_image_groups(cfg, self.env)
        except Exception:
            self.close()
            raise
        self.dcfg = dcfg
        self.algo = build_learner(self.dims, cfg, self.device)
        if cfg.init_from:  # a student that has learned before (a new teacher, a new profile): its actor and normalizer
            from ..ppo.init_from import initialize_from

            try:
                summary = initialize_from(self.algo, self.dims, cfg.task, cfg.init_from, cfg.init_fresh_normalizer,
                                          history_sources=getattr(self.env, "history_sources", None))
            except Exception:
                self.close()
                raise
            print(f"[unilab] student {summary}", file=sys.stderr, flush=True)
        self.actor = self.algo.policy.actor
        self.optimizer = torch.optim.Adam(self.actor.parameters(), lr=dcfg.learning_rate)
        self.generator = torch.Generator(device=self.device).manual_seed(cfg.seed)
        self.rng = np.random.default_rng(cfg.seed)
        self.out_dir = cfg.out_dir
        self.iteration = self.env_steps = 0
        n, t = cfg.num_envs, cfg.algo.num_steps
        self.obs_buf = torch.zeros(t, n, self.dims.obs, device=self.device)
        self.target_buf = torch.zeros(t, n, self.dims.act, device=self.device)
        self.returns, self.lengths = np.zeros(n), np.zeros(n, dtype=np.int64)
        same_step = autoreset_mode(self.env) == gym.vector.AutoresetMode.SAME_STEP
        self.memory = (StudentMemory(self.algo.policy, n, t, self.device, same_step)
                       if self.algo.policy.hidden_size else None)  # a recurrent student's states, else None

    # ------------------------------------------------------------------ acting

    def _tensor(self, x) -> torch.Tensor:
        return torch.as_tensor(np.asarray(x, dtype=np.float32), device=self.device)

    @torch.no_grad()
    def student(self, obs: torch.Tensor) -> torch.Tensor:
        """The feed-forward student's action means for raw observations ``[B, O]``."""
        return self.actor(self.algo.obs_normalizer(obs))

    def act(self, t: int, obs: torch.Tensor) -> torch.Tensor:
        """The student's means at rollout step ``t`` (a recurrent student steps each env's state)."""
        if self.memory is None:
            return self.student(obs)
        return self.memory.step(t, self.algo.obs_normalizer(obs))

    def rollout(self, obs, info, beta: float) -> tuple[np.ndarray, dict, dict]:
        """``algo.num_steps`` DAgger steps from ``(obs, info)``; fills the buffers, returns the last
        ``(obs, info)`` and the rollout's statistics."""
        finished_returns, finished_lengths, levels = [], [], []
        obs_moments = crit_moments = None
        for t in range(self.cfg.algo.num_steps):
            crit_np = critic_input(obs, info["privileged_obs"]) if self.privileged else np.asarray(obs, np.float32)
            crit = self._tensor(crit_np)
            obs_t = crit[:, :self.dims.obs]
            source = crit if self.tap is None else torch.cat([crit, self._tensor(self.tap.obs)], dim=1)
            target = self.teacher(source[:, self.index])
            act = self.act(t, obs_t)
            follow = torch.as_tensor(self.rng.random(obs_t.shape[0]) < beta, device=self.device)
            executed = torch.where(follow[:, None], target, act)
            self.obs_buf[t].copy_(obs_t)
            self.target_buf[t].copy_(target)
            m = EmpiricalNormalizer.moments(obs_t)
            obs_moments = m if obs_moments is None else obs_moments + m
            if self.privileged:
                m = EmpiricalNormalizer.moments(crit)
                crit_moments = m if crit_moments is None else crit_moments + m
            obs, reward, terminated, truncated, info = self.env.step(executed.cpu().numpy())
            self.returns += reward
            self.lengths += 1
            if self.memory is not None:
                self.memory.episodes_ended(terminated, truncated)
            done = np.flatnonzero(np.logical_or(terminated, truncated))
            finished_returns += self.returns[done].tolist()
            finished_lengths += self.lengths[done].tolist()
            self.returns[done], self.lengths[done] = 0.0, 0
            if "terrain_level" in info:
                levels.append(float(np.mean(info["terrain_level"])))
        self.algo.update_normalizers(obs_moments, crit_moments)
        stats = {"distill/beta": beta}
        if finished_returns:
            stats.update({"episode/return": float(np.mean(finished_returns)),
                          "episode/length": float(np.mean(finished_lengths))})
        if levels:
            stats["env/terrain_level"] = float(np.mean(levels))
        return obs, info, stats

    # ------------------------------------------------------------------ fitting

    def fit(self) -> dict:
        """Fit the actor to the rollout's teacher actions (mean squared error); the loss and the RMS
        action error before the fit. The minibatches draw (step, env) rows, or for a recurrent student
        whole env sequences."""
        T, N = self.obs_buf.shape[:2]
        obs = self.algo.obs_normalizer(self.obs_buf.reshape(T * N, -1))
        if self.memory is None:
            target, units = self.target_buf.reshape(T * N, -1), T * N

            def error_of(rows):
                return self.actor(obs[rows]) - target[rows]
        else:
            obs, units = obs.reshape(T, N, -1), N

            def error_of(rows):
                return self.memory.means(obs, rows) - self.target_buf[:, rows]
        with torch.no_grad():
            error = float(error_of(slice(None)).square().mean().sqrt())  # every row (a view, not a copy)
        dcfg = self.dcfg
        batches = min(dcfg.num_minibatches, units)
        size = units // batches
        total, steps = 0.0, 0
        for _ in range(dcfg.num_epochs):
            order = torch.randperm(units, generator=self.generator, device=self.device)
            for k in range(0, size * batches, size):
                loss = error_of(order[k:k + size]).square().mean()
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(self.actor.parameters(), dcfg.max_grad_norm)
                self.optimizer.step()
                total, steps = total + float(loss.detach()), steps + 1
        return {"distill/loss": total / steps, "distill/action_error": error}

    # ------------------------------------------------------------------ run

    def checkpoint_state(self, wall_time: float) -> dict:
        """A bundled-PPO checkpoint (``trainers.ppo.runner``'s keys) plus the distillation's own ``distill``."""
        return {"config": to_dict(self.cfg), "dims": dataclasses.asdict(self.dims), "algo": self.algo.state_dict(),
                "iteration": self.iteration, "env_steps": self.env_steps, "wall_time": wall_time,
                "rng": {"generator": self.generator.get_state()}, "env_state": None, "collector": None,
                "reward_norm": None, "episodes": None, "stop": None,
                "distill": {"config": to_dict(self.dcfg), "teacher_task": self.teacher.task,
                            "optimizer": self.optimizer.state_dict()}}

    def save(self, wall_time: float) -> Path:
        return save_checkpoint(self.checkpoint_state(wall_time), self.out_dir / "checkpoint.pt", CKPT_FORMAT,
                               CKPT_VERSION)

    def learn(self) -> DistillResult:
        """Distill for ``cfg.num_iterations`` iterations; a stop signal finishes the iteration and saves."""
        cfg = self.cfg
        write_run_files(self.out_dir, "distill", to_dict(cfg), distill={
            **to_dict(self.dcfg), "teacher_task": self.teacher.task, "teacher_groups": [g for g, _ in self.teacher.groups]})
        logger = RunLogger(self.out_dir, cfg.log.csv, cfg.log.tensorboard)
        print(start_line(cfg.task, "distill", self.device, cfg.num_envs, self.out_dir,
                         f"distilling {self.teacher.run} ({self.teacher.task})", cfg.total_steps, cfg.sim2real), flush=True)
        obs, info = self.env.reset(seed=cfg.seed)
        started, stats, interrupted = time.perf_counter(), {}, False
        request = StopRequest(lambda: f"iteration {self.iteration + 1}")
        progress = Progress(cfg.task, cfg.num_iterations * cfg.steps_per_iteration, bar=cfg.log.progress)
        saves = Cadence(cfg.log.save_interval)
        restore = route_stop_signals(request.handle)
        try:
            try:
                while self.iteration < cfg.num_iterations and not request.requested:
                    beta = self.dcfg.beta_at(self.iteration)
                    obs, info, stats = self.rollout(obs, info, beta)
                    stats.update(self.fit())
                    self.iteration += 1
                    self.env_steps += cfg.steps_per_iteration
                    stats["perf/wall_s"] = time.perf_counter() - started
                    logger.log(self.env_steps, self.iteration, stats)
                    progress.advance(cfg.steps_per_iteration, lambda: _postfix(stats), force=True)
                    if saves.due(self.iteration):
                        self.save(time.perf_counter() - started)
                        saves.done(self.iteration)
                interrupted = request.requested
            except KeyboardInterrupt:
                interrupted = True
            finally:
                progress.close()
                logger.close()
            request.saving = True  # a signal now waits for the checkpoint to be written
            wall = time.perf_counter() - started
            path = self.save(wall)
        finally:
            restore()
        if interrupted:
            out = self.out_dir
            go_on = (f"Go on distilling with: unilab distill --teacher {self.teacher.run} --init-from {out} --out NEW "
                     "(from the student's weights and normalizer; a distillation has no exact resume), or fine-tune "
                     f"it with PPO: unilab train --config {out / 'config.yaml'} --init-from {out} --out NEW")
            print(stopped_line(out, f"iteration {self.iteration} ({self.env_steps} steps)", path, go_on),
                  file=sys.stderr, flush=True)
        learning_curve(self.out_dir, f"{cfg.task} (distilled from {self.teacher.task})", cfg.log.plot and cfg.log.csv)
        return DistillResult(self.out_dir, path, self.iteration, self.env_steps, wall, interrupted, stats,
                             request.exit_status(interrupted))

    def close(self) -> None:
        if self.owns_env and getattr(self, "env", None) is not None:
            self.env.close()


def distill(cfg: TrainConfig, dcfg: DistillConfig, env: gym.vector.VectorEnv | None = None) -> DistillResult:
    """Distill ``dcfg.teacher`` into a student trained as ``cfg`` describes (module docstring)."""
    distiller = Distiller(cfg, dcfg, env)
    try:
        return distiller.learn()
    finally:
        distiller.close()


def _postfix(stats: dict) -> str:
    """The progress bar's postfix: the teacher's share, the action error, the loss, the return."""
    return (f"beta={stats['distill/beta']:.2f} error={stats['distill/action_error']:.4f} "
            f"loss={stats['distill/loss']:.5f} ret={stats.get('episode/return', float('nan')):.3g}")
