"""The off-policy training loop (``unilab train --algo sac|td3``): collect, store on the device, update.

Per batch env step: the actor acts on the whole batch (uniform random actions for the first
``algo.learning_starts`` env steps; the exploring draw correlated across steps under
``algo.exploration_correlation``: :mod:`trainers.offpolicy.exploration`), the env steps once, the step's arrays go to the
device-resident :class:`~trainers.offpolicy.replay.DeviceReplay` in one copy each (a done
row's ``next_obs`` is its *final* observation, from SAME_STEP's ``info["final_obs"]``), the
normalizers take the batch, and ``algo.updates_per_step`` gradient updates follow (``algo.raise_updates``'s
number from the first time the rolling training success reaches its threshold: logged as
``updates_per_step``, and kept across resume; with
``algo.symmetry: augment`` each sampled minibatch is followed by its mirror image:
:mod:`trainers.offpolicy.symmetry`). A sim-to-real profile's curricula move inside its
wrappers as the env steps; the levels the env reports (``info["profile_level"]``, ``push_level``,
``terrain_level``) are logged as ``env/<key>``, their mean at the last step. Every
``log.every_steps`` a row goes to ``progress.csv`` / TensorBoard; every
``log.checkpoint_every_steps`` and at the end (and on Ctrl-C, SIGTERM or SIGHUP, after the env step
in progress) ``checkpoint.pt`` is written atomically (``config.yaml`` and ``run.yaml`` when it starts:
the run's plumbing is every learner's, :mod:`trainers.common.lifecycle`), with the env's state, the RNGs, the learner, its optimizers and normalizers, and
the replay buffer when ``log.save_replay`` (then a resumed run continues bit for bit; without
it, resume says the buffer refills). At the end: ``learning_curve.png``.

The run stops before ``total_steps`` on the config's ``stop:`` rules: the rolling success of the
exploring training episodes (``stop.success_rate``), or the deterministic actor's success on
evaluation episodes of its own envs (``stop.eval``; :meth:`OffPolicyRunner.evaluate`, logged as
``eval/success``, ``eval/return``, ``eval/env_steps``).
"""

from __future__ import annotations

import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

from trainers.common.checkpoint import CheckpointError, load_checkpoint, save_checkpoint, to_numpy, to_tensors
from trainers.common.device import resolve_device
from trainers.common.envs import autoreset_mode, check_sim2real, final_rows, make_vec_env
from trainers.common.evaluation import EvalResult, run_episodes
from trainers.common.lifecycle import RECENT_EPISODES, Cadence, learning_curve, start_line, stopped_line, write_run_files
from trainers.common.logging import RunLogger
from trainers.common.plotting import CURRICULA
from trainers.common.progress import Progress
from trainers.common.runs import OFFPOLICY_FORMAT
from trainers.common.signals import StopRequest, route_stop_signals
from trainers.common.stall import StallDetector
from trainers.offpolicy.action_box import to_box
from trainers.offpolicy.config import OffPolicyConfig
from trainers.offpolicy.demonstrations import ScriptedDemonstrations
from trainers.offpolicy.exploration import CorrelatedNoise
from trainers.offpolicy.learner import OffPolicyLearner
from trainers.offpolicy.replay import DeviceReplay, replay_bytes
from trainers.offpolicy.symmetry import env_batch_mirror
from unilab_envs.config import from_dict, to_dict

CKPT_FORMAT, CKPT_VERSION = OFFPOLICY_FORMAT, 1
#: per-env curriculum levels an env reports in ``info`` (``terrain_level``, ``push_level``, ``profile_level``)
CURRICULUM_KEYS = tuple(column.removeprefix("env/") for column, _, _ in CURRICULA)


@dataclass
class OffPolicyResult:
    env_steps: int
    updates: int
    wall_time: float
    stats: dict
    checkpoint: Path
    learning_curve: Path | None
    interrupted: bool = False
    stop_reason: str | None = None
    stop_signal: int | None = None  # the signal that stopped an interrupted run (None: a second Ctrl-C, or none)


