"""A sim-to-real profile's sensor and link imperfections around a plain-MuJoCo policy loop.

Reads the same profile files as :class:`wrappers.Sim2Real` (``unilab_robot/profiles/*.yaml``
or your own YAML, ``extends:`` followed) and applies, with the same numbers and in the
same order as the wrappers, the sections that live between the robot and the policy:

* actions (policy -> motors): ``packet_loss.actions`` (hold the last received action;
  zeros before the first) -> ``action_latency`` (``k`` control steps, drawn per episode;
  zeros until the first delayed action arrives) -> ``action_noise`` -> ``motor_strength``
  (``target: action`` scales the action; ``target: torque`` scales the actuators' gains,
  drawn per episode, see :meth:`PlaySim2Real.start_episode`).
* observations (sensors -> policy): ``imu_bias_drift`` (a bias per episode, then a random
  walk) -> ``observation_noise`` -> ``observation_latency`` -> ``packet_loss.observations``
  (hold the last delivered observation; an episode's first one always arrives). The groups
  the controller knows itself (last action, command, phase:
  :data:`~unilab_robot.deploy.controller_groups.CONTROLLER_GROUPS`) pass unperturbed, as in
  the training wrappers.

``domain_randomization`` and ``random_push`` change the physics, not the link: they are
listed in :attr:`PlaySim2Real.skipped` (play another model with ``--model-path`` to test
physics changes), as are the depth camera's imperfections (``camera_pose``, ``motion_blur``,
``depth_noise``, ``frame_drop``, ``camera_latency``): play renders the clean frame. A ``safety`` section is the controller's guard, not an imperfection:
``unilab play`` runs it (:mod:`unilab_robot.deploy.safety`) before these sections, as the
wrappers do. Draws come from a NumPy generator, so the noise has the wrappers'
distribution, not their exact random sequence. No torch, no Numba.
"""

from __future__ import annotations

import math
from collections import deque
from pathlib import Path
from typing import Any, Mapping

import mujoco
import numpy as np

from unilab_robot.deploy.controller_groups import CONTROLLER_GROUPS
from unilab_robot.deploy.spec import DeploySpec, SpecError
from unilab_robot.deploy.reference import GROUP_BUILDERS
from unilab_robot.profiles import SECTION_KEYS, Profile, resolve

#: what the play replay does with each section of the one key table (unilab_robot.profiles.SECTION_KEYS):
#: the sections it applies, each with its defaults (the wrappers' config defaults, key for key; every key the
#: section accepts is here: tests/wrappers/test_profile_keys.py checks both), in the order it applies them
APPLIED_DEFAULTS: dict[str, dict[str, Any]] = {
    "observation_noise": {"scales": {}, "distribution": "gaussian", "mode": "additive", "level": 1.0},
    "imu_bias_drift": {"bias_std": {"gyro": 0.02}, "drift_std": {"gyro": 0.005}},
    "observation_latency": {"delay": 1, "groups": None},
    "action_latency": {"delay": 1},
    "packet_loss": {"observations": None, "actions": None},
    "action_noise": {"std": 0.02, "distribution": "gaussian", "mode": "additive", "clip": True},
    "motor_strength": {"strength": (0.9, 1.1), "target": "torque", "per_actuator": True},
}
APPLIED = tuple(APPLIED_DEFAULTS)
#: a packet_loss direction's defaults (wrappers.packet_loss.ChannelConfig's), its keys CHANNEL_KEYS
CHANNEL_DEFAULTS: dict[str, Any] = {"model": "bernoulli", "loss_rate": 0.0, "p_good_to_bad": 0.0, "p_bad_to_good": 1.0,
                                    "loss_good": 0.0, "loss_bad": 1.0}
