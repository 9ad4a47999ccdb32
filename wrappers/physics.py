"""Physics gaps: ``DomainRandomization``, ``MotorStrength``, ``RandomPush``.

Model parameters become per-env through ``mujoco.batch.Batch.expand`` and are
redrawn at the start of every episode (after the reset, before the episode's
first physics step, in both autoreset modes). Fields that ``mj_setConst``
reads (``body_mass``, ``body_inertia``, ``body_ipos``, ``dof_armature``) are
followed by ``Batch.set_const(ids)`` so that the derived constants
(``body_subtreemass``, ``dof_invweight0``, ``actuator_acc0`` ...) follow; it
leaves the simulation state untouched.

Actuator gains are shared: ``DomainRandomization`` scales Kp/Kd and
``MotorStrength`` scales the whole force of the same actuators. Both write
through one :class:`ModelFields` per batch, which keeps the nominal values and
composes ``value = nominal * product(factors)``, so stacking them multiplies.
For a position actuator (``gainprm[0] = kp``, ``biasprm[1] = -kp``,
``biasprm[2] = -kd``) Kp scales ``gainprm[0]`` and ``biasprm[1]``, Kd scales
``biasprm[2]``.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Any, Mapping

import mujoco
import numba as nb
import numpy as np
from gymnasium.vector import VectorEnv

from unilab_envs.core.rng import uniform, uniform_range
from wrappers._base import Sim2RealWrapper, row_kernel, as_range, make_config, require, require_range

# --- shared per-env model fields ----------------------------------------------


class ModelFields:
    """Per-env model fields of one batch, written by several wrappers.

    ``value[ids] = nominal[ids] * prod(factors[ids])`` where each owner holds
    one ``(N, *field_shape)`` factor array (ones until it writes).
    """

    def __init__(self, batch: Any, model: mujoco.MjModel) -> None:
        self.batch = batch
        self.model = model
        self._nominal: dict[str, np.ndarray] = {}
        self._factors: dict[str, dict[str, np.ndarray]] = {}

    def nominal(self, name: str) -> np.ndarray:
        """The ``(N, ...)`` values before any wrapper wrote (read once)."""
        if name not in self._nominal:
            current = self.batch.expanded(name)
            if current is None:
                current = np.broadcast_to(getattr(self.model, name), (self.batch.nsim, *getattr(self.model, name).shape))
            self._nominal[name] = np.array(current, dtype=np.float64)
        return self._nominal[name]

    def factor(self, name: str, owner: str) -> np.ndarray:
        """``owner``'s factor array on field ``name`` (created as ones)."""
        nominal = self.nominal(name)
        factors = self._factors.setdefault(name, {})
        if owner not in factors:
            factors[owner] = np.ones_like(nominal)
        return factors[owner]

    def commit(self, name: str, ids: np.ndarray) -> None:
        """Write rows ``ids`` of field ``name`` into the batch."""
        value = self.nominal(name)[ids].copy()
        for factor in self._factors.get(name, {}).values():
            value *= factor[ids]
        self.batch.expand(name)[ids] = value


_FIELDS: "weakref.WeakKeyDictionary[Any, ModelFields]" = weakref.WeakKeyDictionary()


def model_fields(env: VectorEnv) -> ModelFields:
    """The :class:`ModelFields` of ``env``'s batch (one per batch)."""
    base = env.unwrapped
    batch = getattr(base, "batch", None)
    if batch is None:
        raise ValueError(f"{type(base).__name__} has no mujoco.batch.Batch (env.unwrapped.batch); physics wrappers need a UniLab env")
    if batch not in _FIELDS:
        _FIELDS[batch] = ModelFields(batch, base.model)
    return _FIELDS[batch]


def _affine_actuators(model: mujoco.MjModel) -> np.ndarray:
    """Actuators whose force is ``gain * ctrl + bias`` with fixed gain (position, velocity, motor)."""
    fixed = model.actuator_gaintype == mujoco.mjtGain.mjGAIN_FIXED
    bias_ok = np.isin(model.actuator_biastype, (mujoco.mjtBias.mjBIAS_NONE, mujoco.mjtBias.mjBIAS_AFFINE))
    return np.flatnonzero(fixed & bias_ok).astype(np.int64)


