"""The reference observation and action path, in NumPy, from a deploy spec.

What a robot-side program (or ``unilab play``) runs around an exported policy:

    io = PolicyIO(spec, model)                 # names -> addresses in *this* model
    state = io.initial_state(data)             # last action, command, phase, joint targets
    obs = io.observe(data, state)              # float32 (obs_size,), the policy's input
    io.apply_action(action, state, data.ctrl, data)  # action -> PD targets in ctrl (guarded)
    ... mj_step ``spec.timing.substeps`` times, then io.advance(state)

The safety guard runs by default: when the spec carries a ``safety`` section (every joystick
spec ``unilab export`` writes), :meth:`PolicyIO.apply_action` passes the targets through
:class:`~unilab_robot.deploy.safety.SafetyGuard` (``io.guard``), reading ``q``, ``qd`` and the
base orientation from ``data``, and once a watchdog latches the safe mode it writes the safe
gains into the model's actuators (on a robot: command ``io.guard.gains()`` to the drives)
until :meth:`PolicyIO.initial_state`. ``PolicyIO(spec, model, safety=False)`` opts out; a
spec without the section (exported before it) runs no guard.

Each observation group of the spec is built by the function of that name in
:data:`GROUP_BUILDERS` (written out below, one entry per group the robot side knows) from a
plain ``mujoco.MjData`` and the controller state, and written at the group's index range,
so the layout comes from the spec, not from the training kernels. A task's own group (one
its declaration, :class:`unilab_envs.core.obs_groups.ObsGroup`, gives a NumPy builder) is
passed in: ``PolicyIO(spec, model, builders={"base_height": build_base_height})``. A robot program fills a ``MjData``-like object with ``qpos`` /
``qvel`` from its sensors (the free joint's ``qvel`` holds the world-frame linear
velocity and the body-frame angular velocity, as in MuJoCo). Observations that read
site positions (``ee_pos``) need the kinematics current: call :meth:`PolicyIO.refresh`
after stepping.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping

import mujoco
import numpy as np

from unilab_robot.deploy.grasp import GRASP_BUILDERS, grasp_io
from unilab_robot.deploy.camera import depth_group
from unilab_robot.deploy.height_scan import ground_map, scan_group, scan_points
from unilab_robot.deploy.model_ids import name_ids
from unilab_robot.deploy.motion import MOTION_BUILDERS, MotionState, motion_io
from unilab_robot.deploy.safety import SafetyGuard, gain_scales, remembered_action
from unilab_robot.deploy.spec import DeploySpec, SpecError

GRAVITY_DIRECTION = np.array([0.0, 0.0, -1.0])


def rotation_matrix(quat: np.ndarray) -> np.ndarray:
    """``R(q)`` of a MuJoCo quaternion ``(w, x, y, z)``: body frame -> world frame."""
    w, x, y, z = (float(v) for v in quat)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def to_body_frame(quat: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """The world vector ``vector`` seen in the frame of ``quat``: ``R(q)^T v``."""
    return rotation_matrix(quat).T @ np.asarray(vector, dtype=np.float64)


@dataclass
class ControllerState:
    """What the policy loop carries from one control step to the next.

    ``command``: velocity tasks ``(vx, vy, yaw_rate)``; ``target``: reach tasks, the
    world position to reach; ``joint_target``: ``target_delta`` actions' running
    joint targets (rad); ``phase``: the gait phase (rad, in ``[0, 2 pi)``);
    ``ee_target``: ``ee_delta`` actions' running end-effector target (m, world); ``motion``:
    motion-tracking tasks, the clip and frame the policy follows (:class:`~unilab_robot.deploy.motion.MotionState`).
    """

    last_action: np.ndarray
    command: np.ndarray
    phase: float = 0.0
    joint_target: np.ndarray | None = None
    target: np.ndarray | None = None
    ee_target: np.ndarray | None = None
    motion: MotionState | None = None


class PolicyIO:
    """The spec's observation and action mapping, bound to the names of one ``MjModel``.

    Raises :class:`SpecError` when the model lacks a joint, actuator, body or site the
    spec names, or when the spec has an observation group with no builder here.

    ``safety``: ``True`` (the default) runs the spec's ``safety`` section when it has one
    (``io.guard``; ``None`` for a spec without one, or for actions that are not
    ``home_offset``); ``False`` runs none; a ``safety:`` mapping runs that section instead
    (a ``ConfigError`` for actions that are not ``home_offset``: the guard maps joint targets).
    ``builders``: group name -> builder ``(io, data, state) -> values`` of groups of the task's own
    (its declared :class:`~unilab_envs.core.obs_groups.ObsGroup` builders), beside :data:`GROUP_BUILDERS`;
    one that names a group the robot side already builds differently is refused.
    """

    def __init__(self, spec: DeploySpec, model: mujoco.MjModel, safety=True,
                 builders: Mapping[str, Callable] | None = None) -> None:
        self.spec, self.model = spec, model
        clash = sorted(n for n, b in (builders or {}).items() if GROUP_BUILDERS.get(n, b) is not b)
        if clash:
            raise SpecError(f"observation group(s) {clash} already have a robot-side builder "
                            f"(unilab_robot.deploy.reference.GROUP_BUILDERS): give a task's own group another name")
        self.builders = {**GROUP_BUILDERS, **(builders or {})}
        unknown = [g.name for g in spec.observation.groups if g.name not in self.builders]
        if unknown:
            raise SpecError(f"observation groups {unknown} have no reference builder; known: {sorted(self.builders)}. A task's "
                            f"own group's builder comes from its declaration: pass it, PolicyIO(spec, model, "
                            f"builders={{name: builder}}) (`unilab play` imports the module the spec's task id names, "
                            f"'module:Id', for them)")
        a = spec.action
        joints = name_ids(model, mujoco.mjtObj.mjOBJ_JOINT, a.joint_names, "joint")
        self.joint_q = model.jnt_qposadr[joints].astype(np.int64)
        self.joint_d = model.jnt_dofadr[joints].astype(np.int64)
        self.actuators = name_ids(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a.actuator_names, "actuator")
        self.home = np.asarray(a.home, dtype=np.float64)
        self.clip = (float(a.clip[0]), float(a.clip[1]))
        self.scale = float(a.scale)
        if a.mode == "target_delta":
            self.target_low = np.asarray(a.target_low, dtype=np.float64)
            self.target_high = np.asarray(a.target_high, dtype=np.float64)
        self.root_q = self.root_d = -1
        if spec.model.root_body is not None:
            body = int(name_ids(model, mujoco.mjtObj.mjOBJ_BODY, (spec.model.root_body,), "body")[0])
            free = [j for j in range(model.njnt)
                    if model.jnt_bodyid[j] == body and model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
            if not free:
                raise SpecError(f"body {spec.model.root_body!r} has no free joint; the spec needs a floating base")
            self.root_q, self.root_d = int(model.jnt_qposadr[free[0]]), int(model.jnt_dofadr[free[0]])
        self.ee_site = -1
        if spec.model.ee_site is not None:
            self.ee_site = int(name_ids(model, mujoco.mjtObj.mjOBJ_SITE, (spec.model.ee_site,), "site")[0])
        self.target_mocap = -1
        if spec.model.target_body is not None:
            body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, spec.model.target_body)
            self.target_mocap = int(model.body_mocapid[body]) if body >= 0 else -1
        self.phase_step = 2.0 * math.pi * spec.gait.frequency * spec.timing.control_dt if spec.gait else 0.0
        self.needs_kinematics = any(g.name in ("ee_pos", "ee_to_target", "depth") for g in spec.observation.groups)
        # depth cameras: a robot program sets depth_frame to its camera's latest frame; without one it is rendered
        self.depth_frame = None
        self.rendered_depth = None  # unilab play's frames (unilab_robot.deploy.camera.RenderedDepth), made on first use
        # rough terrain: the ground (the model's heightfield; a robot program sets its own HeightMap) and the scan grid
        self.height_map, self.scan_points = ground_map(spec, model), scan_points(spec)
        # pick tasks: the end-effector controller, the gripper and the object (unilab_robot.deploy.grasp)
        self.grasp = grasp_io(spec, model)
        # motion tracking: the spec's clips at the control rate (unilab_robot.deploy.motion)
        self.motion = motion_io(spec, model, self.home)
        self.needs_kinematics = self.needs_kinematics or self.grasp is not None
        self._obs = np.zeros(spec.observation.size, dtype=np.float32)
        section = spec.safety if safety is True else (None if safety is False else safety)
        asked = safety is not True and safety is not False  # a section given here: refused for other action modes
        self.guard = (SafetyGuard.from_spec(spec, model, section)
                      if section is not None and (a.mode == "home_offset" or asked) else None)
        self._guard_obs: np.ndarray | None = None  # the last observation, for the guard's non-finite watchdog
        self._nominal_gains: tuple[np.ndarray, np.ndarray] | None = None  # the gains before the safe mode

    def actuator_differences(self) -> list[str]:
        """How this model's actuators differ from the spec's (Kp, Kd, non-position actuators); empty when they match."""
        a, m = self.spec.action, self.model
        notes = []
        kp, kd = m.actuator_gainprm[self.actuators, 0], -m.actuator_biasprm[self.actuators, 2]
        position = np.isclose(m.actuator_biasprm[self.actuators, 1], -kp) & (kp > 0)
        for name, ok in zip(a.actuator_names, position):
            if not ok:
                notes.append(f"actuator {name!r} is not a position actuator (ctrl is read as a joint target)")
        for label, got, want in (("Kp", kp, np.asarray(a.kp)), ("Kd", kd, np.asarray(a.kd))):
            off = ~np.isclose(got, want, rtol=1e-6)
            if off.any():
                i = int(np.flatnonzero(off)[0])
                notes.append(f"{label} differs on {int(off.sum())} actuators (e.g. {a.actuator_names[i]}: "
                             f"{got[i]:g} here, {want[i]:g} in training)")
        return notes

    # --- state -------------------------------------------------------------------------
    def initial_state(self, data: mujoco.MjData, command=None, target=None, phase: float = 0.0) -> ControllerState:
        """A fresh episode's state: zero last action, joint targets at the current joint angles."""
        n = self.spec.action.size
        ncmd = len(self.spec.command.names) if self.spec.command.kind == "velocity" else 0
        state = ControllerState(last_action=np.zeros(n), command=np.zeros(ncmd), phase=float(phase))
        if command is not None:
            state.command = np.asarray(command, dtype=np.float64).copy()
        if self.spec.action.mode == "target_delta":
            state.joint_target = np.clip(data.qpos[self.joint_q], self.target_low, self.target_high)
        if self.spec.command.kind == "reach_target":
            state.target = np.zeros(3) if target is None else np.asarray(target, dtype=np.float64).copy()
        if self.grasp is not None:  # the end-effector target where it is, the gripper open, the lift height
            self.grasp.start(data, state)
        if self.motion is not None:  # the first clip from its start (state.motion = io.motion.start(clip) for another)
            state.motion = self.motion.start()
        if self.rendered_depth is not None:  # a new episode starts on a fresh frame
            self.rendered_depth.reset()
        if self.guard is not None:  # a new episode: the guard unlatched, the model's gains back
            self.guard.reset()
            self._guard_obs = None
            if self._nominal_gains is not None:
                self.model.actuator_gainprm[self.actuators], self.model.actuator_biasprm[self.actuators] = self._nominal_gains
                self._nominal_gains = None
        return state

    # --- observation -------------------------------------------------------------------
    def refresh(self, data: mujoco.MjData) -> None:
        """Bring the derived fields the observation reads (site positions) up to date with ``qpos``."""
        if self.needs_kinematics:
            mujoco.mj_kinematics(self.model, data)

    def observe(self, data: mujoco.MjData, state: ControllerState) -> np.ndarray:
        """The policy's observation, float32 ``(obs_size,)`` (a new array each call)."""
        obs = self._obs
        for g in self.spec.observation.groups:
            obs[g.start:g.stop] = self.builders[g.name](self, data, state)
        out = obs.copy()
        n = self.spec.observation.normalizer
        if not n.folded_in:
            out = (out - np.asarray(n.mean, np.float32)) / np.asarray(n.std, np.float32)
            if n.clip is not None:
                out = np.clip(out, -n.clip, n.clip)
        if self.guard is not None:
            self._guard_obs = out
        return out.astype(np.float32, copy=False)

    # --- action -----------------------------------------------------------------------
    def apply_action(self, action: np.ndarray, state: ControllerState, ctrl: np.ndarray,
                     data: mujoco.MjData | None = None, obs_new: bool = True) -> np.ndarray:
        """Clip ``action``, remember it as the last action and write the PD targets into ``ctrl``.

        Returns the joint position targets (rad) in the spec's joint order. ``data``: the robot's
        state with current kinematics, which ``ee_delta`` actions (the grasp's end-effector
        controller) start from and the safety guard (``io.guard``) reads ``q``, ``qd`` and the
        base from; the other modes without a guard do not read it. ``obs_new``: the observation
        of this step was a new reading (the guard's stale-observation watchdog counts the others).
        """
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(-1), *self.clip)
        if a.shape[0] != self.spec.action.size:
            raise SpecError(f"the action has {a.shape[0]} entries; the spec's action size is {self.spec.action.size}")
        state.last_action = a
        if self.grasp is not None:
            return self.grasp.apply(a, state, data, ctrl)
        if self.guard is not None:
            targets = self._guarded(a, data, obs_new)
            state.last_action = remembered_action(a, *self.clip).astype(np.float64)  # a NaN is remembered as 0
        elif self.spec.action.mode == "home_offset":
            targets = self.home + self.scale * a
        else:
            targets = np.clip(state.joint_target + self.scale * a, self.target_low, self.target_high)
            state.joint_target = targets
        ctrl[self.actuators] = targets
        return targets

    def _guarded(self, a: np.ndarray, data, obs_new: bool) -> np.ndarray:
        """The guard's targets for action ``a``; the safe mode's gains into the model once it latches."""
        if data is None:
            raise SpecError("the deploy spec carries a safety section: pass the robot's state to "
                            "apply_action(action, state, ctrl, data) so the guard reads q, qd and the base, "
                            "or opt out with PolicyIO(spec, model, safety=False)")
        quat = self.base_quat(data) if self.root_q >= 0 else None
        targets = self.guard.targets(self.home + self.scale * a, data.qpos[self.joint_q], data.qvel[self.joint_d],
                                     quat, obs=self._guard_obs, obs_new=obs_new)
        if self.guard.latched and self._nominal_gains is None:
            acts, m = self.actuators, self.model
            self._nominal_gains = (m.actuator_gainprm[acts].copy(), m.actuator_biasprm[acts].copy())
            kp, kd = gain_scales(self.guard.limits, np.ones(1, bool))
            m.actuator_gainprm[acts, 0] *= kp[0]
            m.actuator_biasprm[acts, 1] *= kp[0]
            m.actuator_biasprm[acts, 2] *= kd[0]
        return targets

    def advance(self, state: ControllerState) -> None:
        """Move the gait clock (and a motion's frame) by one control period (after the physics substeps)."""
        if state.motion is not None:
            self.motion.advance(state.motion)
        if self.phase_step:
            p = state.phase + self.phase_step
            state.phase = p if p < 2.0 * math.pi else p % (2.0 * math.pi)

    # --- quantities the builders and metrics share ----------------------------------------
    def base_quat(self, data: mujoco.MjData) -> np.ndarray:
        return data.qpos[self.root_q + 3:self.root_q + 7]

    def base_linvel(self, data: mujoco.MjData) -> np.ndarray:
        """Base linear velocity in the body frame (m/s)."""
        return to_body_frame(self.base_quat(data), data.qvel[self.root_d:self.root_d + 3])

    def base_gyro(self, data: mujoco.MjData) -> np.ndarray:
        """Base angular velocity in the body frame (rad/s): the free joint's angular dofs."""
        return np.array(data.qvel[self.root_d + 3:self.root_d + 6])

    def gravity(self, data: mujoco.MjData) -> np.ndarray:
        return to_body_frame(self.base_quat(data), GRAVITY_DIRECTION)

    def ee_pos(self, data: mujoco.MjData) -> np.ndarray:
        return np.array(data.site_xpos[self.ee_site])


