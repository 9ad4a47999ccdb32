"""Pick-and-lift policies outside training: the spec's ``grasp`` section, the end-effector controller and the object observation, in NumPy.

A grasp policy (``UniLab/UR5Grasp-v0``) does not send joint targets: its action
``(dx, dy, dz, gripper)`` (``action.mode: ee_delta``) moves a target for the end-effector
site by ``action.scale * a[:3]`` metres and sets the gripper, ``-1`` open .. ``+1`` closed.
The task's Numba kernels (:mod:`unilab_envs.tasks.ur5_grasp_kernels`) turn that into
``ctrl``; here the same numbers come from plain NumPy on a ``mujoco.MjData``:

* :class:`GraspSpec` (``controller``, ``gripper``, ``object``): the deploy spec's ``grasp``
  section: the target's workspace box and lead, the orientation the controller holds, its
  damping and joint step; the gripper actuator and its open / closed ``ctrl``; the object
  (a cube on a table), how training placed it and what counts as a lift.
* :class:`GraspIO`: bound to one ``MjModel`` by name (``PolicyIO.grasp``).
  :meth:`GraspIO.apply` is the controller: target += scale * a[:3] (kept in the workspace and
  within ``max_target_lead`` of the site), then one damped-least-squares step
  ``dq = J^T (J J^T + damping^2 I)^-1 [position error; orientation error]`` from the
  *measured* joint angles (``J`` from the joint axes and anchors), clipped to
  ``max_joint_step``, as the arm's joint position targets; the gripper ``ctrl`` is
  ``open + (a[3] + 1) / 2 * (closed - open)``. :data:`GRASP_BUILDERS` build the object
  groups (cube pose and velocity relative to the pinch point, target height and gap, ...).
* :meth:`GraspIO.reset_object` / :class:`LiftRule`: an episode as training runs it for
  ``unilab play``: the cube placed, weighed and its friction drawn as the task does; the
  episode ends on success (held at ``success_height`` for ``success_hold_steps``) or with
  the cube off the table.
* :func:`grasp_parts`: the section, action mode, command and episode rules read from a task
  (``unilab export``).

The observations read the site frame, body positions and joint axes: call
``PolicyIO.refresh(data)`` (``mj_kinematics``) after stepping, as for ``ee_pos``. A robot
program fills ``qpos`` / ``qvel`` of the arm from its encoders and those of the cube's free
joint from its object tracker. Importing this module needs NumPy and MuJoCo only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from unilab_robot.deploy.model_ids import name_ids
from unilab_robot.deploy.sections import Command, Episode, SpecError, build_section

#: the observation groups only a grasp spec has (they need its ``grasp`` section)
GRASP_GROUPS = ("gripper", "ee_quat", "object_pos", "object_quat", "object_vel", "object_ang_vel",
                "target_height", "target_gap", "ee_target")

# --- the spec's grasp section ---------------------------------------------------------------


@dataclass(frozen=True)
class EndEffectorController:
    """How ``a[:3]`` becomes arm joint targets (``action.mode: ee_delta``; ``action.scale`` m per unit action)."""

    max_target_lead: float                    # m; the target stays within this of the site, per axis
    workspace_low: tuple[float, float, float]   # m, world; the box the target stays in
    workspace_high: tuple[float, float, float]
    orientation: tuple[float, ...]            # the site's world rotation matrix the controller holds (9, row-major)
    damping: float                            # of the least-squares step
    max_joint_step: float                     # rad; the largest joint target step from the measured angle


@dataclass(frozen=True)
class Gripper:
    """``a[-1]`` in [-1, 1] sets the gripper actuator's ``ctrl`` from ``ctrl_open`` to ``ctrl_closed``."""

    actuator: str
    ctrl_open: float
    ctrl_closed: float
    pad_bodies: tuple[str, str]               # the ``gripper`` observation is their distance