def _body_id(env: VectorEnv, body: str | None) -> int:
    base = env.unwrapped
    name = body if body is not None else getattr(getattr(base, "task", None), "tracking_body", None)
    if name is None:
        raise ValueError("name the body (body=...): the task names no tracking body")
    index = mujoco.mj_name2id(base.model, mujoco.mjtObj.mjOBJ_BODY, name)
    if index < 0:
        raise ValueError(f"the model has no body named {name!r}")
    return int(index)


# --- kernels ---------------------------------------------------------------


@nb.njit(cache=True)
def _draw_uniform(started, rng, low, high, out):
    for i in range(started.shape[0]):
        if started[i]:
            for k in range(low.shape[0]):
                out[i, k] = uniform_range(rng, i, low[k], high[k])


@row_kernel
def _scale_actions(actions, out, gain):
    for i in nb.prange(actions.shape[0]):
        for j in range(actions.shape[1]):
            out[i, j] = actions[i, j] * gain[i, j]


@nb.njit(cache=True)
def _interval_steps(rng, i, low, high):
    return max(np.int64(1), np.int64(round(uniform_range(rng, i, low, high))))


@nb.njit(cache=True)
def _restart_pushes(started, rng, countdown, remaining, xfrc, body, low, high, force_mode, kick, kick_age):
    for i in range(started.shape[0]):
        if started[i]:
            countdown[i] = _interval_steps(rng, i, low, high)
            remaining[i] = 0
            kick[i, 0] = 0.0
            kick[i, 1] = 0.0
            kick_age[i] = 0
            if force_mode:
                xfrc[i, body, 0] = 0.0
                xfrc[i, body, 1] = 0.0


@nb.njit(cache=True)
def _push(rng, countdown, remaining, pushed, qvel, dof, xfrc, body, interval, low, high, duration, force_mode, kick, kick_age):
    for i in range(countdown.shape[0]):
        pushed[i] = False
        kick_age[i] += 1
        if remaining[i] > 0:
            remaining[i] -= 1
            if remaining[i] == 0:
                xfrc[i, body, 0] = 0.0
                xfrc[i, body, 1] = 0.0
        countdown[i] -= 1
        if countdown[i] <= 0:
            countdown[i] = _interval_steps(rng, i, interval[0], interval[1])
            angle = 2.0 * math.pi * uniform(rng, i)
            size = uniform_range(rng, i, low, high[i])
            pushed[i] = True
            kick[i, 0] = size * math.cos(angle)
            kick[i, 1] = size * math.sin(angle)
            kick_age[i] = 0
            if force_mode:
                xfrc[i, body, 0] = kick[i, 0]
                xfrc[i, body, 1] = kick[i, 1]
                remaining[i] = duration
            else:
                qvel[i, dof] += kick[i, 0]
                qvel[i, dof + 1] += kick[i, 1]


# --- domain randomization ------------------------------------------------------

#: the model fields whose nominal values each range scales
_NOMINAL_FIELDS = {
    "mass_scale": ("body_mass", "body_inertia"), "added_mass": ("body_mass", "body_inertia"), "com_offset": ("body_ipos",),
    "damping_scale": ("dof_damping",), "armature_scale": ("dof_armature",), "frictionloss_scale": ("dof_frictionloss",),
}
_RANGES = ("friction", "mass_scale", "added_mass", "com_offset", "kp_scale", "kd_scale", "damping_scale", "armature_scale", "frictionloss_scale")


