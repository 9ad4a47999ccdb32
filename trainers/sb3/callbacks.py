"""SB3 callbacks and logging: reward terms into the logger, atomic checkpoints, and an
SB3 logger writing the bundled runner's ``progress.csv`` + ``tb/``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import HumanOutputFormat, KVWriter, Logger
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper, VecNormalize

from trainers.sb3.adapter import SB3VecEnv

__all__ = [
    "CheckpointCallback",
    "DumpLogsCallback",
    "RewardTermsCallback",
    "RunLoggerWriter",
    "find_adapter",
    "save_model",
    "sb3_logger",
]


def find_adapter(env: VecEnv) -> SB3VecEnv | None:
    """The ``SB3VecEnv`` under a stack of SB3 ``VecEnvWrapper``s, if any."""
    while isinstance(env, VecEnvWrapper):
        env = env.venv
    return env if isinstance(env, SB3VecEnv) else None


class RewardTermsCallback(BaseCallback):
    """Logs ``reward/<term>`` (per-env-step means of ``info["reward_terms"]``) and
    ``env/diverged`` at the end of every rollout; ``record_mean`` averages the rollouts
    between two logger dumps."""

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
        diverged = self._adapter.diverged_count
        if diverged != self._diverged_seen:
            self.logger.record("env/diverged_total", diverged)
            self._diverged_seen = diverged


def _atomic(save, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    save(tmp)
    # SB3's model.save appends ".zip" when missing
    written = tmp if tmp.exists() else tmp.with_name(tmp.name + ".zip")
    os.replace(written, path)


def save_model(model, out: Path, name: str = "model") -> Path:
    """Atomically write ``<name>.zip`` and, with ``VecNormalize``, ``<name>_vecnormalize.pkl``."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.zip"
    _atomic(model.save, path)
    env = model.get_env()
    while isinstance(env, VecEnvWrapper) and not isinstance(env, VecNormalize):
        env = env.venv
    if isinstance(env, VecNormalize):
        _atomic(env.save, out / f"{name}_vecnormalize.pkl")
    return path


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