@dataclass(frozen=True)
class GraspObject:
    """The object to pick (a cube with a free joint on a table) and the episode rules around it."""

    body: str
    size: float                               # m, the cube's edge
    table_z: float                            # m, the table top
    table_x: tuple[float, float]              # m, the table's extent: the cube beyond it ends the episode
    table_y: tuple[float, float]
    drop_depth: float                         # m; the cube's bottom this far below the table top ends it too
    x: tuple[float, float]                    # reset: uniform placement (m, world) and yaw (rad)
    y: tuple[float, float]
    yaw: tuple[float, float]
    mass: tuple[float, float]                 # reset: uniform mass (kg; inertia of a solid cube) and sliding friction
    friction: tuple[float, float]
    success_height: float                     # m, the cube's bottom above the table while grasped ...
    success_hold_steps: int                   # ... for this many control steps in a row: success, the episode ends


@dataclass(frozen=True)
class GraspSpec:
    controller: EndEffectorController
    gripper: Gripper
    object: GraspObject


_NESTED = {"controller": EndEffectorController, "gripper": Gripper, "object": GraspObject}


def grasp_from_dict(data: Any, where: str = "spec.grasp") -> GraspSpec | None:
    """The spec's ``grasp`` section from its JSON object (``None`` stays ``None``)."""
    if data is None:
        return None
    return build_section(GraspSpec, data, where, _NESTED)


def _need(condition: bool, message: str) -> None:
    if not condition:
        raise SpecError(message)


def _numbers(values, name: str, count: int | None = None) -> None:
    _need(isinstance(values, tuple) and (count is None or len(values) == count)
          and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values),
          f"{name} must be {count if count is not None else 'some'} finite numbers, got {values!r}")


def _range(values, name: str) -> None:
    _numbers(values, name, 2)
    _need(values[0] <= values[1], f"{name} must be (low, high) with low <= high, got {values!r}")


def validate_grasp(spec: Any) -> None:
    """Raise :class:`SpecError` when ``ee_delta`` actions, the grasp groups and the ``grasp`` section do not fit."""
    g, a = spec.grasp, spec.action
    names = [x.name for x in spec.observation.groups if x.name in GRASP_GROUPS]
    _need(g is not None or (a.mode != "ee_delta" and not names),
          f"{'ee_delta actions' if a.mode == 'ee_delta' else f'observation groups {names}'} need the spec's grasp "
          f"section (the end-effector controller, the gripper and the object)")
    if g is None:
        return
    _need(isinstance(g, GraspSpec), f"grasp must be a GraspSpec (or null), got {type(g).__name__}")
    _need(a.mode == "ee_delta", f"a grasp section goes with action.mode 'ee_delta', got {a.mode!r}")
    _need(a.size == 4, f"ee_delta actions are (dx, dy, dz, gripper): action.size must be 4, got {a.size}")
    _need(spec.model.ee_site is not None, "ee_delta actions need model.ee_site, the end-effector site they move")
    c, gr, o = g.controller, g.gripper, g.object
    _numbers(c.workspace_low, "grasp.controller.workspace_low", 3)
    _numbers(c.workspace_high, "grasp.controller.workspace_high", 3)
    _need(all(lo < hi for lo, hi in zip(c.workspace_low, c.workspace_high)),
          f"grasp.controller.workspace_low {c.workspace_low} must be below workspace_high {c.workspace_high}")
    _numbers(c.orientation, "grasp.controller.orientation (a rotation matrix, row-major)", 9)
    _numbers((c.max_target_lead, c.damping, c.max_joint_step), "grasp.controller lead, damping and joint step", 3)
    _need(c.max_target_lead > 0 and c.damping > 0 and c.max_joint_step > 0,
          "grasp.controller.max_target_lead, damping and max_joint_step must be > 0")
    _need(gr.actuator in spec.model.actuator_names,
          f"grasp.gripper.actuator {gr.actuator!r} is not in the model's actuator names")
    _numbers((gr.ctrl_open, gr.ctrl_closed), "grasp.gripper ctrl_open / ctrl_closed", 2)
    _need(len(gr.pad_bodies) == 2, f"grasp.gripper.pad_bodies must name two bodies, got {gr.pad_bodies!r}")
    _numbers((o.size, o.table_z, o.drop_depth, o.success_height), "grasp.object size, table_z, drop_depth, success_height", 4)
    _need(o.size > 0 and o.success_height > 0, "grasp.object.size and success_height must be > 0")
    for key in ("table_x", "table_y", "x", "y", "yaw", "mass", "friction"):
        _range(getattr(o, key), f"grasp.object.{key}")
    _need(o.mass[0] > 0, f"grasp.object.mass must be > 0 kg, got {o.mass}")
    _need(isinstance(o.success_hold_steps, int) and o.success_hold_steps >= 1,
          f"grasp.object.success_hold_steps must be a whole number >= 1, got {o.success_hold_steps!r}")
    _need(spec.command.kind == "lift" and len(spec.command.names) == 1,
          f"a grasp spec's command is the lift height (kind 'lift', one name), got {spec.command.kind!r}")