@dataclass(frozen=True)
class DomainRandomizationConfig:
    """Uniform ranges ``(low, high)`` drawn per env (and per element) at each reset; ``None`` skips one.

    Attributes:
        friction: sliding friction of every geom (absolute; MuJoCo takes the
            max of a pair, so this is the contact friction).
        mass_scale: factor on each body's mass and inertia, drawn per body.
        added_mass: kg added to ``base_body`` (inertia scaled with it).
        com_offset: metres added to ``base_body``'s centre of mass, per axis.
        kp_scale, kd_scale: factors on each position actuator's Kp and Kd.
        damping_scale, armature_scale, frictionloss_scale: factors on each
            dof's damping, armature and friction loss.
        base_body: body of ``added_mass`` and ``com_offset``; ``None``: the
            task's tracking body (the trunk / pelvis / base).
    """

    friction: Any = (0.4, 1.0)
    mass_scale: Any = (0.9, 1.1)
    added_mass: Any = (-1.0, 1.0)
    com_offset: Any = (-0.05, 0.05)
    kp_scale: Any = None
    kd_scale: Any = None
    damping_scale: Any = None
    armature_scale: Any = (1.0, 1.05)
    frictionloss_scale: Any = (0.9, 1.1)
    base_body: str | None = None

    def __post_init__(self) -> None:
        for name in _RANGES:
            object.__setattr__(self, name, as_range(getattr(self, name), name))

    def validate(self) -> None:
        for name in _RANGES:
            value = getattr(self, name)
            if value is None:
                continue
            require(all(math.isfinite(v) for v in value), f"{name} must be finite, got {value}")
            require_range(name, value)
            if name not in ("added_mass", "com_offset"):
                require(value[0] >= 0, f"{name} must be >= 0, got {value}")


