"""The safety guard between a policy and the motors: one definition, in NumPy, for training, play and the robot.

A ``safety:`` section configures it, with the same keys in a sim-to-real profile (the
:class:`wrappers.Safety` wrapper, so a policy can learn under it), in the deploy spec
(``deploy_spec.json``) and in ``unilab play --safety``. All three run the functions of this
module (:func:`start_rows`, :func:`observe_rows`, :func:`guard_rows`) on the same numbers
(:func:`resolve_limits`), so they clip the same targets and trip on the same inputs.

Each control step the policy's joint position targets pass, in this order:

1. **torque**: ``tau = kp * (target - q) - kd * qd`` must stay within ``torque_fraction`` of
   the actuator's force range: the target is moved to ``q + (+-tau_max + kd * qd) / kp`` when
   it would ask for more, on the joints whose actuator would not clamp there itself. Where the
   actuator's own force limit is at or below ``tau_max`` (``torque_fraction`` 1, the default,
   on a model that declares its motors' limits) the motor already holds the limit at every
   servo tick, and a target moved at the control step would hold it only at the period's start
   and take effort away for the rest of it: on a stiff servo (Kp 500) that cut made a walking
   G1 fall (docs/results/safety_guard.md). So the step acts where the limit is stricter than
   the motor (``torque_fraction`` < 1, a lower ``torque_limit``, an actuator without a force
   range) and is left to the motor elsewhere (:attr:`SafetyLimits.step_tau`). Kp and Kd are
   the gains the motors apply (:data:`GAINS`): by default
   the deploy spec's ``action.kp`` / ``action.kd``, which the robot runtime sends its motor
   drivers with every target (``LowCmd_``) and ``unilab play`` drives a model with, whatever
   the robot's MJCF declares; ``gains="model"`` for a simulation that keeps the model's own
   servos (``unilab play --model-gains``). An estimate with other gains than the motors' moves
   the wrong targets: Kp 500 read from a stiff MJCF while the driver runs Kp 150 clips every
   target to a third of the torque it asks for (docs/results/safety_guard.md);
2. **rate**: at most ``max_target_step`` rad from the previous target;
3. **position**: within ``position_fraction`` of each joint's range, centred (and within the
   targets the action can reach and the actuator's ctrlrange). Position comes last, so a
   target is never out of these limits, whatever the policy sent and whatever the torque and
   rate steps asked; when they disagree, position wins, then rate, then torque.

Watchdogs latch a **safe mode** until the episode ends (:func:`start_rows`):

* ``tilt``: the base tilted beyond ``max_tilt`` (floating-base robots; by default the
  task's own fall angle);
* ``joint_velocity``: a joint faster than ``max_joint_velocity`` on ``joint_velocity_steps`` control
  steps in a row (2 by default: a single reading over the limit, as a foot's impact gives a stiff
  ankle, is not a runaway, and latching damping on it made a walking G1 fall; a joint that runs away
  stays over the limit and trips one control period later);
* ``nonfinite_action``: a NaN or inf target;
* ``nonfinite_observation``: a NaN or inf in the policy's observation or the joint/base readings;
* ``stale_observation``: no new observation for longer than ``stale_observation_s``.

Safe mode is ``damping`` (the default: Kp = 0 and Kd = ``safe_damping``, the joints go soft
and the robot sinks; what Unitree's damping mode and legged_control's emergency stop do: a
fallen legged robot that holds a pose fights the ground) or ``hold`` (the joints hold the
pose of the trip with the nominal Kp and Kd = ``safe_damping``; for an arm, which would drop
under gravity when soft). The target of a latched row is the pose at the trip, clipped to
the position limits; :func:`gain_scales` gives the gains.

Per-joint keys take a number (every joint), a list (one per joint, in the action's joint
order) or a mapping ``{joint name or fnmatch pattern: value}`` (the others keep their
default). Nothing here imports torch or Numba; :class:`SafetyGuard` is the one-robot runtime.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from unilab_robot.config import ConfigError, build_config, require

#: watchdog names; a latched row's ``reason`` is the index + 1 of the first that held (0: none)
REASONS = ("tilt", "joint_velocity", "nonfinite_action", "nonfinite_observation", "stale_observation")
SAFE_MODES = ("damping", "hold")
#: whose Kp / Kd the guard's torque estimate and safe mode use: the deploy spec's (what the runtime sends the
#: motors) or the model's position actuators (a simulation on the model's own servos)
GAINS = ("spec", "model")
#: columns of the per-step hit counts :func:`guard_rows` returns
COUNTS = ("position_clips", "rate_limits", "torque_limits", "trips")
PER_JOINT = ("position_low", "position_high", "max_target_step", "torque_limit", "max_joint_velocity", "safe_damping")


# --- the config ------------------------------------------------------------------------------


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _per_joint_value(value: Any, key: str, positive: bool, nullable: bool = True) -> Any:
    """``value`` in canonical form (tuple for a list, dict for a mapping); checks the numbers."""
    if value is None:
        require(nullable, f"safety.{key} must not be null")
        return None
    check = (lambda v: _number(v) and v > 0) if positive else _number
    what = "a number > 0" if positive else "a finite number"
    if isinstance(value, Mapping):
        out = {}
        for name, v in value.items():
            require(isinstance(name, str), f"safety.{key}: mapping keys must be joint names or patterns, got {name!r}")
            require(check(v), f"safety.{key}[{name!r}] must be {what}, got {v!r}")
            out[name] = float(v)
        return out
    if isinstance(value, (list, tuple)):
        require(len(value) > 0 and all(check(v) for v in value),
                f"safety.{key} must be {what}, a list of them (one per joint) or a mapping joint -> value, got {value!r}")
        return tuple(float(v) for v in value)
    require(check(value), f"safety.{key} must be {what}, a list (one per joint) or a mapping joint -> value, "
                          f"got {value!r}")
    return float(value)


@dataclass(frozen=True)
class SafetyConfig:
    """The ``safety:`` section (see the module docstring); ``None`` turns a check off where noted.

    Attributes:
        position_fraction: soft position limits: this fraction of each joint's range, centred.
        position_low, position_high: per joint (rad): override the soft limits.
        max_target_step: per joint, rad per control step; ``None``: no rate limit.
        torque_fraction: the estimated PD torque stays within this fraction of the actuator's
            force range; ``None``: no torque limit. At 1 the actuator's own clamp holds it (the
            guard moves no target for torque); below 1 the guard moves targets to keep headroom.
        torque_limit: per joint (N m): override ``torque_fraction * force range``.
        max_tilt: rad of base tilt that trips (floating base); ``"task"``: the task's fall
            angle (the deploy spec's ``episode.max_tilt``); ``None``: off.
        max_joint_velocity: per joint, rad/s that trips; ``None``: off.
        joint_velocity_steps: consecutive control steps with a joint over ``max_joint_velocity``
            that trip (1: the first reading over it).
        stale_observation_s: seconds without a new observation that trip; ``None``: off.
        safe_mode: ``"damping"`` (Kp 0) or ``"hold"`` (hold the pose of the trip).
        safe_damping: per joint, the safe mode's Kd (N m s/rad); ``None``: the model's Kd.
        source: where the numbers came from, as ``unilab export`` states it in the deploy spec
            (:func:`spec_section`); informational, the guard does not read it.
    """

    position_fraction: float = 1.0
    position_low: Any = None
    position_high: Any = None
    max_target_step: Any = 0.75
    torque_fraction: float | None = 1.0
    torque_limit: Any = None
    max_tilt: Any = "task"
    max_joint_velocity: Any = 30.0
    joint_velocity_steps: int = 2
    stale_observation_s: float | None = 0.25
    safe_mode: str = "damping"
    safe_damping: Any = None
    source: str | None = None

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        f = self.position_fraction
        require(_number(f) and 0 < f <= 1, f"safety.position_fraction must be in (0, 1], got {f!r}")
        for key in PER_JOINT:
            positive = key not in ("position_low", "position_high")
            object.__setattr__(self, key, _per_joint_value(getattr(self, key), key, positive))
        t = self.torque_fraction
        require(t is None or (_number(t) and t > 0), f"safety.torque_fraction must be a number > 0 or null, got {t!r}")
        tilt = self.max_tilt
        require(tilt is None or tilt == "task" or (_number(tilt) and 0 < tilt <= math.pi),
                f"safety.max_tilt must be 'task', null or an angle in (0, pi] rad, got {tilt!r}")
        k = self.joint_velocity_steps
        require(isinstance(k, int) and not isinstance(k, bool) and k >= 1,
                f"safety.joint_velocity_steps must be a whole number of control steps >= 1, got {k!r}")
        s = self.stale_observation_s
        require(s is None or (_number(s) and s >= 0), f"safety.stale_observation_s must be a number >= 0 or null, got {s!r}")
        require(self.safe_mode in SAFE_MODES, f"safety.safe_mode must be one of {list(SAFE_MODES)}, got {self.safe_mode!r}")
        require(self.source is None or isinstance(self.source, str), f"safety.source must be text, got {self.source!r}")

    def to_dict(self) -> dict[str, Any]:
        """The section as plain JSON/YAML values (lists for tuples)."""
        return {name: (list(v) if isinstance(v, tuple) else dict(v) if isinstance(v, dict) else v)
                for name, v in ((n, getattr(self, n)) for n in self.__dataclass_fields__)}


def safety_config(section: SafetyConfig | Mapping[str, Any] | None) -> SafetyConfig:
    """A validated :class:`SafetyConfig` from a ``safety:`` section (``None`` or ``{}``: the defaults).

    Unknown keys and bad values raise :class:`~unilab_robot.config.ConfigError` (a ``ValueError``
    and a ``TypeError``) with one line that says what to change.
    """
    if isinstance(section, SafetyConfig):
        return section
    if section is None or section is True:
        section = {}
    if not isinstance(section, Mapping):
        raise ConfigError(f"the safety section must be a mapping of safety keys, got {section!r}")
    return build_config(SafetyConfig, dict(section), kind="safety key")


# --- the robot, per joint ----------------------------------------------------------------------


@dataclass(frozen=True)
class JointModel:
    """What the guard knows of the robot, per joint in the action's order (from a model, or by hand).

    Unlimited quantities are ``inf`` (a joint without a range, an actuator without a force range).
    """

    names: tuple[str, ...]
    home: np.ndarray          # rad: target = home + scale * action
    scale: float
    clip: tuple[float, float]  # the action's bounds
    range_low: np.ndarray     # rad, the joint's range
    range_high: np.ndarray
    ctrl_low: np.ndarray      # rad, the actuator's ctrlrange
    ctrl_high: np.ndarray
    kp: np.ndarray            # N m / rad of the position actuators
    kd: np.ndarray            # N m s / rad
    force: np.ndarray         # N m, the actuator's force limit
    fall_tilt: float | None = None  # rad, the task's fall angle (None: none)
    floating: bool = False


def joint_model(model: Any, joint_names: Sequence[str], actuator_names: Sequence[str], home, scale: float,
                clip: tuple[float, float], fall_tilt: float | None, root_body: str | None) -> JointModel:
    """The :class:`JointModel` of ``joint_names`` (driven by ``actuator_names``) in a ``mujoco.MjModel``.

    Kp is ``gainprm[0]`` and Kd ``-biasprm[2]`` of each position actuator (``biasprm[1] == -kp``).
    """
    import mujoco

    def ids(kind, names, what):
        found = [mujoco.mj_name2id(model, kind, n) for n in names]
        missing = [n for n, i in zip(names, found) if i < 0]
        if missing:
            raise ConfigError(f"safety: the model has no {what} named {missing}")
        return np.asarray(found, dtype=np.int64)

    j = ids(mujoco.mjtObj.mjOBJ_JOINT, joint_names, "joint")
    a = ids(mujoco.mjtObj.mjOBJ_ACTUATOR, actuator_names, "actuator")
    limited = model.jnt_limited[j].astype(bool)
    ctrl = model.actuator_ctrllimited[a].astype(bool)
    kp = model.actuator_gainprm[a, 0].astype(np.float64)
    position = (np.isclose(model.actuator_biasprm[a, 1], -kp) & (kp > 0)
                & (model.actuator_gaintype[a] == mujoco.mjtGain.mjGAIN_FIXED)
                & (model.actuator_biastype[a] == mujoco.mjtBias.mjBIAS_AFFINE))
    if not position.all():
        bad = [actuator_names[i] for i in np.flatnonzero(~position)]
        raise ConfigError(f"safety: actuators {bad} are not position actuators; the guard works on joint position targets")
    floating = False
    if root_body is not None:
        body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, root_body)
        floating = body >= 0 and any(model.jnt_bodyid[k] == body and model.jnt_type[k] == mujoco.mjtJoint.mjJNT_FREE
                                     for k in range(model.njnt))
    return JointModel(
        names=tuple(joint_names), home=np.asarray(home, np.float64).copy(), scale=float(scale),
        clip=(float(clip[0]), float(clip[1])),
        range_low=np.where(limited, model.jnt_range[j, 0], -np.inf), range_high=np.where(limited, model.jnt_range[j, 1], np.inf),
        ctrl_low=np.where(ctrl, model.actuator_ctrlrange[a, 0], -np.inf), ctrl_high=np.where(ctrl, model.actuator_ctrlrange[a, 1], np.inf),
        kp=kp, kd=-model.actuator_biasprm[a, 2].astype(np.float64),
        force=actuator_torque_limit(model, a, j),
        fall_tilt=None if fall_tilt is None else float(fall_tilt), floating=bool(floating))


def actuator_torque_limit(model: Any, actuators: np.ndarray, joints: np.ndarray) -> np.ndarray:
    """N m each actuator may exert on its joint: the smaller of its ``forcerange`` and the joint's
    ``actuatorfrcrange`` (MuJoCo clamps to both), each as its larger magnitude; ``inf`` where neither is set."""
    force = np.where(model.actuator_forcelimited[actuators].astype(bool),
                     np.max(np.abs(model.actuator_forcerange[actuators]), axis=1), np.inf)
    joint = np.where(model.jnt_actfrclimited[joints].astype(bool),
                     np.max(np.abs(model.jnt_actfrcrange[joints]), axis=1), np.inf)
    return np.minimum(force, joint)


def joint_model_from_spec(spec: Any, model: Any, gains: str = "spec") -> JointModel:
    """The :class:`JointModel` of a deploy spec's action, read from ``model`` (the robot's MJCF).

    ``gains`` (:data:`GAINS`): ``"spec"`` (default) takes Kp and Kd from the spec's ``action.kp`` /
    ``action.kd``, the gains the robot runtime commands, so the torque estimate is the motor driver's
    whatever gains the MJCF's servos declare (the model's where the spec has none); ``"model"`` keeps
    the model's position actuators' gains (a simulation that drives the model's own servos).
    """
    if gains not in GAINS:
        raise ConfigError(f"safety: gains must be one of {list(GAINS)}, got {gains!r}")
    a = spec.action
    if a.mode != "home_offset":
        raise ConfigError(f"safety: the guard maps home_offset actions (target = home + scale * action); "
                          f"{spec.task.id}'s actions are {a.mode}")
    joints = joint_model(model, a.joint_names, a.actuator_names, a.home, a.scale, a.clip, spec.episode.max_tilt,
                         spec.model.root_body)
    if gains == "model" or a.kp is None or a.kd is None:
        return joints
    kp, kd = np.asarray(a.kp, np.float64), np.asarray(a.kd, np.float64)
    if kp.shape != joints.kp.shape or kd.shape != joints.kd.shape:
        raise ConfigError(f"safety: the spec's action.kp / action.kd have {kp.size} / {kd.size} gains; the action "
                          f"drives {joints.kp.size} joints")
    return dataclasses.replace(joints, kp=kp.copy(), kd=kd.copy())


# --- resolved limits ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SafetyLimits:
    """A :class:`SafetyConfig` resolved on a :class:`JointModel`: ``(J,)`` arrays, ``inf`` where off."""

    config: SafetyConfig
    names: tuple[str, ...]
    home: np.ndarray
    scale: float
    clip: tuple[float, float]
    low: np.ndarray           # position limits (soft range, action reach, ctrlrange)
    high: np.ndarray
    max_step: np.ndarray      # rad per control step
    kp: np.ndarray
    kd: np.ndarray
    tau: np.ndarray           # N m the estimate may reach
    step_tau: np.ndarray      # N m the torque step holds the estimate to: tau where it is below the motor's own clamp, else inf
    max_qvel: np.ndarray      # rad/s
    qvel_steps: int           # consecutive control steps over max_qvel that trip
    cos_tilt: float           # trip below this cos(tilt); -inf: off
    stale_steps: int          # trip after more than this many steps without a new observation; -1: off
    damping: bool             # safe mode: damping (else hold)
    floating: bool            # a floating base: the tilt watchdog reads its orientation
    safe_kd: np.ndarray       # N m s/rad in safe mode
    start: np.ndarray = field(repr=False)  # the previous target at an episode's start: home, within the limits
    dt: float = 0.02

    @property
    def size(self) -> int:
        return len(self.names)

    @property
    def torque_step(self) -> np.ndarray:
        """Per joint, whether the torque step moves its target (its limit is below the motor's own clamp)."""
        return np.isfinite(self.step_tau)


def _resolve(value: Any, names: tuple[str, ...], key: str, default: np.ndarray) -> np.ndarray:
    """A per-joint key (number, list, mapping or ``None``) as a ``(J,)`` array over ``default``."""
    out = np.array(default, dtype=np.float64, copy=True)
    if value is None:
        return out
    if isinstance(value, dict):
        for pattern, v in value.items():
            hit = [i for i, n in enumerate(names) if n == pattern or fnmatch.fnmatchcase(n, pattern)]
            if not hit:
                raise ConfigError(f"safety.{key}: no joint matches {pattern!r}; the joints are {list(names)}")
            out[hit] = v
        return out
    if isinstance(value, tuple):
        if len(value) != len(names):
            raise ConfigError(f"safety.{key} has {len(value)} values; the action has {len(names)} joints {list(names)}")
        return np.asarray(value, dtype=np.float64)
    out[:] = value
    return out


def resolve_limits(config: SafetyConfig | Mapping[str, Any] | None, joints: JointModel, dt: float) -> SafetyLimits:
    """The guard's per-joint numbers for ``joints`` at control period ``dt`` (s); ``ConfigError`` naming the joint
    when they contradict each other (e.g. soft limits that leave no target the action can reach)."""
    cfg = safety_config(config)
    names, n = joints.names, len(joints.names)
    mid = 0.5 * (joints.range_low + joints.range_high)
    half = 0.5 * (joints.range_high - joints.range_low) * cfg.position_fraction
    with np.errstate(invalid="ignore"):
        soft_low = np.where(np.isfinite(half), mid - half, -np.inf)
        soft_high = np.where(np.isfinite(half), mid + half, np.inf)
    soft_low = _resolve(cfg.position_low, names, "position_low", soft_low)
    soft_high = _resolve(cfg.position_high, names, "position_high", soft_high)
    reach_low, reach_high = joints.home + joints.scale * joints.clip[0], joints.home + joints.scale * joints.clip[1]
    low = np.maximum.reduce([soft_low, reach_low, joints.ctrl_low])
    high = np.minimum.reduce([soft_high, reach_high, joints.ctrl_high])
    bad = np.flatnonzero(~(low <= high))
    if bad.size:
        i = int(bad[0])
        raise ConfigError(f"safety: joint {names[i]!r} has no allowed target: soft limits [{soft_low[i]:.4g}, "
                          f"{soft_high[i]:.4g}], the action reaches [{reach_low[i]:.4g}, {reach_high[i]:.4g}], "
                          f"ctrlrange [{joints.ctrl_low[i]:.4g}, {joints.ctrl_high[i]:.4g}] rad")
    default_step = SafetyConfig.max_target_step if isinstance(cfg.max_target_step, dict) else np.inf
    max_step = _resolve(cfg.max_target_step, names, "max_target_step", np.full(n, default_step))
    tau = joints.force * cfg.torque_fraction if cfg.torque_fraction is not None else np.full(n, np.inf)
    tau = _resolve(cfg.torque_limit, names, "torque_limit", tau)
    default_qvel = SafetyConfig.max_joint_velocity if isinstance(cfg.max_joint_velocity, dict) else np.inf
    max_qvel = _resolve(cfg.max_joint_velocity, names, "max_joint_velocity", np.full(n, default_qvel))
    tilt = cfg.max_tilt
    if tilt == "task":
        tilt = joints.fall_tilt if joints.floating else None
    elif tilt is not None and not joints.floating:
        raise ConfigError("safety.max_tilt needs a floating-base robot; this one has none (set max_tilt: null)")
    require(dt > 0, f"safety: the control period must be > 0 s, got {dt}")
    stale = -1 if cfg.stale_observation_s is None else int(math.floor(cfg.stale_observation_s / dt + 1e-9))
    return SafetyLimits(
        config=cfg, names=names, home=joints.home.copy(), scale=joints.scale, clip=joints.clip, low=low, high=high,
        max_step=max_step, kp=joints.kp.copy(), kd=joints.kd.copy(), tau=tau,
        step_tau=np.where(motor_lets_through(tau, joints.force), tau, np.inf),
        max_qvel=max_qvel, qvel_steps=cfg.joint_velocity_steps,
        cos_tilt=-np.inf if tilt is None else math.cos(tilt), stale_steps=stale, damping=cfg.safe_mode == "damping",
        floating=joints.floating,
        safe_kd=_resolve(cfg.safe_damping, names, "safe_damping", joints.kd), start=np.clip(joints.home, low, high),
        dt=float(dt))


def motor_lets_through(tau: np.ndarray, force: np.ndarray) -> np.ndarray:
    """Per joint, whether the actuator's own force limit ``force`` (N m) is above the guard's ``tau``: only there must
    the guard move a target to keep the torque within ``tau``; elsewhere the motor clamps at ``tau`` or below itself
    (a limit within a relative 1e-9 of the motor's counts as the motor's)."""
    return np.isfinite(tau) & (tau < force * (1.0 - 1e-9))


def spec_section(config: SafetyConfig | Mapping[str, Any] | None, joints: JointModel, dt: float,
                 source: str) -> SafetyConfig:
    """The section ``unilab export`` writes into a deploy spec: ``config`` resolved on ``joints``.

    Every limit the guard uses is written as a number, per joint by name where it is per joint
    (``position_low`` / ``position_high``: the allowed targets, ``torque_limit``,
    ``max_target_step``, ``max_joint_velocity``, ``safe_damping``; a joint whose limit is
    unlimited is left out and keeps the robot model's), and ``max_tilt: task`` as the task's
    fall angle, so the guard on the robot runs the training model's numbers whatever the
    robot's MJCF declares. :func:`resolve_limits` of the result on the same model gives the
    same limits, bit for bit. ``source`` says where they came from.
    """
    cfg = safety_config(config)
    L = resolve_limits(cfg, joints, dt)

    def named(values: np.ndarray) -> dict[str, float] | None:
        finite = {n: float(v) for n, v in zip(L.names, values) if np.isfinite(v)}
        return finite or None

    tilt = cfg.max_tilt
    if tilt == "task":
        tilt = joints.fall_tilt if joints.floating else None
    return safety_config({**cfg.to_dict(), "position_low": named(L.low), "position_high": named(L.high),
                          "max_target_step": named(L.max_step), "torque_limit": named(L.tau),
                          "max_joint_velocity": named(L.max_qvel), "max_tilt": tilt, "safe_damping": named(L.safe_kd),
                          "source": source})


# --- the per-row functions (N robots at once; the runtime is N = 1) -------------------------------


@dataclass
class GuardState:
    """Per-row state the guard carries between control steps (all ``(N, ...)`` arrays)."""

    prev: np.ndarray      # (N, J) the last target sent
    hold: np.ndarray      # (N, J) the pose a latched row holds
    latched: np.ndarray   # (N,) bool
    reason: np.ndarray    # (N,) int8, index + 1 into REASONS
    stale: np.ndarray     # (N,) int64 steps since the last new observation
    obs_bad: np.ndarray   # (N,) bool, the latest observation held a NaN or inf
    fast: np.ndarray      # (N,) int64 control steps in a row with a joint over max_qvel
    counts: np.ndarray    # (N, 4) int64 totals of COUNTS since the state was made

    @classmethod
    def empty(cls, limits: SafetyLimits, n: int) -> "GuardState":
        j = limits.size
        return cls(prev=np.tile(limits.start, (n, 1)), hold=np.tile(limits.start, (n, 1)), latched=np.zeros(n, bool),
                   reason=np.zeros(n, np.int8), stale=np.zeros(n, np.int64), obs_bad=np.zeros(n, bool),
                   fast=np.zeros(n, np.int64),
                   counts=np.zeros((n, len(COUNTS)), np.int64))


def start_rows(limits: SafetyLimits, state: GuardState, rows: np.ndarray) -> None:
    """A new episode on ``rows`` (mask): unlatch, the previous target is home (within the limits)."""
    state.prev[rows] = limits.start
    state.hold[rows] = limits.start
    state.latched[rows] = False
    state.reason[rows] = 0
    state.stale[rows] = 0
    state.obs_bad[rows] = False
    state.fast[rows] = 0


def observe_rows(state: GuardState, obs: np.ndarray | None, new: np.ndarray, rows: np.ndarray) -> None:
    """The observation the policy got this control step on ``rows``; ``new`` marks rows whose reading is new."""
    if obs is not None:
        state.obs_bad[rows] = ~np.isfinite(obs[rows]).all(axis=1)
    fresh = rows & new
    state.stale[fresh] = 0
    state.stale[rows & ~new] += 1


def up_z(quat: np.ndarray) -> np.ndarray:
    """cos(tilt) of base quaternions ``(..., 4)`` (w, x, y, z): the world z of the body's z axis."""
    x, y = quat[..., 1], quat[..., 2]
    with np.errstate(over="ignore", invalid="ignore"):
        return 1.0 - 2.0 * (x * x + y * y)


def guard_rows(limits: SafetyLimits, state: GuardState, targets: np.ndarray, q: np.ndarray, qd: np.ndarray,
               upz: np.ndarray | None, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Guard ``(N, J)`` joint targets given the joints' ``q``, ``qd`` and the bases' ``upz`` (:func:`up_z`).

    Returns ``(targets out, hits)``: ``hits`` is ``(N, 4)``, this step's :data:`COUNTS` per row
    (joints clipped by each step, 1 where a watchdog tripped). ``active`` rows only; the others
    get their previous target and no counts (e.g. rows the env resets in this step).
    """
    L = limits
    n = targets.shape[0]
    none = np.zeros(n, bool)
    bad_state = ~(np.isfinite(q).all(axis=1) & np.isfinite(qd).all(axis=1))
    if upz is not None:
        bad_state |= ~np.isfinite(upz)
    fast = (np.abs(qd) > L.max_qvel).any(axis=1)
    state.fast[active] = np.where(fast, state.fast + 1, 0)[active]
    conditions = (  # in REASONS order
        upz < L.cos_tilt if upz is not None else none,
        state.fast >= L.qvel_steps,
        ~np.isfinite(targets).all(axis=1),
        state.obs_bad | bad_state,
        state.stale > L.stale_steps if L.stale_steps >= 0 else none,
    )
    reason = np.zeros(n, np.int8)
    for code in range(len(REASONS), 0, -1):  # the first reason in REASONS order wins
        reason[conditions[code - 1]] = code
    trip = active & ~state.latched & (reason > 0)
    if trip.any():
        state.latched |= trip
        state.reason[trip] = reason[trip]
        pose = np.where(np.isfinite(q), q, state.prev)
        state.hold[trip] = np.clip(pose[trip], L.low, L.high)
    ok = active & ~state.latched
    t = np.where(np.isfinite(targets), targets, state.prev)
    with np.errstate(invalid="ignore", over="ignore"):
        slack = L.kd * qd
        lo = q + (slack - L.step_tau) / L.kp
        hi = q + (slack + L.step_tau) / L.kp
        t1 = np.clip(t, np.where(np.isfinite(lo), lo, -np.inf), np.where(np.isfinite(hi), hi, np.inf))
    t2 = np.clip(t1, state.prev - L.max_step, state.prev + L.max_step)
    t3 = np.clip(t2, L.low, L.high)
    out = np.where(ok[:, None], t3, np.where(state.latched[:, None], state.hold, state.prev))
    hits = np.zeros((n, len(COUNTS)), np.int64)
    hits[:, 0] = (t3 != t2).sum(axis=1)
    hits[:, 1] = (t2 != t1).sum(axis=1)
    hits[:, 2] = (t1 != t).sum(axis=1)
    hits[~ok, :3] = 0
    hits[:, 3] = trip
    state.prev[active] = out[active]
    state.counts += hits
    return out, hits


def gain_scales(limits: SafetyLimits, latched: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(kp factor, kd factor)``, ``(N, J)``, on the model's gains: 1 unless latched; latched rows get
    Kp 0 (damping) or 1 (hold) and Kd ``safe_kd / kd``."""
    n = latched.shape[0]
    kp = np.ones((n, limits.size))
    kd = np.ones((n, limits.size))
    if latched.any():
        kp[latched] = 0.0 if limits.damping else 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            kd[latched] = np.where(limits.kd > 0, limits.safe_kd / limits.kd, 1.0)
    return kp, kd


def action_to_targets(limits: SafetyLimits, action: np.ndarray) -> np.ndarray:
    """``home + scale * clip(action)`` in float64 (a NaN stays NaN, for the watchdog)."""
    return limits.home + limits.scale * np.clip(np.asarray(action, dtype=np.float64), *limits.clip)


def targets_to_action(limits: SafetyLimits, targets: np.ndarray) -> np.ndarray:
    """The action (float32, within the clip) whose target is ``targets``."""
    return np.clip((targets - limits.home) / limits.scale, *limits.clip).astype(np.float32)


def remembered_action(action: np.ndarray, low, high) -> np.ndarray:
    """What the controller keeps as its last action under the guard: the action clipped, a NaN as 0."""
    return np.clip(np.nan_to_num(np.asarray(action, dtype=np.float32), nan=0.0), low, high)


# --- one robot -----------------------------------------------------------------------------------


class SafetyGuard:
    """The guard for one robot (a robot-side program, ``unilab play``): the functions above on one row.

    ``guard = SafetyGuard.from_spec(spec, model)`` (the spec's ``safety`` section unless
    ``config`` is given), ``guard.reset()`` at each episode start, then each control step::

        targets = guard.targets(targets, q, qd, base_quat, obs=obs, obs_new=fresh)  # joint space
        kp, kd = guard.gains()                                               # to command

    or ``guard.action(action, ...)`` for an action in, an action out (home_offset mapping).
    """

    def __init__(self, limits: SafetyLimits) -> None:
        self.limits = limits
        self.state = GuardState.empty(limits, 1)
        self.hits = np.zeros(len(COUNTS), np.int64)
        self._one = np.ones(1, bool)

    @classmethod
    def from_spec(cls, spec: Any, model: Any, config: SafetyConfig | Mapping[str, Any] | None = None,
                  gains: str = "spec") -> "SafetyGuard":
        """The guard of ``spec``'s action on ``model`` (the spec's ``safety`` section unless ``config`` is given);
        ``gains``: whose Kp / Kd the motors apply (:func:`joint_model_from_spec`; the spec's by default)."""
        section = config if config is not None else getattr(spec, "safety", None)
        return cls(resolve_limits(section, joint_model_from_spec(spec, model, gains), spec.timing.control_dt))

    def reset(self) -> None:
        """A new episode: unlatched, the previous target at home."""
        start_rows(self.limits, self.state, self._one)

    def targets(self, targets, q, qd, base_quat=None, obs=None, obs_new: bool = True) -> np.ndarray:
        """The guarded joint targets (rad, float64 ``(J,)``) for this control step."""
        s = self.state
        observe_rows(s, None if obs is None else np.asarray(obs, dtype=np.float64).reshape(1, -1),
                     np.array([bool(obs_new)]), self._one)
        upz = None if not self.limits.floating else up_z(np.asarray(base_quat, dtype=np.float64).reshape(1, 4))
        out, hits = guard_rows(self.limits, s, np.asarray(targets, dtype=np.float64).reshape(1, -1),
                               np.asarray(q, dtype=np.float64).reshape(1, -1), np.asarray(qd, dtype=np.float64).reshape(1, -1),
                               upz, self._one)
        self.hits = hits[0]
        return out[0]

    def action(self, action, q, qd, base_quat=None, obs=None, obs_new: bool = True) -> np.ndarray:
        """:meth:`targets` for an action: in ``action.clip`` units, out as float32."""
        out = self.targets(action_to_targets(self.limits, np.asarray(action).reshape(-1)), q, qd, base_quat, obs, obs_new)
        return targets_to_action(self.limits, out)

    def gains(self) -> tuple[np.ndarray, np.ndarray]:
        """``(kp, kd)`` to command now: the guard's (by default the spec's), or the safe mode's once latched."""
        kp, kd = gain_scales(self.limits, self.state.latched)
        return self.limits.kp * kp[0], self.limits.kd * kd[0]

    @property
    def latched(self) -> bool:
        return bool(self.state.latched[0])

    @property
    def reason(self) -> str | None:
        """The watchdog that latched the safe mode (a name of :data:`REASONS`), or ``None``."""
        code = int(self.state.reason[0])
        return REASONS[code - 1] if code else None

    @property
    def counts(self) -> dict[str, int]:
        """Totals since the guard was made: joints clipped by each limit, watchdog trips."""
        return {name: int(v) for name, v in zip(COUNTS, self.state.counts[0])}
