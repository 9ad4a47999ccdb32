"""SB3 callbacks and logging: reward terms into the logger, atomic checkpoints, and an
SB3 logger writing the bundled runner's ``progress.csv`` + ``tb/``. The stop signals, the progress
bar and the atomic writes are every learner's (:mod:`trainers.common.lifecycle`): these callbacks
only connect them to SB3's ``learn``."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import HumanOutputFormat, KVWriter, Logger
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper, VecNormalize

from trainers.common.atomic import atomic_write
from trainers.common.progress import Progress
from trainers.common.signals import StopRequest, stop_on_signals
from trainers.sb3.adapter import SB3VecEnv

__all__ = [
    "CheckpointCallback",
    "DumpLogsCallback",
    "ProgressCallback",
    "RewardTermsCallback",
    "RunLoggerWriter",
    "StopCallback",
    "find_adapter",
    "latest_checkpoint",
    "load_model",
    "progress_postfix",
    "save_model",
    "sb3_logger",
]


def find_adapter(env: VecEnv) -> SB3VecEnv | None:
    """The ``SB3VecEnv`` under a stack of SB3 ``VecEnvWrapper``s, if any."""
    while isinstance(env, VecEnvWrapper):
        env = env.venv
    return env if isinstance(env, SB3VecEnv) else None


class RewardTermsCallback(BaseCallback):
    """Logs ``reward/<term>`` (per-env-step means of ``info["reward_terms"]``),
    ``safety/<count>`` (the guard's counts per rollout, under a profile with a ``safety:``
    section) and ``env/diverged`` at the end of every rollout; ``record_mean`` averages the
    rollouts between two logger dumps."""

    def __init__(self, verbose: int = 0):
        super().__init__(verbose)
        self._adapter: SB3VecEnv | None = None
        self._diverged_seen = 0

    def _init_callback(self) -> None:
        self._adapter = find_adapter(self.training_env)

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        if self._adapter is None:
            return
        for name, value in self._adapter.pop_reward_terms().items():
            self.logger.record_mean(f"reward/{name}", value)
        for name, value in self._adapter.pop_safety().items():
            self.logger.record_mean(f"safety/{name}", value)
        diverged = self._adapter.diverged_count
        if diverged != self._diverged_seen:
            self.logger.record("env/diverged_total", diverged)
            self._diverged_seen = diverged


def save_model(model, out: Path, name: str = "model") -> Path:
    """Atomically (:func:`~trainers.common.atomic.atomic_write`: the temp file keeps the ``.zip`` suffix,
    so SB3 appends none) write ``<name>.zip`` and, with ``VecNormalize``, ``<name>_vecnormalize.pkl``."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.zip"
    atomic_write(path, model.save)
    env = model.get_env()
    while isinstance(env, VecEnvWrapper) and not isinstance(env, VecNormalize):
        env = env.venv
    if isinstance(env, VecNormalize):
        atomic_write(out / f"{name}_vecnormalize.pkl", env.save)
    return path


def load_model(cls, path: str | Path, env: VecEnv, **kwargs):
    """``cls.load(path, env=env, **kwargs)``, also for a model saved while UniLab's observation
    spaces were declared unbounded (+/-inf; they are now bounded by the largest finite float32).

    SB3 compares the saved space with the env's as a whole, bounds included; a saved space of
    the same shape and dtype whose only difference is those infinite bounds is replaced by the
    env's. Any other mismatch raises SB3's ``ValueError`` as before."""
    try:
        return cls.load(path, env=env, **kwargs)
    except ValueError as e:
        if "Observation spaces do not match" not in str(e):
            raise
        from stable_baselines3.common.save_util import load_from_zip_file

        saved, now = load_from_zip_file(path, device="cpu")[0]["observation_space"], env.observation_space
        if not (_was_unbounded(saved) and saved.shape == now.shape and saved.dtype == now.dtype):
            raise
    return cls.load(path, env=env, custom_objects={"observation_space": now}, **kwargs)


