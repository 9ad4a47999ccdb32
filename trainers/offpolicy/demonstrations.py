"""The scripted demonstrations of ``algo.demonstrations`` (:class:`~trainers.offpolicy.config.Demonstrations`).

For the run's first ``steps`` env steps the batch's first ``envs`` envs act by the task's scripted controller
(``Task.scripted_action``) plus Gaussian noise, instead of by the actor; the runner stores their transitions
as any other and leaves their episodes out of its training statistics.
"""

from __future__ import annotations

import numpy as np
import torch

from trainers.offpolicy.action_box import to_unit
from trainers.offpolicy.config import Demonstrations
from unilab_envs.config import ConfigError
from unilab_envs.core.task import Task


class ScriptedDemonstrations:
    """The demonstrating envs of one run: which they are, while when, and their actions."""

    def __init__(self, env, rule: Demonstrations, task_id: str, low: np.ndarray, high: np.ndarray) -> None:
        task = getattr(env.unwrapped, "task", None)
        if task is None or type(task).scripted_action is Task.scripted_action:
            raise ConfigError(f"algo.demonstrations: {task_id} has no scripted controller (Task.scripted_action) to "
                              f"demonstrate with; remove algo.demonstrations")
        seen, read = int(np.prod(env.single_observation_space.shape)), int(task.obs_size)
        if seen != read:
            raise ConfigError(f"algo.demonstrations: the env's observation has {seen} columns, the task's scripted "
                              f"controller reads its {read} (an observation history or another wrapper changed them); "
                              f"remove algo.demonstrations or the wrapper")
        self.rule, self.task, self.low, self.high = rule, task, low, high

    @property
    def envs(self) -> int:
        """The demonstrating envs: rows ``0 .. envs - 1`` of the batch."""
        return self.rule.envs

    def active(self, env_steps: int) -> bool:
        """Whether the script drives its envs at the batch step that starts at ``env_steps``."""
        return env_steps < self.rule.steps

    def actions(self, obs: np.ndarray) -> np.ndarray:
        """The demonstrating envs' ``(envs, A)`` actions in ``[-1, 1]`` for the batch's observations: the script's,
        plus ``noise`` from torch's RNG, clipped."""
        scripted = self.task.scripted_action(np.asarray(obs[: self.envs]))
        unit = to_unit(np.asarray(scripted, dtype=np.float32), self.low, self.high)
        if self.rule.noise > 0:
            unit = unit + self.rule.noise * torch.randn(unit.shape).numpy()
        return np.clip(unit, -1.0, 1.0).astype(np.float32)

    def describe(self, num_envs: int) -> str:
        """One line for the run's start."""
        r = self.rule
        return (f"[unilab] demonstrations: {type(self.task).__name__}'s scripted controller drives envs 0-{r.envs - 1} of "
                f"{num_envs} for the first {r.steps} env steps (noise {r.noise:g}); their episodes stay out of the "
                f"training statistics")
