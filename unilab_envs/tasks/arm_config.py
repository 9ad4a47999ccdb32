"""What every arm task can be told: :class:`ArmConfig`, the base of ``UR5ReachConfig`` and ``UR5GraspConfig``.

Each task's config derives from it, sets its own defaults (model, action scale and its unit, gains, reset noise)
and adds its own fields; :meth:`ArmConfig.validate_common` checks what they share, as ``LocomotionConfig`` does for
the legged tasks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from unilab_envs.core.config import require, require_timing
from unilab_envs.core.model import require_gains


@dataclass(frozen=True, kw_only=True)
class ArmConfig:
    """The fields every arm task shares; unknown keys are rejected (``build_config``)."""

    model_path: str
    sim_dt: float = 0.004
    control_dt: float = 0.04
    #: the action's step per control step at |action| = 1 (its unit is the task's: rad of joint target, m of pinch)
    action_scale: float
    #: PD gains (kp N m/rad, kd N m s/rad), one per arm joint in JOINT_NAMES order, of the servos a torque-actuated
    #: arm (model_path= with <motor> actuators) is run with; the defaults are the shipped model's position-actuator
    #: kp / kv. A position-actuated arm keeps its own gains.
    pd_kp: tuple[float, ...]
    pd_kd: tuple[float, ...]
    #: reset randomization: uniform noise (rad) on the home joint angles
    reset_joint_range: float
    # more terms, or a term's weight / params: {name: {weight: scale, param: value}}; a name the task does not declare
    # must be registered under the task's layer (unilab_envs.core.reward_terms.register_reward_term)
    reward_terms: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    #: the largest ``reset_joint_range`` (rad) the task accepts
    max_reset_joint_range: ClassVar[float] = 1.0

    def validate_common(self) -> None:
        """Timing, gains, reset noise, reward scales and extra terms (each task checks the rest)."""
        require_timing(self.sim_dt, self.control_dt)
        require_gains(self.pd_kp, self.pd_kd)
        limit = self.max_reset_joint_range
        require(0 <= self.reset_joint_range <= limit,
                f"reset_joint_range must be in [0, {limit:g}] rad, got {self.reset_joint_range}")
        self.reward_scales.validate()
        require(isinstance(self.reward_terms, Mapping) and all(isinstance(v, Mapping) for v in self.reward_terms.values()),
                f"reward_terms must map term names to {{weight: ..., param: ...}} mappings, got {self.reward_terms!r}")
