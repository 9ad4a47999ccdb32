"""The config every legged joystick task shares: commands, gait, shaping, termination, reset.

:class:`LocomotionConfig` declares the fields and checks them; a robot's task subclasses
it to give its defaults (every field below without a default, and any it changes).
:func:`kernel_records` turns a config into the records the kernels read.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from unilab_envs.core.config import require, require_range, require_timing
from unilab_envs.core.model import require_gains
from unilab_envs.locomotion.gait import gait_step
from unilab_envs.locomotion.records import Commands, Params, Reset
from unilab_envs.locomotion.rewards import RewardScales


@dataclass(frozen=True, kw_only=True)
class LocomotionConfig:
    """Everything a legged joystick task can be told; unknown keys are rejected (see ``build_config``)."""

    model_path: str
    sim_dt: float = 0.004
    control_dt: float = 0.02
    action_scale: float = 0.5  # PD targets move at most this many rad from the home pose
    # PD gains (kp N m/rad, kd N m s/rad), one per joint in action order, of the servos a torque-actuated
    # model (model_path= with <motor> actuators) is run with (unilab_envs.core.model.servo_joint_actuators);
    # the defaults are the shipped MJCF's position-actuator kp / kv. A position-actuated model keeps its own.
    pd_kp: tuple[float, ...]
    pd_kd: tuple[float, ...]
    # commands: (low, high) per axis, resampled every command_resample_time seconds
    command_vx: tuple[float, float]
    command_vy: tuple[float, float]
    command_yaw: tuple[float, float] = (-1.0, 1.0)
    command_resample_time: float = 5.0
    zero_command_probability: float
    # chance that a moving command is straight ahead (vy = yaw rate = 0): trains the straight walk a
    # user commands most, where an uncorrected yaw drift shows (docs/tasks.md)
    straight_command_probability: float = 0.0
    # gait
    gait_frequency: float
    swing_height: float = 0.08
    feet_phase_width: float  # m^2: feet_phase = exp(-sum of squared foot-height errors / width)
    # reward shaping constants
    tracking_sigma: float = 0.25
    # width of the yaw-rate kernel alone (rad^2/s^2); None: tracking_sigma (docs/tasks.md: a narrower one
    # pays only for small yaw errors)
    yaw_tracking_sigma: float | None = None
    base_height_target: float
    air_time_target: float
    clip_air_time_reward: bool  # feet_air_time adds clip(air - target, 0, target): short steps not punished
    positive_clip_includes_termination: bool  # else a fall costs its full penalty, outside the clip
    float32_math: bool  # float32 transcendentals in the kernels (see unilab_envs.locomotion.precision)
    soft_joint_limit: float = 0.9
    contact_height: float  # a foot below this height (m) is in contact
    # termination: tilt beyond this angle (rad) or base below this height (m)
    max_tilt: float
    min_base_height: float
    # reset randomization
    reset_xy_range: float = 0.5
    reset_joint_range: float
    reset_base_velocity: float
    reward_scales: RewardScales
    # more terms, or a term's weight / params: {name: {weight: scale, param: value}}; a name the task does
    # not declare must be registered (unilab_envs.core.reward_terms.register_reward_term("locomotion", ...))
    reward_terms: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    # policy observation groups the actor does without, kept by the critic (moved to the end of the privileged
    # observation): ("linvel",) gives a policy on what a Unitree robot measures (rt/lowstate has no base velocity)
    critic_only_groups: tuple[str, ...] = ()

    def validate(self) -> None:
        require_timing(self.sim_dt, self.control_dt)
        require(self.action_scale > 0, f"action_scale must be > 0, got {self.action_scale}")
        require_gains(self.pd_kp, self.pd_kd)
        for name in ("command_vx", "command_vy", "command_yaw"):
            require_range(name, getattr(self, name))
        require(self.command_resample_time > 0, f"command_resample_time must be > 0, got {self.command_resample_time}")
        require(0.0 <= self.zero_command_probability <= 1.0, f"zero_command_probability must be in [0, 1], got {self.zero_command_probability}")
        require(0.0 <= self.straight_command_probability <= 1.0,
                f"straight_command_probability must be in [0, 1], got {self.straight_command_probability}")
        for name in ("gait_frequency", "feet_phase_width", "tracking_sigma", "base_height_target", "contact_height"):
            require(getattr(self, name) > 0, f"{name} must be > 0, got {getattr(self, name)}")
        require(self.yaw_tracking_sigma is None or self.yaw_tracking_sigma > 0,
                f"yaw_tracking_sigma must be > 0 (or null: tracking_sigma), got {self.yaw_tracking_sigma}")
        require(0 < self.soft_joint_limit <= 1, f"soft_joint_limit must be in (0, 1], got {self.soft_joint_limit}")
        require(0 < self.max_tilt <= math.pi, f"max_tilt must be in (0, pi], got {self.max_tilt}")
        for name in ("swing_height", "air_time_target", "reset_xy_range", "reset_joint_range", "reset_base_velocity", "min_base_height"):
            require(getattr(self, name) >= 0, f"{name} must be >= 0, got {getattr(self, name)}")
        self.reward_scales.validate()
        require(len(set(self.critic_only_groups)) == len(self.critic_only_groups) and all(isinstance(g, str) for g in self.critic_only_groups),
                f"critic_only_groups must be distinct group names, got {self.critic_only_groups!r}")
        require(isinstance(self.reward_terms, Mapping) and all(isinstance(v, Mapping) for v in self.reward_terms.values()),
                f"reward_terms must map term names to {{weight: ..., param: ...}} mappings, got {self.reward_terms!r}")


def kernel_records(cfg: LocomotionConfig) -> tuple[Params, Commands, Reset]:
    """The kernels' :class:`Params`, :class:`Commands` and :class:`Reset` of a validated config."""
    dt, sigma, width = float(cfg.control_dt), float(cfg.tracking_sigma), float(cfg.feet_phase_width)
    yaw_sigma = sigma if cfg.yaw_tracking_sigma is None else float(cfg.yaw_tracking_sigma)
    params = Params(
        dt=dt, inv_dt=1.0 / dt, tracking_sigma=sigma, inv_tracking_sigma=1.0 / sigma,
        yaw_tracking_sigma=yaw_sigma, inv_yaw_tracking_sigma=1.0 / yaw_sigma,
        base_height_target=float(cfg.base_height_target), air_time_target=float(cfg.air_time_target),
        gait_step=gait_step(cfg.gait_frequency, cfg.control_dt), swing_height=float(cfg.swing_height),
        contact_height=float(cfg.contact_height), feet_phase_width=width, inv_feet_phase_width=1.0 / width,
        cos_max_tilt=math.cos(cfg.max_tilt), min_base_height=float(cfg.min_base_height),
        clip_air_time=bool(cfg.clip_air_time_reward), clip_termination=bool(cfg.positive_clip_includes_termination),
        float32_math=bool(cfg.float32_math),
    )  # fmt: skip
    ranges = np.array([cfg.command_vx, cfg.command_vy, cfg.command_yaw], dtype=np.float64)
    commands = Commands(ranges, float(cfg.zero_command_probability), int(max(1, round(cfg.command_resample_time / cfg.control_dt))),
                        float(cfg.straight_command_probability))
    reset = Reset(float(cfg.reset_xy_range), float(cfg.reset_joint_range), float(cfg.reset_base_velocity))
    return params, commands, reset