# --- the reference path ---------------------------------------------------------------------------


_NEEDS = "the grasp policy"  # who needs the names, in name_ids' messages

_NEXT, _PREV = [1, 2, 0], [2, 0, 1]


def cross_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross products of ``(n, 3)`` arrays (``np.cross`` costs ~20 us at these sizes)."""
    return a[:, _NEXT] * b[:, _PREV] - a[:, _PREV] * b[:, _NEXT]


def orientation_error(rot: np.ndarray, goal: np.ndarray) -> np.ndarray:
    """The small-angle rotation (world axis-angle) from frame ``rot`` (3, 3) to ``goal``: ``0.5 sum_k R[:, k] x G[:, k]``."""
    return 0.5 * cross_rows(rot.T, goal.T).sum(axis=0)


def quat_conj_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``conj(a) * b`` (MuJoCo ``(w, x, y, z)``), the sign chosen so that ``w >= 0``."""
    w, x, y, z = a[0], -a[1], -a[2], -a[3]
    out = np.array([w * b[0] - x * b[1] - y * b[2] - z * b[3],
                    w * b[1] + x * b[0] + y * b[3] - z * b[2],
                    w * b[2] - x * b[3] + y * b[0] + z * b[1],
                    w * b[3] + x * b[2] - y * b[1] + z * b[0]])
    return -out if out[0] < 0.0 else out