class OffPolicyRunner:
    """One run of ``cfg`` (see the module docstring); :meth:`train` runs it."""

    def __init__(self, cfg: OffPolicyConfig, resume: str | Path | None = None) -> None:
        self.cfg, self.out = cfg, cfg.out_dir
        self.device = resolve_device(cfg.device)
        if cfg.torch_threads:
            torch.set_num_threads(cfg.torch_threads)
        torch.manual_seed(cfg.seed)  # every draw (random warm-up actions, the policy's noise, sampling) is torch's
        self.profile = check_sim2real(cfg.sim2real, cfg.task)  # resolved once: the training and evaluation envs' profile
        self.env = make_vec_env(cfg.task, cfg.num_envs, cfg.env_kwargs, sim2real=self.profile)
        if autoreset_mode(self.env) != gym.vector.AutoresetMode.SAME_STEP:
            raise ValueError(f"the off-policy learner needs a SAME_STEP autoreset env (the final observation of an "
                             f"episode in info['final_obs']); {cfg.task} is {autoreset_mode(self.env).name}")
        space = self.env.single_action_space
        self.low, self.high = space.low.astype(np.float32), space.high.astype(np.float32)
        obs_dim, action_dim = int(np.prod(self.env.single_observation_space.shape)), int(np.prod(space.shape))
        privileged = getattr(self.env, "privileged_observation_space", None) if cfg.nets.asymmetric_critic else None
        self.critic_extra = int(np.prod(privileged.shape[-1:])) if privileged is not None else 0
        algo = cfg.algo
        self.replay = DeviceReplay(algo.buffer_size, cfg.num_envs, obs_dim, action_dim, self.device, self.critic_extra,
                                   algo.n_step, algo.gamma)
        self.learner = OffPolicyLearner(obs_dim, self.critic_extra, action_dim, algo, cfg.nets, self.device)
        rho = algo.exploration_correlation  # 0: white noise, a fresh draw inside the learner each step
        self.noise = CorrelatedNoise(cfg.num_envs, action_dim, rho, self.device) if rho > 0 else None
        try:  # None unless algo.symmetry: augment; refused here for a task without a mirror map
            self.mirror = env_batch_mirror(self.env, cfg.task, algo.symmetry, self.critic_extra, self.device)
            self.demos = (None if algo.demonstrations is None else
                          ScriptedDemonstrations(self.env, algo.demonstrations, cfg.task, self.low, self.high))
        except ValueError:
            self.env.close()
            raise
        self.dims = {"obs": obs_dim, "action": action_dim, "critic_extra": self.critic_extra,
                     "low": torch.from_numpy(self.low), "high": torch.from_numpy(self.high)}
        self.env_steps, self.iteration, self.update_credit = 0, 0, 0.0
        self.updates_raised_at: int | None = None  # env steps when algo.raise_updates switched (None: not yet)
        obs, info = self.env.reset(seed=cfg.seed)
        self.obs, self.priv = _own(obs), _own(info.get("privileged_obs") if self.critic_extra else None)
        self.ep_ret, self.ep_len = np.zeros(cfg.num_envs), np.zeros(cfg.num_envs, dtype=np.int64)
        self.finished: deque = deque(maxlen=RECENT_EPISODES)  # (return, length, success) of recent episodes
        # envs whose episode in progress is the actor's (algo.demonstrations: the script's are not counted)
        self.counted = np.ones(cfg.num_envs, dtype=bool)
        if self.demos is not None and self.demos.active(0):
            self.counted[: self.demos.envs] = False
        self.stall = StallDetector(cfg.log.stall_steps)  # says when success stays 0 and the return flat
        self.episodes_done = 0
        self.term_sums: dict[str, float] = {}  # reward/<term> and reward/total summed since the last log row
        self.term_steps = 0
        self.levels: dict[str, float] = {}  # env/<curriculum key> -> its mean over the envs at the last step
        self.refilling = False
        self.eval_env = None  # stop.eval's envs, made at its first evaluation
        self.eval_stats: dict[str, float] = {}  # the last evaluation (stop.eval): eval/success, eval/return, eval/env_steps
        if cfg.stop.eval is not None:
            self.eval_stats = {"eval/success": float("nan"), "eval/return": float("nan"), "eval/env_steps": 0}
        self.stop_request = StopRequest(lambda: "this env step")  # Ctrl-C, SIGTERM, SIGHUP
        self.resumed = resume
        if resume is not None:
            self.load(resume)

    # --- one batch env step ----------------------------------------------------------------------
    def collect(self) -> None:
        cfg = self.cfg
        if self.env_steps < cfg.algo.learning_starts:
            action = (2.0 * torch.rand(cfg.num_envs, self.low.shape[0]) - 1.0).numpy()
        else:
            obs = torch.as_tensor(self.obs, dtype=torch.float32).to(self.device)
            noise = self.noise.next() if self.noise is not None else None
            action = self.learner.act(obs, explore=True, noise=noise).float().cpu().numpy()
        demonstrating = self.demos is not None and self.demos.active(self.env_steps)
        if demonstrating:
            action[: self.demos.envs] = self.demos.actions(self.obs)
        env_action = to_box(action, self.low, self.high)
        next_obs, reward, terminated, truncated, info = self.env.step(env_action)
        done = terminated | truncated
        stored_next, next_priv = next_obs, info.get("privileged_obs") if self.critic_extra else None
        if done.any():
            rows = np.flatnonzero(done)
            if self.noise is not None:
                self.noise.restart(rows)
            stored_next = next_obs.copy()
            stored_next[rows] = final_rows(info["final_obs"], rows)
            if next_priv is not None:
                next_priv = next_priv.copy()
                next_priv[rows] = final_rows(info["final_privileged_obs"], rows)
        self.replay.add(self.obs, action, reward, stored_next, terminated, truncated, self.priv, next_priv)
        row = (self.replay.cursor - 1) % self.replay.rows  # the step just stored: statistics from the device copy
        obs_t, critic_t = self.replay.obs[row], self.replay.critic_obs[row] if self.critic_extra else None
        self.learner.observe_statistics(obs_t, obs_t if critic_t is None else torch.cat([obs_t, critic_t], -1))
        if self.mirror is not None:  # the updates see the mirror images too: so do the normalizers' statistics
            obs_m, critic_m = self.mirror.observations(obs_t, critic_t)
            self.learner.observe_statistics(obs_m, obs_m if critic_m is None else torch.cat([obs_m, critic_m], -1))
        self._episodes(reward, done, info, slice(self.demos.envs, None) if demonstrating else slice(None))
        # our own copies: an env may rewrite the arrays it returned in place at its next step (the stored
        # observation would then be the next one)
        self.obs, self.priv = _own(next_obs), _own(info.get("privileged_obs") if self.critic_extra else None)
        self.env_steps += cfg.num_envs
        self.iteration += 1

    def _episodes(self, reward: np.ndarray, done: np.ndarray, info: dict, actors: slice) -> None:
        """The step's reward terms over the envs the actor drove (``actors``) and the episodes it finished."""
        sums = self.term_sums
        sums["reward/total"] = sums.get("reward/total", 0.0) + float(reward[actors].mean())
        for name, values in (info.get("reward_terms") or {}).items():
            sums[f"reward/{name}"] = sums.get(f"reward/{name}", 0.0) + float(np.mean(np.asarray(values)[actors]))
        self.term_steps += 1
        for key in CURRICULUM_KEYS:
            if key in info:
                self.levels[f"env/{key}"] = float(np.mean(info[key]))
        self.ep_ret += reward
        self.ep_len += 1
        success = info.get("is_success")
        ended = np.flatnonzero(done & self.counted)
        self.episodes_done += len(ended)
        for i in ended:
            self.finished.append((float(self.ep_ret[i]), int(self.ep_len[i]), None if success is None else bool(success[i])))
        self.ep_ret[done], self.ep_len[done] = 0.0, 0
        self.counted[done] = True  # the next episode is the actor's unless the script still drives the env
        if self.demos is not None and self.demos.active(self.env_steps + self.cfg.num_envs):
            self.counted[: self.demos.envs] = False

    def learn(self) -> dict[str, float]:
        """The updates this step earned (``algo.updates_per_step`` per batch step, once learning started)."""
        algo = self.cfg.algo
        if self.env_steps < algo.learning_starts:
            return {}
        self._raise_updates()
        self.update_credit += self.updates_per_step
        stats: dict[str, float] = {}
        while self.update_credit >= 1.0:
            batch = self.replay.sample(algo.batch_size)
            stats = self.learner.update(batch if self.mirror is None else self.mirror.augment(batch))
            self.update_credit -= 1.0
        return stats

    @property
    def updates_per_step(self) -> float:
        """Gradient updates per batch step now: ``algo.updates_per_step``, or ``algo.raise_updates``'s once raised."""
        algo = self.cfg.algo
        return algo.updates_per_step if self.updates_raised_at is None else algo.raise_updates.updates_per_step

    def _raise_updates(self) -> None:
        """Switch to ``algo.raise_updates``'s number the first time the rolling training success reaches its threshold."""
        rule = self.cfg.algo.raise_updates
        if rule is None or self.updates_raised_at is not None or self.episodes_done < rule.min_episodes:
            return
        success = self.episode_stats().get("episode/success")
        if success is not None and success >= rule.at_success:
            self.updates_raised_at = self.env_steps
            print(f"[unilab] training success {success:.1%} >= {rule.at_success:.0%} at {self.env_steps} env steps: "
                  f"{rule.updates_per_step:g} updates per batch step from now on (were {self.cfg.algo.updates_per_step:g})",
                  flush=True)

    # --- logging and checkpoints -----------------------------------------------------------------
    def reward_stats(self) -> dict[str, float]:
        """``reward/<term>``: each term's mean per env step since the last call (they sum to ``reward/total``)."""
        stats = {k: v / self.term_steps for k, v in self.term_sums.items()} if self.term_steps else {}
        self.term_sums, self.term_steps = {}, 0
        return stats

    def episode_stats(self) -> dict[str, float]:
        if not self.finished:
            return {}
        returns, lengths, successes = zip(*self.finished)
        stats = {"episode/return": float(np.mean(returns)), "episode/length": float(np.mean(lengths))}
        if successes[0] is not None:
            stats["episode/success"] = float(np.mean(successes))
        return stats

    def state(self) -> dict:
        cfg = self.cfg
        return {
            "config": to_dict(cfg), "dims": self.dims, "env_steps": self.env_steps, "iteration": self.iteration,
            "update_credit": self.update_credit, "updates_raised_at": self.updates_raised_at, "learner": self.learner.state_dict(),
            "optimizers": self.learner.optimizer_state(),
            "rng": {"torch": torch.random.get_rng_state(),
                    "cuda": torch.cuda.get_rng_state(self.device) if self.device.type == "cuda" else None},
            "env_state": to_tensors(self.env.get_state()) if hasattr(self.env, "get_state") else None,
            "obs": torch.from_numpy(np.array(self.obs)), "priv": None if self.priv is None else torch.from_numpy(np.array(self.priv)),
            "episodes": {"ret": torch.from_numpy(self.ep_ret.copy()), "len": torch.from_numpy(self.ep_len.copy()),
                         "done": self.episodes_done, "recent": _recent_tensors(self.finished),
                         "counted": torch.from_numpy(self.counted.copy())},
            "replay": self.replay.state_dict() if cfg.log.save_replay else None,
            "eval_stats": dict(self.eval_stats),
            "exploration_noise": None if self.noise is None else self.noise.state_dict(),
        }

    def save(self, path: Path | None = None) -> Path:
        return save_checkpoint(self.state(), path or self.out / "checkpoint.pt", CKPT_FORMAT, CKPT_VERSION)

    def load(self, path: str | Path) -> None:
        ckpt = load_checkpoint(path, CKPT_FORMAT, CKPT_VERSION, required=("learner", "env_steps"))
        slim = bool(ckpt.get("slim"))
        if not slim and "optimizers" not in ckpt:
            raise CheckpointError(f"checkpoint {path} has no optimizer state and is not marked slim: it was not "
                                  f"written by `unilab train --algo sac|td3` or `unilab ship`")
        self.learner.load_state_dict(ckpt["learner"])
        self.env_steps, self.iteration, self.update_credit = int(ckpt["env_steps"]), int(ckpt["iteration"]), float(ckpt["update_credit"])
        raised = ckpt.get("updates_raised_at")  # checkpoints before algo.raise_updates: never raised
        self.updates_raised_at = None if raised is None else int(raised)
        if slim:  # a shipped policy: the weights and counters; the rest starts afresh (said below)
            print(f"[unilab] resume: {path} is a slim (shipped) checkpoint: it has no optimizer state (Adam's moments "
                  f"restart), no env state (the envs start from reset with this run's seed) and no RNG state: "
                  f"not an exact continuation", flush=True)
        else:
            self.learner.load_optimizer_state(ckpt["optimizers"])
            torch.random.set_rng_state(ckpt["rng"]["torch"])
            if ckpt["rng"].get("cuda") is not None and self.device.type == "cuda":
                torch.cuda.set_rng_state(ckpt["rng"]["cuda"], self.device)
        if ckpt.get("env_state") is not None and hasattr(self.env, "set_state"):
            self.env.set_state(to_numpy(ckpt["env_state"]))
            self.obs = ckpt["obs"].numpy()
            self.priv = None if ckpt["priv"] is None else ckpt["priv"].numpy()
            self.ep_ret[:], self.ep_len[:] = ckpt["episodes"]["ret"].numpy(), ckpt["episodes"]["len"].numpy()
            if ckpt["episodes"].get("counted") is not None:  # checkpoints before algo.demonstrations: all counted
                self.counted[:] = ckpt["episodes"]["counted"].numpy()
        episodes = ckpt.get("episodes") or {}  # a slim checkpoint has none: the counts start afresh
        self.episodes_done = int(episodes.get("done", 0))
        if episodes.get("recent") is not None:  # the stop rule's window (checkpoints before it: empty)
            self.finished.clear()
            self.finished.extend(_recent_rows(episodes["recent"]))
        if self.eval_stats and ckpt.get("eval_stats"):
            self.eval_stats.update(ckpt["eval_stats"])
        if self.noise is not None and ckpt.get("exploration_noise") is not None:
            self.noise.load_state_dict(ckpt["exploration_noise"])
        if ckpt.get("replay") is not None:
            self.replay.load_state_dict(ckpt["replay"])
        else:  # without the buffer: collect with the learned actor until a batch is stored again
            self.refilling = True
            print(f"[unilab] resume: the checkpoint holds no replay buffer (log.save_replay was off); it refills from "
                  f"the resumed actor before the first update ({self.cfg.algo.batch_size} transitions at least)")

    def train(self) -> OffPolicyResult:
        cfg, start, logger = self.cfg, time.time(), None
        write_run_files(self.out, cfg.algo.kind, to_dict(cfg))
        need = replay_bytes(self.replay.rows * cfg.num_envs, self.replay.obs.shape[-1], self.replay.action.shape[-1], self.critic_extra)
        mirrored = f"; minibatches of {cfg.algo.batch_size} plus their mirror images" if self.mirror is not None else ""
        bf16 = "; updates under bf16 autocast" if self.learner.precision_device else ""
        begins = f"resuming {self.resumed} at {self.env_steps} env steps" if self.resumed is not None else "a new run"
        print(start_line(cfg.task, cfg.algo.kind, self.device, cfg.num_envs, self.out, begins, cfg.total_steps,
                         cfg.sim2real), flush=True)
        print(f"[unilab] {cfg.algo.kind} on {self.device}: replay buffer {self.replay.rows * cfg.num_envs} transitions, "
              f"{need / 2**20:.1f} MiB on {self.device}; {cfg.iterations} batch steps of {cfg.num_envs} envs{mirrored}{bf16}",
              flush=True)
        if self.demos is not None and self.demos.active(self.env_steps):
            print(self.demos.describe(cfg.num_envs), flush=True)
        logger = RunLogger(self.out, csv_log=cfg.log.csv, tensorboard=cfg.log.tensorboard,
                           resume_step=self.env_steps if self.env_steps else None)
        progress = Progress(cfg.task, cfg.iterations * cfg.num_envs, self.env_steps, bar=cfg.log.progress)
        stop_reason, logged_at = None, None
        interrupted, stats = False, {}
        logs = Cadence(cfg.log.every_steps, self.env_steps)
        checkpoints = Cadence(cfg.log.checkpoint_every_steps, self.env_steps)
        evals = Cadence(cfg.stop.eval.every_steps, self.env_steps) if cfg.stop.eval is not None else None
        restore = route_stop_signals(self.stop_request.handle)
        try:
            while self.env_steps < cfg.total_steps and not self.stop_request.requested:
                self.collect()
                if self.refilling and len(self.replay) >= cfg.algo.batch_size:
                    self.refilling = False
                if not self.refilling:
                    stats = self.learn() or stats
                progress.advance(cfg.num_envs, self._postfix)
                self._watch_stall()
                if evals is not None and evals.due(self.env_steps):
                    stop_reason = self.eval_stop_reason()
                    evals.done(self.env_steps)
                if logs.due(self.env_steps):
                    logger.log(self.env_steps, self.iteration, self._row(stats, start))
                    logged_at = self.env_steps
                    logs.done(self.env_steps)
                if checkpoints.due(self.env_steps):
                    self.save()
                    checkpoints.done(self.env_steps)
                stop_reason = stop_reason or self.stop_reason()
                if stop_reason:
                    if logged_at != self.env_steps:  # the stop's own row, unless this step has just been logged
                        logger.log(self.env_steps, self.iteration, self._row(stats, start))
                    break
            interrupted = self.stop_request.requested
        except KeyboardInterrupt:
            interrupted = True
        finally:
            self.stop_request.saving = True  # a signal now waits for the checkpoint to be written
            progress.close(self._postfix)
            path = self.save()
            restore()
            logger.close()
            self.env.close()
            if self.eval_env is not None:
                self.eval_env.close()
                self.eval_env = None
        if interrupted:
            print(stopped_line(self.out, f"{self.env_steps} env steps", path), file=sys.stderr, flush=True)
        curve = learning_curve(self.out, f"{cfg.task} ({cfg.algo.kind})", cfg.log.plot and cfg.log.csv)
        return OffPolicyResult(self.env_steps, self.learner.updates, time.time() - start,
                               {**stats, **self.episode_stats(), **self.eval_stats}, path, curve, interrupted,
                               stop_reason, self.stop_request.signum if interrupted else None)

    def _postfix(self) -> str:
        """The progress bar's postfix: the recent episodes' return, length and success."""
        s = self.episode_stats()
        parts = [f"ret={s.get('episode/return', float('nan')):.3g}", f"len={s.get('episode/length', float('nan')):.0f}"]
        if "episode/success" in s:
            parts.append(f"succ={s['episode/success']:.0%}")
        return " ".join(parts)

    def _watch_stall(self) -> None:
        """Say, once, when the rolling training success stays 0 and the return flat (:mod:`trainers.common.stall`)."""
        episodes = self.episode_stats()
        line = self.stall.observe(self.env_steps, episodes.get("episode/return"), episodes.get("episode/success"))
        if line:
            print(line, flush=True)

    def _row(self, stats: dict[str, float], start: float) -> dict[str, float]:
        """One progress row: the last update's statistics, the episodes, reward terms, levels and evaluation."""
        return {**stats, **self.episode_stats(), **self.reward_stats(), **self.levels, **self.eval_stats,
                "updates": self.learner.updates, "updates_per_step": self.updates_per_step, "time/steps_per_s": self.env_steps / max(time.time() - start, 1e-9)}

    def stop_reason(self) -> str | None:
        """Why the run stops before ``total_steps`` (the config's ``stop:``), or ``None``."""
        rule = self.cfg.stop
        success = self.episode_stats().get("episode/success")
        if rule.success_rate is None or success is None or self.episodes_done < rule.min_episodes:
            return None
        if success >= rule.success_rate:
            return f"training success {success:.1%} >= {rule.success_rate:.0%} over the last {len(self.finished)} episodes"
        return None

    def eval_stop_reason(self) -> str | None:
        """``stop.eval``: evaluate the deterministic actor when the training success allows it; why the run stops
        on its result, or ``None``."""
        rule = self.cfg.stop.eval
        training = self.episode_stats().get("episode/success")
        if rule.from_training_success > 0.0 and (training is None or training < rule.from_training_success):
            return None
        result, steps = self.evaluate()
        success = result.success_rate
        self.eval_stats = {"eval/success": float("nan") if success is None else success,
                           "eval/return": result.mean_return,
                           "eval/env_steps": self.eval_stats.get("eval/env_steps", 0) + steps}
        shown = "no success reported" if success is None else f"success {success:.1%}"
        print(f"[unilab] evaluation at {self.env_steps} env steps: {shown}, return {result.mean_return:.3f} "
              f"({result.episodes} episodes, seed {rule.seed})", flush=True)
        if success is not None and success >= rule.success_rate:
            return (f"evaluation success {success:.1%} >= {rule.success_rate:.1%} over {result.episodes} episodes "
                    f"of the deterministic actor (seed {rule.seed})")
        return None

    def evaluate(self) -> tuple[EvalResult, int]:
        """The deterministic actor on ``stop.eval``'s episodes (as ``unilab eval`` plays them); the env steps taken."""
        cfg, rule = self.cfg, self.cfg.stop.eval
        if self.eval_env is None:
            self.eval_env = make_vec_env(cfg.task, rule.num_envs, cfg.env_kwargs, sim2real=self.profile)
        steps = 0

        def act(obs: np.ndarray) -> np.ndarray:
            nonlocal steps
            steps += len(obs)
            action = self.learner.act(torch.as_tensor(np.asarray(obs), dtype=torch.float32).to(self.device), explore=False)
            return to_box(action.float().cpu().numpy(), self.low, self.high)

        return run_episodes(self.eval_env, act, rule.episodes, rule.seed), steps