def _was_unbounded(space) -> bool:
    """A float Box with every bound infinite, as UniLab's observation spaces were declared before."""
    low, high = getattr(space, "low", None), getattr(space, "high", None)
    return low is not None and bool(np.all(np.isneginf(low)) and np.all(np.isposinf(high)))


def latest_checkpoint(run_dir: str | Path) -> Path | None:
    """The newer of ``<run_dir>/checkpoint.zip`` and ``model.zip`` (what ``--resume <run dir>``
    continues from: after Ctrl-C, ``model.zip`` is newer than the last periodic checkpoint),
    or None when neither exists."""
    found = [p for p in (Path(run_dir) / "checkpoint.zip", Path(run_dir) / "model.zip") if p.is_file()]
    return max(found, key=lambda p: p.stat().st_mtime_ns) if found else None


class CheckpointCallback(BaseCallback):
    """Every ``save_freq`` env steps (summed over envs), atomically rewrite
    ``<out>/checkpoint.zip`` and ``checkpoint_vecnormalize.pkl`` (the runner's
    "latest checkpoint" convention); ``keep=True`` also keeps ``checkpoint_<steps>.zip``."""

    def __init__(self, out: str | Path, save_freq: int, keep: bool = False, verbose: int = 0):
        super().__init__(verbose)
        self.dir = Path(out)
        self.save_freq = max(int(save_freq), 1)
        self.keep = keep
        self._next = self.save_freq

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next:
            self._next = (self.num_timesteps // self.save_freq + 1) * self.save_freq
            save_model(self.model, self.dir, "checkpoint")
            if self.keep:
                save_model(self.model, self.dir, f"checkpoint_{self.num_timesteps}")
        return True


class DumpLogsCallback(BaseCallback):
    """Dump the SB3 logger every ``every`` env steps (for off-policy algorithms, whose
    own ``log_interval`` counts episodes; pass ``log_interval=None`` to ``learn``)."""

    def __init__(self, every: int, verbose: int = 0):
        super().__init__(verbose)
        self.every = max(int(every), 1)
        self._next = self.every

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next:
            self._next = (self.num_timesteps // self.every + 1) * self.every
            self.model.dump_logs()
        return True


def progress_postfix(model, started_steps: int, elapsed: float) -> str:
    """``ret=.. len=.. [succ=..] fps=..``: the mean return and length of SB3's recent episodes
    (``model.ep_info_buffer``, the last 100), the success rate when the env reports one, and
    env steps per second since ``started_steps`` (the bundled PPO's bar shows the same)."""
    episodes = list(model.ep_info_buffer or [])
    ret = float(np.mean([e["r"] for e in episodes])) if episodes else float("nan")
    length = float(np.mean([e["l"] for e in episodes])) if episodes else float("nan")
    parts = [f"ret={ret:.3g}", f"len={length:.0f}"]
    if model.ep_success_buffer:
        parts.append(f"succ={float(np.mean(model.ep_success_buffer)):.0%}")
    fps = (model.num_timesteps - started_steps) / elapsed if elapsed > 0 else 0.0
    parts.append(f"fps={fps:.0f}")
    return " ".join(parts)


class ProgressCallback(BaseCallback):
    """Training progress on the terminal, instead of SB3's log tables: every learner's
    :class:`~trainers.common.progress.Progress` (a bar over env steps labelled ``desc``, the task;
    with ``bar=False`` one line every ``1/lines`` of the run, on ``file``), its postfix the recent
    episode return and length and the steps per second (:func:`progress_postfix`). The target is the
    ``total_timesteps`` SB3's ``learn`` runs to, so a resumed run's bar starts where the run stopped.

    :param refresh_s: least seconds between two postfix updates (it averages 100 episodes).
    """

    def __init__(self, desc: str = "", bar: bool = True, lines: int = 20, file=None,
                 refresh_s: float = 0.5, verbose: int = 0):
        super().__init__(verbose)
        self.desc, self.use_bar, self.lines, self.file, self.refresh_s = desc, bar, max(int(lines), 1), file, refresh_s
        self.progress: Progress | None = None
        self._start = 0
        self._t0 = 0.0

    def _on_training_start(self) -> None:
        total = int(self.locals.get("total_timesteps", 0))  # learn's target, already past resumed steps
        self._start = self.model.num_timesteps
        self._t0 = time.perf_counter()
        self.progress = Progress(self.desc, total, self._start, bar=self.use_bar, lines=self.lines,
                                 refresh_s=self.refresh_s, file=self.file)

    def _postfix(self) -> str:
        return progress_postfix(self.model, self._start, time.perf_counter() - self._t0)

    def _on_step(self) -> bool:
        if self.progress is not None:
            self.progress.advance(self.model.num_timesteps - self.progress.steps, self._postfix)
        return True

    def _on_training_end(self) -> None:
        self.close()

    @property
    def bar(self):
        """The tqdm bar (``None`` without one, or once closed)."""
        return None if self.progress is None else self.progress.bar

    def close(self) -> None:
        """Close the bar (also when ``learn`` ended in an exception and never called the end hook)."""
        if self.progress is not None:
            if self.model.num_timesteps > self.progress.steps:
                self.progress.advance(self.model.num_timesteps - self.progress.steps, self._postfix)
            self.progress.close(self._postfix)
            self.progress = None


class StopCallback(BaseCallback):
    """Ends SB3's ``learn`` (``_on_step`` returns False) once ``request.requested`` is set."""

    def __init__(self, request: StopRequest, verbose: int = 0):
        super().__init__(verbose)
        self.request = request

    def _on_step(self) -> bool:
        return not self.request.requested


# SB3 logger -> the runner's RunLogger (progress.csv + tb/), same column names
_RENAME = {"rollout/ep_rew_mean": "episode/return", "rollout/ep_len_mean": "episode/length",
           "rollout/success_rate": "episode/success"}
_TRAIN_KEYS = {
    "sb3-ppo": ["train/approx_kl", "train/clip_fraction", "train/clip_range", "train/entropy_loss",
                "train/explained_variance", "train/learning_rate", "train/loss", "train/policy_gradient_loss",
                "train/value_loss", "train/std", "train/n_updates"],
    "sb3-sac": ["train/actor_loss", "train/critic_loss", "train/ent_coef", "train/ent_coef_loss",
                "train/learning_rate", "train/n_updates"],
    "sb3-td3": ["train/actor_loss", "train/critic_loss", "train/learning_rate", "train/n_updates"],
}


class RunLoggerWriter(KVWriter):
    """An SB3 ``KVWriter`` onto ``trainers.common.logging.RunLogger``: one CSV row and
    TensorBoard point per SB3 dump, keyed by env steps, with the bundled runner's names
    for episode stats (``episode/return``, ``episode/length``, ``episode/success``), so
    ``trainers.common.plotting`` draws both. The CSV's columns are fixed by its first
    row, so keys SB3 only logs later (``train/*``) are declared up front."""

    def __init__(self, out: str | Path, expected_keys: list[str] = (), resume_step: int | None = None):
        from trainers.common.logging import RunLogger

        self.run_logger = RunLogger(out, resume_step=resume_step)
        self.expected = ["episode/return", "episode/length", *(_RENAME.get(k, k) for k in expected_keys)]
        self.dumps = 0

    def write(self, key_values: dict, key_excluded: dict, step: int = 0) -> None:
        scalars = {}
        for key, value in key_values.items():
            if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
                scalars[_RENAME.get(key, key)] = float(value)
        if self.dumps == 0:
            scalars = {**dict.fromkeys(self.expected, float("nan")), **scalars}
        self.dumps += 1
        self.run_logger.log(step, self.dumps, scalars)

    def close(self) -> None:
        self.run_logger.close()


def sb3_logger(out: str | Path, algo: str = "", stdout: bool = True, resume_step: int | None = None) -> Logger:
    """SB3 ``Logger`` writing ``<out>/progress.csv`` and ``<out>/tb/`` like the bundled runner."""
    formats: list[KVWriter] = [RunLoggerWriter(out, _TRAIN_KEYS.get(algo, []), resume_step)]
    if stdout:
        formats.append(HumanOutputFormat(sys.stdout))
    return Logger(folder=str(out), output_formats=formats)