def _need_root(io: PolicyIO, name: str) -> None:
    if io.root_q < 0:
        raise SpecError(f"observation group {name!r} needs a floating base: the spec names no model.root_body")


def _linvel(io, data, state):
    _need_root(io, "linvel")
    return io.base_linvel(data)


def _gyro(io, data, state):
    _need_root(io, "gyro")
    return io.base_gyro(data)


def _gravity(io, data, state):
    _need_root(io, "gravity")
    return io.gravity(data)


def _phase(io, data, state):
    return (math.sin(state.phase), math.cos(state.phase))


def _ee_pos(io, data, state):
    return io.ee_pos(data)


#: observation group name -> builder ``(io, data, state) -> values`` (units in the spec)
GROUP_BUILDERS: dict[str, Callable[[PolicyIO, mujoco.MjData, ControllerState], np.ndarray]] = {
    "linvel": _linvel,
    "gyro": _gyro,
    "gravity": _gravity,
    "joint_pos": lambda io, data, state: data.qpos[io.joint_q] - io.home,
    "joint_vel": lambda io, data, state: data.qvel[io.joint_d],
    "last_action": lambda io, data, state: state.last_action,
    "command": lambda io, data, state: state.command,
    "phase": _phase,
    "joint_target": lambda io, data, state: state.joint_target - io.home,
    "ee_pos": _ee_pos,
    "target": lambda io, data, state: state.target,
    "ee_to_target": lambda io, data, state: state.target - io.ee_pos(data),
    "height_scan": lambda io, data, state: scan_group(io, data),
    "depth": lambda io, data, state: depth_group(io, data),
    **GRASP_BUILDERS,  # pick tasks: gripper, object pose and velocity, lift target, end-effector target
    **MOTION_BUILDERS,  # motion tracking: the reference's next frames, phase and anchor orientation
}