def _own(array) -> np.ndarray | None:
    """A copy of an env's returned array that its next step cannot rewrite (None stays None)."""
    return None if array is None else np.array(array, copy=True)


def _recent_tensors(finished) -> dict[str, torch.Tensor]:
    """The recent episodes' ``(return, length, success)`` rows as tensors (success -1: the task reports none)."""
    rows = list(finished)
    return {"ret": torch.tensor([r[0] for r in rows], dtype=torch.float64),
            "len": torch.tensor([r[1] for r in rows], dtype=torch.int64),
            "success": torch.tensor([-1 if r[2] is None else int(r[2]) for r in rows], dtype=torch.int8)}


def _recent_rows(saved: dict[str, torch.Tensor]) -> list[tuple[float, int, bool | None]]:
    """:func:`_recent_tensors` back as rows."""
    return [(float(r), int(n), None if int(s) < 0 else bool(s))
            for r, n, s in zip(saved["ret"].tolist(), saved["len"].tolist(), saved["success"].tolist())]


def load_run_config(path: str | Path) -> OffPolicyConfig:
    """The config stored in an off-policy checkpoint."""
    return from_dict(OffPolicyConfig, load_checkpoint(path, CKPT_FORMAT, CKPT_VERSION, required=("config",))["config"])


def train(cfg: OffPolicyConfig, resume: str | Path | None = None) -> OffPolicyResult:
    """Run ``cfg`` (from ``resume``'s checkpoint when given); the result."""
    return OffPolicyRunner(cfg, resume).train()


