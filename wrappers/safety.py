"""``Safety``: the deploy-side safety guard as a vector wrapper, so that a policy can learn under it.

The guard itself is :mod:`unilab_robot.deploy.safety` (pure NumPy): this wrapper runs its
functions on all ``N`` envs at once, on the same numbers as ``unilab play`` and a robot-side
program (:func:`~unilab_robot.deploy.safety.resolve_limits` on the task's model), so the
targets it clips and the trips it latches are the robot's. The profile section is
``safety:`` with the keys of :class:`~unilab_robot.deploy.safety.SafetyConfig`.

Where it sits. In a :class:`~wrappers.Sim2Real` stack it is the outermost layer: the
policy's action meets the guard first, before the link (``packet_loss``, ``action_latency``)
and the motors (``action_noise``, ``motor_strength``), and the guard sees the observation the
policy saw (after noise, latency and loss), so a lost observation is a stale one
(``info["obs_lost"]`` of :class:`~wrappers.PacketLoss`). Its physical checks (tilt, joint
velocity, the PD torque estimate) read the robot's true state, as the robot's own computer
reads its encoders and IMU. What the link does after the guard keeps its limits: a lost
action holds the last guarded target, a delayed one replays guarded targets (zeros, i.e.
home, before the first arrives).

Actions map to targets as the task does (``home + action_scale * clip(a)``); the guarded
targets map back to the action the env executes. The safe mode's gains (Kp 0 for
``damping``, Kd ``safe_damping``) are written per env through the batch's shared actuator
fields (:class:`~wrappers.physics.ModelFields`, composed with domain randomization and motor
strength), and restored when the env's episode ends. ``info["safety"]`` holds, per env, this
step's ``position_clips``, ``rate_limits``, ``torque_limits`` (joints whose target each
limit moved), ``trips`` (1 where a watchdog tripped), ``latched`` and ``reason`` (index + 1
into :data:`~unilab_robot.deploy.safety.REASONS`, 0: none); :attr:`Safety.counts` keeps
the totals since the wrapper was made.
"""

from __future__ import annotations

from typing import Any, Mapping

import mujoco
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from unilab_robot.deploy.safety import (COUNTS, GuardState, SafetyConfig, action_to_targets, gain_scales, guard_rows,
                                       joint_model, observe_rows, resolve_limits, safety_config, start_rows,
                                       targets_to_action, up_z)
from wrappers._base import Sim2RealWrapper
from wrappers.physics import model_fields


def task_joint_model(env: VectorEnv):
    """The guard's :class:`~unilab_robot.deploy.safety.JointModel` of a joystick task (Go1, G1 ...)."""
    base = env.unwrapped
    task = getattr(base, "task", None)
    legged, robot = getattr(task, "legged", None), getattr(task, "robot", None)
    if legged is None or robot is None or getattr(base, "batch", None) is None:
        raise ValueError(f"Safety needs a UniLab task whose actions are joint targets around a home pose (the "
                         f"joystick tasks); {type(task or base).__name__} is not one")
    model = base.model
    space = env.single_action_space
    clip = (float(np.min(space.low)), float(np.max(space.high)))
    actuators = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, int(a)) for a in robot.actuator_ids]
    return joint_model(model, legged.joint_names, actuators, robot.home, task.config.action_scale, clip,
                       getattr(task.config, "max_tilt", None), legged.root_body)