class DomainRandomization(Sim2RealWrapper):
    """Per-env physics parameters drawn at every reset (see :class:`DomainRandomizationConfig`).

    ``params[name]`` is the ``(N, size)`` array of the values drawn for each
    enabled range (``friction`` (N, 1), ``mass_scale`` (N, nbody),
    ``added_mass`` (N, 1), ``com_offset`` (N, 3), ``kp_scale``/``kd_scale``
    (N, actuators), ``*_scale`` of dofs (N, nv)).
    """

    SECTION = "domain_randomization"
    CONFIG = DomainRandomizationConfig  # the section's keys: its fields (unilab_robot.profiles.SECTION_KEYS)
    STATE = ("_draws", "_gain", "_bias")

    def __init__(self, env: VectorEnv, config: DomainRandomizationConfig | Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(env)
        self.config = cfg = make_config(DomainRandomizationConfig, config, kwargs)
        self._fields = model_fields(env)
        model = env.unwrapped.model
        self._base = _body_id(env, cfg.base_body)
        self._actuators = _affine_actuators(model)
        if (cfg.kp_scale or cfg.kd_scale) and self._actuators.size == 0:
            raise ValueError("kp_scale/kd_scale need fixed-gain affine (position) actuators; this model has none")
        sizes = {
            "friction": 1, "mass_scale": model.nbody, "added_mass": 1, "com_offset": 3,
            "kp_scale": self._actuators.size, "kd_scale": self._actuators.size,
            "damping_scale": model.nv, "armature_scale": model.nv, "frictionloss_scale": model.nv,
        }  # fmt: skip
        low, high, self._slices = [], [], {}
        for name in _RANGES:
            value = getattr(cfg, name)
            if value is not None:
                self._slices[name] = slice(len(low), len(low) + sizes[name])
                low += [value[0]] * sizes[name]
                high += [value[1]] * sizes[name]
        self._configured = (np.array(low, np.float64), np.array(high, np.float64))
        self._low, self._high = self._configured[0].copy(), self._configured[1].copy()
        self._unperturbed = np.ones(len(low))  # factors: 1; offsets: 0; friction: its range's middle
        for name in ("added_mass", "com_offset"):
            if name in self._slices:
                self._unperturbed[self._slices[name]] = 0.0
        if "friction" in self._slices:
            self._unperturbed[self._slices["friction"]] = sum(cfg.friction) / 2
        self._draws = np.zeros((self.num_envs, len(low)))
        self.params = {name: self._draws[:, s] for name, s in self._slices.items()}
        self._set_const = any(n in self._slices for n in ("mass_scale", "added_mass", "com_offset", "armature_scale"))
        if "kp_scale" in self._slices or "kd_scale" in self._slices:
            self._gain = self._fields.factor("actuator_gainprm", "domain_randomization")
            self._bias = self._fields.factor("actuator_biasprm", "domain_randomization")
        # read the nominal values now, before a restored state (set_state) writes randomized ones
        for name, fields in _NOMINAL_FIELDS.items():
            if name in self._slices:
                for field in fields:
                    self._fields.nominal(field)

    def _on_start(self, started):
        _draw_uniform(started, self._rng, self._low, self._high, self._draws)
        ids = np.flatnonzero(started).astype(np.int32)
        if ids.size:
            self._apply(ids)

    def _apply_profile_level(self, level):
        """Each range shrinks towards its unperturbed value (a factor 1, an offset 0; friction,
        an absolute value, towards the middle of its range) as ``level`` goes to 0."""
        for live, configured in zip((self._low, self._high), self._configured):
            live[:] = self._unperturbed + level * (configured - self._unperturbed)

    def critic_groups(self):
        return {f"randomized_{name}": draws for name, draws in self.params.items()}

    def _apply(self, ids: np.ndarray) -> None:
        fields, p, b = self._fields, self.params, self._base
        batch = fields.batch
        if "friction" in p:
            live = batch.expand("geom_friction")
            live[ids, :, 0] = p["friction"][ids]
        if "mass_scale" in p or "added_mass" in p:
            mass0, inertia0 = fields.nominal("body_mass")[ids], fields.nominal("body_inertia")[ids]
            mass = mass0 * p["mass_scale"][ids] if "mass_scale" in p else mass0.copy()
            if "added_mass" in p:
                mass[:, b] = np.maximum(mass[:, b] + p["added_mass"][ids, 0], 0.05 * mass0[:, b])
            ratio = np.divide(mass, mass0, out=np.ones_like(mass), where=mass0 > 0)
            batch.expand("body_mass")[ids] = mass
            batch.expand("body_inertia")[ids] = inertia0 * ratio[:, :, None]
        if "com_offset" in p:
            batch.expand("body_ipos")[ids, b] = fields.nominal("body_ipos")[ids, b] + p["com_offset"][ids]
        for name in ("damping_scale", "armature_scale", "frictionloss_scale"):
            if name in p:
                (field,) = _NOMINAL_FIELDS[name]
                batch.expand(field)[ids] = fields.nominal(field)[ids] * p[name][ids]
        if "kp_scale" in p or "kd_scale" in p:
            rows, acts = ids[:, None], self._actuators[None, :]
            if "kp_scale" in p:
                self._gain[rows, acts, 0] = p["kp_scale"][ids]
                self._bias[rows, acts, 1] = p["kp_scale"][ids]
            if "kd_scale" in p:
                self._bias[rows, acts, 2] = p["kd_scale"][ids]
            fields.commit("actuator_gainprm", ids)
            fields.commit("actuator_biasprm", ids)
        if self._set_const:
            batch.set_const(ids)


# --- motor strength -------------------------------------------------------------


@dataclass(frozen=True)
class MotorStrengthConfig:
    """A per-env gain on the actuators, drawn at each reset.

    Attributes:
        strength: ``(low, high)`` of the gain.
        target: ``"torque"`` scales each actuator's force (its gain and bias,
            so Kp and Kd together, through ``Batch.expand``); ``"action"``
            scales the commanded action.
        per_actuator: one gain per actuator (else one per env).
    """

    strength: Any = (0.9, 1.1)
    target: str = "torque"
    per_actuator: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "strength", as_range(self.strength, "strength"))

    def validate(self) -> None:
        require(self.strength is not None, "strength must be a (low, high) range")
        require_range("strength", self.strength)
        require(self.strength[0] >= 0, f"strength must be >= 0, got {self.strength}")
        require(self.target in ("torque", "action"), f"target must be 'torque' or 'action', got {self.target!r}")