PHYSICS = ("domain_randomization", "random_push")
#: the depth camera's imperfections (wrappers.camera_*): play renders the clean frame and skips them, listed as skipped
CAMERA = ("camera_pose", "motion_blur", "depth_noise", "frame_drop", "camera_latency")
#: the safety guard (unilab_robot.deploy.safety): run by the play loop itself, before the link
GUARD = ("safety",)
#: the sections play does not apply, each with why (with APPLIED, the whole table: a test checks none is left out)
SKIPPED: dict[str, str] = {
    **{name: "physics, not the link: play another model with --model-path" for name in PHYSICS},
    **{name: "play renders the clean depth frame" for name in CAMERA},
    "safety": "the play loop's own guard (unilab_robot.deploy.safety) runs it, before the link",
}
META = ("description", "robot", "env_id", "extends", "sources")
#: training devices: what the critic sees (wrappers.privileged), the whole-profile curriculum
#: (wrappers.curriculum; play runs the whole profile): nothing to play
TRAINING_ONLY = ("privileged_critic", "curriculum")
#: section -> the keys play applies (all those of the one table)
KEYS = {name: SECTION_KEYS[name] for name in APPLIED}


def load_play_profile(profile: str | Path | Mapping[str, Any] | Profile) -> Profile:
    """The resolved profile (:func:`unilab_robot.profiles.resolve`: ``extends`` followed, ``null`` sections
    dropped, sections and keys checked against the one table), its ``safety`` values checked; ``SpecError``."""
    try:
        data = resolve(profile)
    except (ValueError, TypeError, FileNotFoundError) as e:
        raise SpecError(str(e)) from None
    if "safety" in data:
        from unilab_robot.deploy.safety import safety_config

        try:
            safety_config(data["safety"])
        except ValueError as e:
            raise SpecError(f"profile section 'safety': {e}") from None
    for key in APPLIED:
        if key in data and not isinstance(data[key], Mapping):
            raise SpecError(f"profile section {key!r} must be a mapping, got {data[key]!r}")
    return data