class Safety(Sim2RealWrapper):
    """The safety guard on every env (see the module docstring): ``Safety(env, max_target_step=0.3)``.

    ``limits`` are the resolved per-joint numbers, ``state`` the guard's per-env state.
    """

    SECTION = "safety"  # draws nothing
    CONFIG = SafetyConfig  # the section's keys: its fields (unilab_robot.profiles.SECTION_KEYS)
    STATE = ("_prev", "_hold", "_latched", "_reason", "_stale", "_obs_bad", "counts", "_gains_changed",
             "_gain_f", "_bias_f")

    def __init__(self, env: VectorEnv, config: SafetyConfig | Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(env)
        cfg = safety_config({**(config.to_dict() if isinstance(config, SafetyConfig) else dict(config or {})), **kwargs})
        self.config = cfg
        self.limits = limits = resolve_limits(cfg, task_joint_model(env), self.dt)
        n = self.num_envs
        self.state = s = GuardState.empty(limits, n)
        # the state's arrays under the names get_state saves (restored in place)
        self._prev, self._hold, self._latched, self._reason = s.prev, s.hold, s.latched, s.reason
        self._stale, self._obs_bad, self.counts = s.stale, s.obs_bad, s.counts
        base = env.unwrapped
        robot = base.task.robot
        self._qpos, self._qvel = base.batch.bind("qpos"), base.batch.bind("qvel")
        self._joint_q, self._joint_d = robot.joint_q, robot.joint_d
        self._quat = slice(robot.root_q + 3, robot.root_q + 7)
        self._hits = np.zeros((n, len(COUNTS)), np.int64)
        self._out = np.zeros(self._action_shape, np.float32)
        self._gains_changed = np.zeros(n, bool)
        self._actuators = np.asarray(robot.actuator_ids, np.int64)
        kp, kd = gain_scales(limits, np.ones(1, bool))
        if not (np.all(kp == 1) and np.all(kd == 1)):  # the safe mode changes gains: through the shared fields
            self._fields = model_fields(env)
            self._gain_f = self._fields.factor("actuator_gainprm", "safety")
            self._bias_f = self._fields.factor("actuator_biasprm", "safety")

    # --- the guard --------------------------------------------------------------------------
    def _actions(self, actions):
        a = np.asarray(actions)
        if a.shape != self._action_shape:
            raise ValueError(f"actions must have shape {self._action_shape} (num_envs, action size), got {a.shape}")
        if not np.issubdtype(a.dtype, np.floating):
            raise TypeError(f"actions must be floating point (float32 preferred), got dtype {a.dtype}")
        active = ~self._pending if self.autoreset_mode is AutoresetMode.NEXT_STEP else self._all  # not reset steps
        qpos = self._qpos
        upz = up_z(qpos[:, self._quat]) if self.limits.floating else None
        latched_before = self._latched.copy()
        out, self._hits = guard_rows(self.limits, self.state, action_to_targets(self.limits, a),
                                     qpos[:, self._joint_q], self._qvel[:, self._joint_d], upz, active)
        tripped = self._latched & ~latched_before
        if tripped.any() and hasattr(self, "_gain_f"):
            self._set_gains(tripped)
        self._out[:] = targets_to_action(self.limits, out)
        return self._out

    def _set_gains(self, rows: np.ndarray) -> None:
        kp, kd = gain_scales(self.limits, self._latched)
        ids = np.flatnonzero(rows).astype(np.int32)
        r, a = ids[:, None], self._actuators[None, :]
        self._gain_f[r, a, 0] = kp[ids]
        self._bias_f[r, a, 1] = kp[ids]
        self._bias_f[r, a, 2] = kd[ids]
        self._gains_changed[ids] = self._latched[ids]
        self._fields.commit("actuator_gainprm", ids)
        self._fields.commit("actuator_biasprm", ids)

    def _after_step(self, info):
        h = self._hits
        info["safety"] = {**{name: h[:, k].copy() for k, name in enumerate(COUNTS)},
                          "latched": self._latched.copy(), "reason": self._reason.copy()}

    def _observe(self, obs, info, touch, started, final):
        if started.any():
            start_rows(self.limits, self.state, started)
        lost = info.get("obs_lost")
        new = np.ones(self.num_envs, bool) if lost is None else ~np.asarray(lost, bool)
        observe_rows(self.state, obs, new | started, touch)
        return obs

    def _on_start(self, started):
        restore = started & self._gains_changed
        if restore.any():
            self._set_gains(restore)

    # --- the profile machinery ----------------------------------------------------------------
    def _apply_profile_level(self, level):
        """The guard is the controller's, not a perturbation: it does not scale with the profile level."""

    def critic_groups(self):
        return {"safety_latched": self._latched[:, None]}

    def set_state(self, state):
        super().set_state(state)
        if hasattr(self, "_gain_f"):  # the batch's gains follow the restored factors of every owner
            batch = self._fields.batch
            if batch.expanded("actuator_gainprm") is not None or self._gains_changed.any():
                ids = np.arange(self.num_envs, dtype=np.int32)
                self._fields.commit("actuator_gainprm", ids)
                self._fields.commit("actuator_biasprm", ids)