class MotorStrength(Sim2RealWrapper):
    """Weaker or stronger motors per env: ``MotorStrength(env, strength=(0.9, 1.1))``; ``gain`` is ``(N, A)``."""

    SECTION = "motor_strength"
    CONFIG = MotorStrengthConfig  # the section's keys: its fields (unilab_robot.profiles.SECTION_KEYS)
    STATE = ("_draws", "gain", "_out", "_gain_f", "_bias_f")

    def __init__(self, env: VectorEnv, config: MotorStrengthConfig | Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(env)
        self.config = cfg = make_config(MotorStrengthConfig, config, kwargs)
        n = self.num_envs
        if cfg.target == "torque":
            self._fields = model_fields(env)
            self._actuators = _affine_actuators(env.unwrapped.model)
            require(self._actuators.size > 0, "MotorStrength(target='torque') needs fixed-gain affine actuators; this model has none")
            width = self._actuators.size
            self._gain_f = self._fields.factor("actuator_gainprm", "motor_strength")
            self._bias_f = self._fields.factor("actuator_biasprm", "motor_strength")
        else:
            width = int(np.prod(self.single_action_space.shape))
            self._out = np.zeros((n, width), np.float32)
        draws = width if cfg.per_actuator else 1
        self._low, self._high = np.full(draws, cfg.strength[0]), np.full(draws, cfg.strength[1])
        self._draws = np.ones((n, draws))
        self.gain = np.ones((n, width))

    def _apply_profile_level(self, level):
        """The strength range moves towards 1 (full-strength motors) as ``level`` goes to 0."""
        low, high = self.config.strength
        self._low[:], self._high[:] = 1.0 + level * (low - 1.0), 1.0 + level * (high - 1.0)

    def _on_start(self, started):
        _draw_uniform(started, self._rng, self._low, self._high, self._draws)
        self.gain[started] = self._draws[started]  # broadcasts one gain per env
        if self.config.target == "torque":
            ids = np.flatnonzero(started).astype(np.int32)
            if ids.size:
                rows, acts = ids[:, None], self._actuators[None, :]
                self._gain_f[rows, acts, 0] = self.gain[ids]
                for k in range(3):
                    self._bias_f[rows, acts, k] = self.gain[ids]
                self._fields.commit("actuator_gainprm", ids)
                self._fields.commit("actuator_biasprm", ids)

    def critic_groups(self):
        return {"motor_strength": self._draws}

    def _actions(self, actions):
        if self.config.target == "torque":
            return actions
        actions = self._check_actions(actions)
        _scale_actions(actions, self._out, self.gain)
        return self._out


# --- pushes ---------------------------------------------------------------------


@dataclass(frozen=True)
class RandomPushConfig:
    """Pushes at random intervals.

    Attributes:
        mode: ``"velocity"`` adds a horizontal kick to the root free joint's
            linear velocity (MuJoCo Playground, legged_gym, Isaac Lab);
            ``"force"`` applies a horizontal force on ``body`` through
            ``xfrc_applied`` for ``duration_s``.
        interval_s: ``(low, high)`` seconds between pushes, drawn per push.
        magnitude: ``(low, high)`` of the kick (m/s) or force (N), random direction.
        duration_s: how long a force push lasts (force mode).
        body: the pushed body; ``None``: the task's tracking body.
        levels: ``0``: every push is drawn from the whole ``magnitude`` range. ``L > 0``:
            a push curriculum. Each env has a level ``k`` in ``0..L`` (``0`` at the start)
            and draws its pushes from ``(low, low + (high - low) * k / L)``; an episode
            that runs to its time limit raises its env's level by one, a fall
            (``terminated``) lowers it by one. ``info["push_level"]`` is ``k / L``.
    """

    mode: str = "velocity"
    interval_s: Any = (5.0, 10.0)
    magnitude: Any = (0.1, 1.0)
    duration_s: float = 0.2
    body: str | None = None
    levels: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "interval_s", as_range(self.interval_s, "interval_s"))
        object.__setattr__(self, "magnitude", as_range(self.magnitude, "magnitude"))

    def validate(self) -> None:
        require(self.mode in ("velocity", "force"), f"mode must be 'velocity' or 'force', got {self.mode!r}")
        require(self.interval_s is not None and self.magnitude is not None, "interval_s and magnitude are required")
        require_range("interval_s", self.interval_s)
        require_range("magnitude", self.magnitude)
        require(self.interval_s[0] > 0, f"interval_s must be > 0, got {self.interval_s}")
        require(self.magnitude[0] >= 0, f"magnitude must be >= 0, got {self.magnitude}")
        require(self.duration_s > 0, f"duration_s must be > 0, got {self.duration_s}")
        require(isinstance(self.levels, int) and self.levels >= 0,
                f"levels must be an int >= 0 (0: no curriculum), got {self.levels!r}")


