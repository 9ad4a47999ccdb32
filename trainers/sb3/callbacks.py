"""SB3 callbacks: reward terms into the logger, atomic checkpoints, a learning curve."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper, VecNormalize

from trainers.sb3.adapter import SB3VecEnv

__all__ = ["CheckpointCallback", "LearningCurveCallback", "RewardTermsCallback", "find_adapter", "plot_learning_curve"]


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
    """Every ``save_freq`` env steps (summed over envs), atomically write
    ``checkpoints/step_<n>.zip`` (+ VecNormalize stats) under ``out``."""

    def __init__(self, out: str | Path, save_freq: int, verbose: int = 0):
        super().__init__(verbose)
        self.dir = Path(out) / "checkpoints"
        self.save_freq = max(int(save_freq), 1)
        self._next = self.save_freq

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next:
            self._next += self.save_freq
            save_model(self.model, self.dir, f"step_{self.num_timesteps}")
        return True


class LearningCurveCallback(BaseCallback):
    """Records (env steps, mean return of the last 100 episodes) after each rollout."""

    def __init__(self, verbose: int = 0):
        super().__init__(verbose)
        self.steps: list[int] = []
        self.returns: list[float] = []

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        buf = self.model.ep_info_buffer
        if buf:
            self.steps.append(self.num_timesteps)
            self.returns.append(float(np.mean([ep["r"] for ep in buf])))

    def write(self, out: str | Path, title: str = "") -> Path | None:
        """Write ``learning_curve.csv`` and ``learning_curve.png``; the PNG path, or None
        when no episode finished."""
        out = Path(out)
        with open(out / "learning_curve.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["env_steps", "ep_return_mean"])
            w.writerows(zip(self.steps, self.returns))
        if not self.steps:
            return None
        return plot_learning_curve(self.steps, self.returns, out / "learning_curve.png", title)


def plot_learning_curve(steps, returns, path: Path, title: str = "") -> Path:
    """A PNG of mean episode return against env steps (no global pyplot state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.plot(steps, returns)
    ax.set_xlabel("env steps")
    ax.set_ylabel("mean episode return (last 100)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path
