"""Typed, validated settings of a teacher-student distillation (DAgger), besides the student's run config.

The student's run is an ordinary :class:`~trainers.ppo.config.TrainConfig` (task, envs, steps,
seed, device, ``sim2real``, ``obs_history``, ``policy.*``, ``log.*``; ``algo.num_steps`` is the
rollout length per iteration), so the result is a bundled-PPO run. What only distillation has
lives here, under ``distill.*`` keys on the command line (``distill.beta_decay=0.7``).
"""

from __future__ import annotations

from dataclasses import dataclass

from unilab_envs.config import require


@dataclass(frozen=True)
class DistillConfig:
    """DAgger: the teacher's action is executed with probability ``beta``, the student's otherwise.

    ``beta`` at iteration ``i`` is ``max(beta_min, beta * beta_decay ** i)``: the first rollouts
    follow the teacher (states it visits), later ones the student (states the student's own
    mistakes lead to, labelled by the teacher). After each rollout the student's actor is fitted
    to the teacher's action means over the rollout: ``num_epochs`` passes of ``num_minibatches``
    minibatches of mean squared error, Adam at ``learning_rate``, gradient norm clipped to
    ``max_grad_norm``.
    """

    teacher: str = ""
    beta: float = 1.0
    beta_decay: float = 0.8
    beta_min: float = 0.0
    learning_rate: float = 1e-3
    num_epochs: int = 5
    num_minibatches: int = 4
    max_grad_norm: float = 1.0
    # groups the student reads although the critic's privileged observation has them too: sensor readings the
    # robot measures, which the critic gets clean and the student as the robot does (the G1's critic keeps
    # clean gyro and gravity: shared_groups: [gyro, gravity])
    shared_groups: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "shared_groups", tuple(self.shared_groups))
        require(bool(self.teacher), "distill.teacher must name the teacher's run (folder or checkpoint): --teacher RUN")
        require(0.0 <= self.beta <= 1.0, f"distill.beta must be in [0, 1], got {self.beta}")
        require(0.0 <= self.beta_decay <= 1.0, f"distill.beta_decay must be in [0, 1], got {self.beta_decay}")
        require(0.0 <= self.beta_min <= self.beta,
               f"distill.beta_min must be in [0, distill.beta = {self.beta}], got {self.beta_min}")
        require(0.0 < self.learning_rate < 1.0, f"distill.learning_rate must be in (0, 1), got {self.learning_rate}")
        require(self.num_epochs >= 1, f"distill.num_epochs must be >= 1, got {self.num_epochs}")
        require(self.num_minibatches >= 1, f"distill.num_minibatches must be >= 1, got {self.num_minibatches}")
        require(self.max_grad_norm > 0, f"distill.max_grad_norm must be > 0, got {self.max_grad_norm}")

    def beta_at(self, iteration: int) -> float:
        """The probability of executing the teacher's action in rollout ``iteration`` (from 0)."""
        return max(self.beta_min, self.beta * self.beta_decay ** iteration)