class RandomPush(Sim2RealWrapper):
    """Per-env pushes at random intervals (see :class:`RandomPushConfig`); ``info["pushed"]`` marks them."""

    SECTION = "random_push"
    CONFIG = RandomPushConfig  # the section's keys: its fields (unilab_robot.profiles.SECTION_KEYS)
    STATE = ("_countdown", "_remaining", "pushed", "level", "kick", "kick_age")

    def __init__(self, env: VectorEnv, config: RandomPushConfig | Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(env)
        self.config = cfg = make_config(RandomPushConfig, config, kwargs)
        base = env.unwrapped
        if getattr(base, "batch", None) is None:
            raise ValueError("RandomPush needs a UniLab env (env.unwrapped.batch)")
        model = base.model
        self._body = _body_id(env, cfg.body)
        self._dof = -1
        if cfg.mode == "velocity":
            free = [j for j in range(model.njnt) if model.jnt_bodyid[j] == self._body and model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
            if not free:
                raise ValueError(f"RandomPush(mode='velocity') needs a free joint on body {self._body}; use mode='force' for a fixed base")
            self._dof = int(model.jnt_dofadr[free[0]])
        self._qvel = base.batch.bind("qvel")
        self._xfrc = base.batch.bind("xfrc_applied")
        n = self.num_envs
        self._interval = np.array(cfg.interval_s) / self.dt
        self._low, self._high = float(cfg.magnitude[0]), float(cfg.magnitude[1])
        self._duration = max(1, int(round(cfg.duration_s / self.dt)))
        self._countdown = np.zeros(n, np.int64)
        self._remaining = np.zeros(n, np.int64)
        self.pushed = np.zeros(n, bool)
        self.kick = np.zeros((n, 2))  # the last push (m/s, or N in force mode) along world x, y; 0 before the first
        self.kick_age = np.zeros(n, np.int64)  # control steps since it
        self.level = np.zeros(n, np.int64)  # push curriculum level per env (config.levels > 0)
        self._whole_range = np.full(n, self._high)  # every env's limit without a curriculum

    def _on_start(self, started):
        _restart_pushes(started, self._rng, self._countdown, self._remaining, self._xfrc, self._body, self._interval[0], self._interval[1], self.config.mode == "force", self.kick, self.kick_age)

    def _apply_profile_level(self, level):
        """Push strengths (the ``magnitude`` range) times ``level``; the intervals stay."""
        self._low, self._high = float(self.config.magnitude[0]) * level, float(self.config.magnitude[1]) * level
        self._whole_range[:] = self._high

    def critic_groups(self):
        return {"push": self.kick, "push_age": (self.kick_age * self.dt)[:, None]}

    def push_limits(self) -> np.ndarray:
        """Per env, the largest push it can draw now (the top of ``magnitude`` without a curriculum)."""
        levels = self.config.levels
        if not levels:
            return self._whole_range
        return self._low + (self._high - self._low) * self.level / levels

    def _actions(self, actions):
        _push(self._rng, self._countdown, self._remaining, self.pushed, self._qvel, self._dof, self._xfrc, self._body,
              self._interval, self._low, self.push_limits(), self._duration, self.config.mode == "force", self.kick,
              self.kick_age)
        return actions

    def step(self, actions):
        obs, reward, terminated, truncated, info = super().step(actions)
        if self.config.levels:
            self.level[:] = next_push_levels(self.level, terminated, truncated, self.config.levels)
            info["push_level"] = self.level / self.config.levels
        return obs, reward, terminated, truncated, info

    def _after_step(self, info):
        info["pushed"] = self.pushed.copy()


def next_push_levels(level: np.ndarray, terminated: np.ndarray, truncated: np.ndarray, levels: int) -> np.ndarray:
    """The push curriculum's rule: one level up for an episode that reached its time limit,
    one down for a fall, clipped to ``0..levels``; the other envs keep theirs."""
    terminated = np.asarray(terminated, bool)
    survived = np.asarray(truncated, bool) & ~terminated
    return np.clip(level + survived.astype(np.int64) - terminated.astype(np.int64), 0, levels)