def _section(profile: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    """Section ``name`` with the wrappers' defaults for the keys it leaves out, or ``None`` when absent."""
    return {**APPLIED_DEFAULTS[name], **profile[name]} if name in profile else None


def _range(value: Any, integer: bool = False) -> tuple[float, float]:
    low, high = (value, value) if isinstance(value, (int, float)) else (value[0], value[1])
    return (int(low), int(high)) if integer else (float(low), float(high))


class _Channel:
    """A Gilbert-Elliott (or Bernoulli) loss channel; starts from its stationary state."""

    def __init__(self, cfg: Mapping[str, Any], rng: np.random.Generator) -> None:
        cfg = {**CHANNEL_DEFAULTS, **cfg}  # keys checked by resolve (CHANNEL_KEYS)
        if cfg["model"] == "bernoulli":
            rate = float(cfg["loss_rate"])
            self.p = (0.0, 1.0, rate, rate)
        else:
            self.p = (float(cfg["p_good_to_bad"]), float(cfg["p_bad_to_good"]),
                      float(cfg["loss_good"]), float(cfg["loss_bad"]))
        g2b, b2g = self.p[0], self.p[1]
        self.rng = rng
        self.bad = bool(rng.random() < (g2b / (g2b + b2g) if g2b + b2g > 0 else 0.0))

    def lost(self) -> bool:
        u = self.rng.random()
        if self.bad:
            self.bad = not (u < self.p[1])
        else:
            self.bad = u < self.p[0]
        return bool(self.rng.random() < (self.p[3] if self.bad else self.p[2]))


class PlaySim2Real:
    """One robot's link and sensor imperfections from a resolved profile (see module docstring).

    ``start_episode(model)`` at each reset, ``action(a)`` before the action reaches the
    motors, ``observation(obs)`` before the policy sees a reading.
    """

    def __init__(self, profile: Mapping[str, Any] | Profile, spec: DeploySpec, seed: int = 0,
                 name: str | None = None) -> None:
        profile = load_play_profile(profile)  # a Profile (what play resolved once) is taken as it is
        try:
            profile.check_fits(spec.task.id, subject="the policy is for")
        except ValueError as e:
            raise SpecError(str(e)) from None
        self.profile, self.spec, self.name = profile, spec, name or profile.label
        self.rng = np.random.default_rng(seed)
        self.applied = tuple(k for k in APPLIED if k in profile)
        self.skipped = tuple(k for k in (*PHYSICS, *CAMERA) if k in profile)
        self.dt = spec.timing.control_dt
        groups = {g.name: np.arange(g.start, g.stop) for g in spec.observation.groups}

        def columns(names, section):
            unknown = [n for n in names if n not in groups]
            if unknown:
                raise SpecError(f"profile section {section!r} names observation groups {unknown}; "
                                f"this policy's groups are {list(groups)}")
            return [groups[n] for n in names]

        def read(scales, section):  # noise on a known group this policy does not read (its critic's alone) is not applied
            unread = [n for n in scales if n not in groups and n in GROUP_BUILDERS]
            self.unread += [f"{section} on {n}" for n in unread if f"{section} on {n}" not in self.unread]
            return {n: s for n, s in scales.items() if n not in unread}  # an unknown name stays, to be refused

        self.unread: list[str] = []
        self.notes: list[str] = []  # what else of an applied section play cannot apply, said by describe()
        size = spec.observation.size
        # every section is read through _section: the wrappers' defaults for the keys it leaves out
        noise = _section(profile, "observation_noise")
        self._obs_scale = np.zeros(size)
        self._obs_level_range = _range(noise["level"]) if noise else (1.0, 1.0)
        self._obs_level = 1.0
        if noise:
            if not noise["scales"]:  # the wrapper takes the task's declared scales, which a deploy spec does not carry
                self.notes.append("observation_noise without scales not applied (training used the task's declared "
                                  "scales, which a deploy spec does not carry)")
            scales = read(noise["scales"], "observation_noise")
            for cols, s in zip(columns(list(scales), "observation_noise"), scales.values()):
                self._obs_scale[cols] = float(s)
            self._obs_gauss = noise["distribution"] == "gaussian"
            self._obs_mult = noise["mode"] == "multiplicative"
        imu = _section(profile, "imu_bias_drift")
        self._bias_std, self._drift_std = np.zeros(size), np.zeros(size)
        if imu:
            for key, out, factor in (("bias_std", self._bias_std, 1.0), ("drift_std", self._drift_std, math.sqrt(self.dt))):
                stds = read(imu[key], "imu_bias_drift")
                for cols, s in zip(columns(list(stds), "imu_bias_drift"), stds.values()):
                    out[cols] = float(s) * factor
        self._bias = np.zeros(size)
        self._controller_cols = np.concatenate([groups[g] for g in sorted(CONTROLLER_GROUPS) if g in groups]
                                               or [np.zeros(0, np.int64)])
        lat = _section(profile, "observation_latency")
        self._obs_delay_range = _range(lat["delay"], integer=True) if lat else (0, 0)
        self._obs_delay_cols = (np.concatenate(columns(lat["groups"], "observation_latency"))
                                if lat and lat["groups"] else np.arange(size))
        act_lat = _section(profile, "action_latency")
        self._act_delay_range = _range(act_lat["delay"], integer=True) if act_lat else (0, 0)
        loss = _section(profile, "packet_loss") or {}
        self._obs_channel = _Channel(loss["observations"], self.rng) if loss.get("observations") else None
        self._act_channel = _Channel(loss["actions"], self.rng) if loss.get("actions") else None
        self._act_noise = _section(profile, "action_noise")
        ms = _section(profile, "motor_strength")
        self._strength = _range(ms["strength"]) if ms else None
        self._strength_target = ms["target"] if ms else None
        self._per_actuator = bool(ms["per_actuator"]) if ms else True
        self._action_gain = np.ones(spec.action.size)
        self._nominal: dict[str, np.ndarray] | None = None
        self.obs_lost = self.action_lost = False

    def describe(self) -> str:
        """One line: which sections act on the play side and which do not."""
        text = f"sim2real: {', '.join(self.applied) or 'nothing'} applied"
        physics = [k for k in self.skipped if k in PHYSICS]
        camera = [k for k in self.skipped if k in CAMERA]
        if physics:
            text += f"; {', '.join(physics)} not applied in play (physics: use --model-path)"
        if camera:
            text += f"; {', '.join(camera)} not applied in play (it renders the clean depth frame)"
        if self.unread:
            text += f"; {', '.join(self.unread)} not applied (the policy does not read that group)"
        for note in self.notes:
            text += f"; {note}"
        return text

    def gain_note(self) -> str | None:
        """What the profile's motor-strength draw does to the actuators' Kp and Kd, as the play loop sees
        it (so it is not mistaken for a model that differs from training); ``None`` when it leaves them alone."""
        if self._strength is None or self._strength_target == "action":
            return None
        lo, hi = self._strength
        each = "one factor per actuator" if self._per_actuator else "one factor for all actuators"
        return (f"{self.name}'s motor_strength scales Kp and Kd by a factor drawn from [{lo:g}, {hi:g}] each "
                f"episode ({each}), as in training")

    def _draw(self, shape, gaussian: bool) -> np.ndarray:
        return self.rng.standard_normal(shape) if gaussian else self.rng.uniform(-1.0, 1.0, shape)

    # --- episodes ----------------------------------------------------------------------
    def start_episode(self, model: mujoco.MjModel, actuators: np.ndarray) -> None:
        """Redraw per-episode values (delays, IMU bias, noise level, motor strength) and clear the delay lines."""
        low, high = self._obs_level_range
        self._obs_level = low if high == low else float(self.rng.uniform(low, high))  # a fixed level draws nothing
        self._bias = self._bias_std * self.rng.standard_normal(self._bias_std.shape)
        self._obs_delay = int(self.rng.integers(self._obs_delay_range[0], self._obs_delay_range[1] + 1))
        self._act_delay = int(self.rng.integers(self._act_delay_range[0], self._act_delay_range[1] + 1))
        self._obs_line: deque[np.ndarray] = deque(maxlen=self._obs_delay_range[1] + 1)
        self._act_line: deque[np.ndarray] = deque(maxlen=self._act_delay_range[1] + 1)
        self._held_action = np.zeros(self.spec.action.size)
        self._held_obs = None
        self._first_obs = True
        if self._strength is not None:  # one gain per action entry (target: action) or per driven actuator (torque)
            width = self.spec.action.size if self._strength_target == "action" else len(actuators)
            n = width if self._per_actuator else 1
            gain = np.broadcast_to(self.rng.uniform(*self._strength, n), (width,)).copy()
            if self._strength_target == "action":
                self._action_gain = gain
            else:
                if self._nominal is None:
                    self._nominal = {"gain": model.actuator_gainprm[actuators].copy(),
                                     "bias": model.actuator_biasprm[actuators].copy()}
                model.actuator_gainprm[actuators] = self._nominal["gain"] * gain[:, None]
                model.actuator_biasprm[actuators] = self._nominal["bias"] * gain[:, None]

    # --- the two directions --------------------------------------------------------------
    def action(self, action: np.ndarray) -> np.ndarray:
        """The action the motors execute for the policy's ``action`` this control step."""
        a = np.asarray(action, dtype=np.float64).copy()
        if self._act_channel is not None:
            self.action_lost = self._act_channel.lost()
            if not self.action_lost:
                self._held_action = a
            a = self._held_action.copy()
        if self._act_delay_range[1] > 0:
            self._act_line.append(a)
            a = self._act_line[-1 - self._act_delay].copy() if len(self._act_line) > self._act_delay else np.zeros_like(a)
        if self._act_noise:
            cfg = self._act_noise
            n = float(cfg["std"]) * self._draw(a.shape, cfg["distribution"] == "gaussian")
            a = a * (1.0 + n) if cfg["mode"] == "multiplicative" else a + n
            if cfg["clip"]:
                a = np.clip(a, -1.0, 1.0)
        if self._strength_target == "action":
            a = a * self._action_gain
        return a

    def observation(self, obs: np.ndarray) -> np.ndarray:
        """What the policy receives for the true observation ``obs`` this control step."""
        o = np.asarray(obs, dtype=np.float64).copy()
        if "imu_bias_drift" in self.profile:
            if not self._first_obs:
                self._bias += self._drift_std * self.rng.standard_normal(self._bias.shape)
            o += self._bias
        if "observation_noise" in self.profile:
            n = self._obs_scale * self._obs_level * self._draw(o.shape, self._obs_gauss)
            o = o * (1.0 + n) if self._obs_mult else o + n
        if self._obs_delay_range[1] > 0:
            self._obs_line.append(o[self._obs_delay_cols].copy())
            k = min(self._obs_delay, len(self._obs_line) - 1)
            o[self._obs_delay_cols] = self._obs_line[-1 - k]
        if self._obs_channel is not None:
            self.obs_lost = False if self._first_obs else self._obs_channel.lost()
            if self.obs_lost:
                o = self._held_obs.copy()
            else:
                self._held_obs = o.copy()
        self._first_obs = False
        o[self._controller_cols] = np.asarray(obs, dtype=np.float64)[self._controller_cols]  # the controller's own state
        return o.astype(np.float32)