class GraspIO:
    """The ``grasp`` section bound to one ``MjModel`` by name: the controller, the object groups, episodes."""

    def __init__(self, spec: Any, model: mujoco.MjModel) -> None:
        g, a, obj = spec.grasp, spec.action, mujoco.mjtObj
        self.spec, self.model = g, model
        self.joints = name_ids(model, obj.mjOBJ_JOINT, a.joint_names, "joint", _NEEDS)
        self.arm_q = model.jnt_qposadr[self.joints].astype(np.int64)
        self.arm_d = model.jnt_dofadr[self.joints].astype(np.int64)
        self.arm_act = name_ids(model, obj.mjOBJ_ACTUATOR, a.actuator_names, "actuator", _NEEDS)
        self.site = int(name_ids(model, obj.mjOBJ_SITE, (spec.model.ee_site,), "site", _NEEDS)[0])
        self.pads = name_ids(model, obj.mjOBJ_BODY, g.gripper.pad_bodies, "body", _NEEDS)
        self.gripper = int(name_ids(model, obj.mjOBJ_ACTUATOR, (g.gripper.actuator,), "actuator", _NEEDS)[0])
        self.cube = int(name_ids(model, obj.mjOBJ_BODY, (g.object.body,), "body", _NEEDS)[0])
        free = [j for j in range(model.njnt) if model.jnt_bodyid[j] == self.cube and model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
        geoms = np.flatnonzero(model.geom_bodyid == self.cube)
        if not free or geoms.size != 1 or model.geom_type[geoms[0]] != mujoco.mjtGeom.mjGEOM_BOX:
            raise SpecError(f"body {g.object.body!r} must have a free joint and one box geom (the object to pick)")
        self.cube_q, self.cube_d = int(model.jnt_qposadr[free[0]]), int(model.jnt_dofadr[free[0]])
        self.cube_geom = int(geoms[0])
        c = g.controller
        self.scale = float(a.scale)
        self.low, self.high = np.asarray(a.target_low, dtype=np.float64), np.asarray(a.target_high, dtype=np.float64)
        self.work_low, self.work_high = np.asarray(c.workspace_low, float), np.asarray(c.workspace_high, float)
        self.goal = np.asarray(c.orientation, dtype=np.float64).reshape(3, 3)
        self.damping2 = float(c.damping) ** 2
        self.half = 0.5 * float(g.object.size)
        self.lift_height = float(spec.command.ranges[0][0])
        # the pad-object contacts the task's success reads: its contact sensors when the model has them, else data.contact
        self.pad_sensors = [self._contact_sensor(p) for p in self.pads]
        self._scratch: mujoco.MjData | None = None

    def _contact_sensor(self, pad: int) -> int:
        m, body = self.model, mujoco.mjtObj.mjOBJ_BODY
        for s in range(m.nsensor):
            if (m.sensor_type[s] == mujoco.mjtSensor.mjSENS_CONTACT and m.sensor_objtype[s] == body
                    and m.sensor_objid[s] == pad and m.sensor_reftype[s] == body and m.sensor_refid[s] == self.cube):
                return int(m.sensor_adr[s])
        return -1

    # --- controller ---------------------------------------------------------------------
    def jacobian(self, data: mujoco.MjData) -> np.ndarray:
        """(6, n) Jacobian of the site over the arm hinges: rows 0-2 ``axis x (p - anchor)``, rows 3-5 ``axis``."""
        axis, anchor = data.xaxis[self.joints], data.xanchor[self.joints]
        return np.vstack([cross_rows(axis, data.site_xpos[self.site] - anchor).T, axis.T])

    def start(self, data: mujoco.MjData, state: Any) -> None:
        """A fresh episode's controller state: the target at the site, the gripper open, the lift command."""
        mujoco.mj_kinematics(self.model, data)
        state.ee_target = np.array(data.site_xpos[self.site])
        state.last_action[-1] = -1.0  # the gripper starts open: the command that holds it open
        if state.command.size == 0:  # the lift height training asked for
            state.command = np.array([self.lift_height])

    def apply(self, a: np.ndarray, state: Any, data: mujoco.MjData, ctrl: np.ndarray) -> np.ndarray:
        """The controller for the clipped action ``a``: writes the arm and gripper ``ctrl``, returns the arm targets (rad)."""
        if data is None:
            raise SpecError("ee_delta actions need the robot's state: call apply_action(action, state, ctrl, data)")
        c = self.spec.controller
        p = data.site_xpos[self.site]
        target = np.clip(state.ee_target + self.scale * a[:3], self.work_low, self.work_high)
        target = np.clip(target, p - c.max_target_lead, p + c.max_target_lead)
        state.ee_target = target
        error = np.concatenate([target - p, orientation_error(data.site_xmat[self.site].reshape(3, 3), self.goal)])
        jac = self.jacobian(data)
        step = jac.T @ np.linalg.solve(jac @ jac.T + self.damping2 * np.eye(6), error)
        dq = np.clip(step, -c.max_joint_step, c.max_joint_step)
        targets = np.clip(data.qpos[self.arm_q] + dq, self.low, self.high)
        ctrl[self.arm_act] = targets
        gr = self.spec.gripper
        ctrl[self.gripper] = gr.ctrl_open + 0.5 * (a[-1] + 1.0) * (gr.ctrl_closed - gr.ctrl_open)
        return targets

    # --- object quantities -------------------------------------------------------------
    def object_pos(self, data: mujoco.MjData) -> np.ndarray:
        return np.array(data.qpos[self.cube_q:self.cube_q + 3])

    def pad_contacts(self, data: mujoco.MjData) -> tuple[bool, bool]:
        """Whether each pad touches the object (as of the last substep, as the task's contact sensors)."""
        out = []
        for pad, adr in zip(self.pads, self.pad_sensors):
            if adr >= 0:
                out.append(bool(data.sensordata[adr] > 0))
                continue
            bodies = self.model.geom_bodyid
            out.append(any({bodies[c.geom1], bodies[c.geom2]} == {pad, self.cube} for c in data.contact[:data.ncon]))
        return out[0], out[1]

    # --- episodes (unilab play) -------------------------------------------------------------
    def reset_object(self, model: mujoco.MjModel, data: mujoco.MjData, rng: np.random.Generator) -> None:
        """Place the cube, draw its mass and friction as the task's reset does; arm targets at the pose, gripper open."""
        o = self.spec.object
        g = self.cube_geom
        if not np.allclose(model.geom_size[g], self.half):  # the edge training used (the task sets it when it builds the model)
            model.geom_size[g] = self.half
            model.geom_rbound[g] = self.half * math.sqrt(3.0)
            model.geom_aabb[g, 3:] = self.half
        mass = rng.uniform(*o.mass)
        model.body_mass[self.cube] = mass
        model.body_inertia[self.cube] = mass * o.size ** 2 / 6.0
        model.geom_friction[g, 0] = rng.uniform(*o.friction)
        if self._scratch is None:
            self._scratch = mujoco.MjData(model)
        mujoco.mj_setConst(model, self._scratch)  # the constants derived from the mass, as the task's set_const
        yaw = rng.uniform(*o.yaw)
        q, d = self.cube_q, self.cube_d
        data.qpos[q:q + 7] = (rng.uniform(*o.x), rng.uniform(*o.y), o.table_z + self.half,
                              math.cos(0.5 * yaw), 0.0, 0.0, math.sin(0.5 * yaw))
        data.qvel[d:d + 6] = 0.0
        data.ctrl[self.arm_act] = data.qpos[self.arm_q]
        data.ctrl[self.gripper] = self.spec.gripper.ctrl_open


class LiftRule:
    """The grasp task's episode end for a plain ``MjData`` (kinematics current): success when the
    cube is grasped (both pads touch it and the site is within half an edge of its centre) with its
    bottom at ``success_height`` above the table for ``success_hold_steps`` control steps in a
    row; failure when the cube leaves the table."""

    def __init__(self, io: GraspIO) -> None:
        self.io = io
        self.reset()

    def reset(self) -> None:
        self.hold_steps, self.success, self.failed = 0, False, False

    def step(self, data: mujoco.MjData) -> bool:
        """One control step's check; ``True`` when the episode ends (``success`` or ``failed`` says how)."""
        io, o = self.io, self.io.spec.object
        cube = data.qpos[io.cube_q:io.cube_q + 3]
        dist_sq = float(np.sum((cube - data.site_xpos[io.site]) ** 2))
        left, right = io.pad_contacts(data)
        grasped = left and right and dist_sq <= io.half * io.half
        height = cube[2] - o.table_z - io.half
        self.hold_steps = self.hold_steps + 1 if grasped and height >= o.success_height else 0
        self.success = self.hold_steps >= o.success_hold_steps
        self.failed = bool(height < -o.drop_depth or not (o.table_x[0] <= cube[0] <= o.table_x[1])
                           or not (o.table_y[0] <= cube[1] <= o.table_y[1])) and not self.success
        return self.success or self.failed


def grasp_io(spec: Any, model: mujoco.MjModel) -> GraspIO | None:
    """The grasp section bound to ``model`` (``PolicyIO.grasp``), or ``None`` for a spec without one."""
    names = [g.name for g in spec.observation.groups if g.name in GRASP_GROUPS]
    if getattr(spec, "grasp", None) is None:
        if names:
            raise SpecError(f"observation groups {names} need the spec's grasp section")
        return None
    return GraspIO(spec, model)


# --- observation groups ---------------------------------------------------------------------------


def _io(io: Any) -> GraspIO:
    if io.grasp is None:
        raise SpecError("this observation group needs the spec's grasp section")
    return io.grasp


def _gripper(io, data, state):
    g = _io(io)
    return (float(np.linalg.norm(data.xpos[g.pads[0]] - data.xpos[g.pads[1]])),)


def _object_quat(io, data, state):
    g = _io(io)
    return quat_conj_mul(data.site_xquat[g.site], data.qpos[g.cube_q + 3:g.cube_q + 7])


def _object_vel(io, data, state):
    g = _io(io)
    site_vel = g.jacobian(data)[:3] @ data.qvel[g.arm_d]
    return data.qvel[g.cube_d:g.cube_d + 3] - site_vel


#: grasp observation group name -> builder ``(io, data, state) -> values`` (merged into reference.GROUP_BUILDERS)
GRASP_BUILDERS = {
    "gripper": _gripper,
    "ee_quat": lambda io, data, state: data.site_xquat[_io(io).site],
    "object_pos": lambda io, data, state: _io(io).object_pos(data) - data.site_xpos[io.grasp.site],
    "object_quat": _object_quat,
    "object_vel": _object_vel,
    "object_ang_vel": lambda io, data, state: data.qvel[_io(io).cube_d + 3:io.grasp.cube_d + 6],
    "target_height": lambda io, data, state: state.command[:1],
    "target_gap": lambda io, data, state: state.command[0] - data.qpos[_io(io).cube_q + 2],
    "ee_target": lambda io, data, state: state.ee_target - data.site_xpos[_io(io).site],
}


# --- from the task (unilab export) ------------------------------------------------------------


def grasp_parts(task: Any, max_steps: int) -> tuple[GraspSpec, dict[str, Any], Command, Episode] | None:
    """``(grasp section, action fields, command, episode)`` of a pick task's deploy spec, or ``None``
    for a task without an object to pick. Reads the task's config, model and controller constants."""
    cfg = task.config
    if not hasattr(cfg, "cube_size"):
        return None
    from unilab_robot.assets import ur5e_2f85 as scene  # the scene's names (Menagerie's), as the task reads them

    model = task.model
    gripper = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, scene.GRIPPER_ACTUATOR)
    grip_low, grip_high = (float(v) for v in model.actuator_ctrlrange[gripper])
    fl = lambda values: tuple(float(v) for v in values)  # noqa: E731
    section = GraspSpec(
        controller=EndEffectorController(
            max_target_lead=float(cfg.max_target_lead), workspace_low=fl(cfg.workspace_low),
            workspace_high=fl(cfg.workspace_high), orientation=fl(np.asarray(task._goal_rot).ravel()),
            damping=float(cfg.ik_damping), max_joint_step=float(cfg.max_joint_step)),
        gripper=Gripper(actuator=scene.GRIPPER_ACTUATOR, ctrl_open=grip_low, ctrl_closed=grip_high,
                        pad_bodies=tuple(scene.PAD_BODIES)),
        object=GraspObject(
            body=scene.OBJECT_BODY, size=float(cfg.cube_size), table_z=float(scene.TABLE_TOP_Z),
            table_x=fl(scene.TABLE_X), table_y=fl(scene.TABLE_Y), drop_depth=0.05,
            x=fl(cfg.cube_x), y=fl(cfg.cube_y), yaw=fl(cfg.cube_yaw), mass=fl(cfg.cube_mass),
            friction=fl(cfg.cube_friction), success_height=float(cfg.success_height),
            success_hold_steps=int(round(cfg.success_hold_s / cfg.control_dt))),
    )
    action = dict(mode="ee_delta", target_low=fl(task._low), target_high=fl(task._high))
    height = float(scene.TABLE_TOP_Z + 0.5 * cfg.cube_size + cfg.lift_target)
    command = Command(kind="lift", names=("height",), units=("m",), ranges=((height, height),))
    episode = Episode(max_steps=int(max_steps), reset_joint_range=float(cfg.reset_joint_range))
    return section, action, command, episode
