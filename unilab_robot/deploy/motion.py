"""Motion tracking on the robot side: the spec's ``motion`` section, the reference a policy follows, its groups.

A motion-tracking policy (``UniLab/G1Track-v0``) is commanded a clip, not a velocity: the spec's
``command.kind`` is ``"motion"`` (no command values) and its ``motion`` section (:class:`MotionSpec`)
names the clips by file name. ``unilab export`` copies the motion files (docs/motion.md's layout)
beside ``policy.onnx``; :func:`unilab_robot.deploy.spec.load_spec` resolves the names against the
folder it read the spec from (``MotionSpec.paths``, never written). :class:`MotionIO` loads them
against the robot's model and resamples them to the control rate with the task's own code
(:mod:`unilab_robot.deploy.motion_reference`), so the reference groups hold the env's numbers:

================== =================================================================================
group              value (``f``: the controller's frame in the clip, ``L`` its frames, held at L - 1)
================== =================================================================================
``ref_joint_pos``  reference joints of frames ``f + 1 .. f + future_frames`` minus ``action.home``
``ref_joint_vel``  reference joint velocities of those frames
``ref_phase``      ``f / (L - 1)``
``ref_anchor_ori`` the frame ``f + 1`` anchor (pelvis) orientation in the robot's pelvis frame (the IMU
                   quaternion, normalized as MuJoCo does), first two columns of the rotation, row-major
================== =================================================================================

The controller's place in the clip is :class:`MotionState` (``ControllerState.motion``): the clip,
the frame, and a heading offset. A robot's IMU measures yaw from wherever it booted, not in the
clip's world frame, so :meth:`MotionIO.align` turns the reference about the vertical by the
difference between the robot's heading and the clip's at the start (BeyondMimic's deployment does
the same); without an alignment (the env, and the test that compares with it) the numbers are the
env's bit for bit. :meth:`MotionIO.advance` moves one frame per control step; at the clip's last
frame the reference is held there (``clip_end: hold``, as the env's single env does: the policy keeps
balancing on the last pose). The episode rules are the task's: :meth:`MotionIO.place` puts a simulated
robot on a reference frame (reference-state initialization, with ``reset_joint_noise``);
:meth:`MotionIO.terminated` is the task's termination (anchor height, anchor tilt against the
reference's, end-effector heights).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from unilab_robot.deploy.motion_file import MotionFormatError, model_names
from unilab_robot.deploy.motion_reference import MotionReference, load_reference
from unilab_robot.deploy.sections import SpecError, build_section

CLIP_ENDS = ("hold",)
MOTION_GROUPS = ("ref_joint_pos", "ref_joint_vel", "ref_phase", "ref_anchor_ori")


@dataclass(frozen=True)
class MotionSpec:
    """The spec's ``motion`` section: the clips a motion-tracking policy follows and the task's episode rules."""

    clips: tuple[str, ...]          # motion file names (``CMU_016_22.npz``), in the spec's folder; clip i is task clip i
    future_frames: int              # reference frames ahead in ref_joint_pos / ref_joint_vel
    anchor_body: str                # the body the reference is anchored at (the floating base, the IMU's)
    end_effectors: tuple[str, ...]  # bodies whose height ends an episode
    anchor_z_threshold: float       # m: |anchor height - reference's| beyond it ends an episode
    anchor_ori_threshold: float     # |gravity_z in the anchor frame - reference's| beyond it ends an episode
    ee_z_threshold: float           # m: |end-effector height - reference's| beyond it ends an episode
    reset_joint_noise: float = 0.0  # rad, uniform, on the reference joints at a reset (simulated robots)
    clip_end: str = "hold"          # after the clip's last frame: the reference holds it
    #: where the files are (resolved by load_spec from the spec's folder; never written)
    paths: tuple[str, ...] = field(default=(), compare=False)

    @property
    def names(self) -> tuple[str, ...]:
        """The clips' names (file names without ``.npz``): what ``--clip`` takes."""
        return tuple(Path(c).stem for c in self.clips)

    def at(self, folder: str | Path) -> "MotionSpec":
        """This section with its clips found in ``folder``."""
        import dataclasses

        return dataclasses.replace(self, paths=tuple(str(Path(folder) / c) for c in self.clips))


def motion_from_dict(data: Any, where: str = "spec.motion") -> MotionSpec | None:
    """The spec's ``motion`` section from its JSON object (``None`` stays ``None``)."""
    if data is None:
        return None
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k != "paths"}
    return build_section(MotionSpec, data, where)


def _need(condition: bool, message: str) -> None:
    if not condition:
        raise SpecError(message)


def validate_motion(spec: Any) -> None:
    """:class:`SpecError` when the ``motion`` section, the command kind and the reference groups do not fit."""
    m, c = spec.motion, spec.command
    _need(m is not None, f"command.kind 'motion' needs the spec's motion section (its clips and episode rules)")
    _need(c.kind == "motion", f"a spec with a motion section is commanded a clip: command.kind must be 'motion', "
                              f"got {c.kind!r}")
    _need(isinstance(m, MotionSpec), f"motion must be a MotionSpec, got {type(m).__name__}")
    _need(len(m.clips) >= 1, "motion.clips must name at least one motion file")
    for name in m.clips:
        _need(isinstance(name, str) and name.endswith(".npz") and Path(name).name == name,
              f"motion.clips holds file names beside the spec (CMU_016_22.npz), got {name!r}")
    _need(len(set(m.clips)) == len(m.clips), f"motion.clips names a file twice: {list(m.clips)}")
    _need(isinstance(m.future_frames, int) and m.future_frames >= 1,
          f"motion.future_frames must be an int >= 1, got {m.future_frames!r}")
    _need(m.anchor_body == spec.model.root_body,
          f"motion.anchor_body must be the floating base model.root_body ({spec.model.root_body!r}: the IMU's body), "
          f"got {m.anchor_body!r}")
    for key in ("anchor_z_threshold", "anchor_ori_threshold", "ee_z_threshold"):
        value = getattr(m, key)
        _need(isinstance(value, (int, float)) and math.isfinite(value) and value > 0,
              f"motion.{key} must be a number > 0, got {value!r}")
    _need(isinstance(m.reset_joint_noise, (int, float)) and 0 <= m.reset_joint_noise <= 0.5,
          f"motion.reset_joint_noise must be in [0, 0.5] rad, got {m.reset_joint_noise!r}")
    _need(m.clip_end in CLIP_ENDS, f"motion.clip_end must be one of {CLIP_ENDS}, got {m.clip_end!r}")
    sizes = {"ref_joint_pos": m.future_frames * spec.action.size, "ref_joint_vel": m.future_frames * spec.action.size,
             "ref_phase": 1, "ref_anchor_ori": 6}
    for g in spec.observation.groups:
        if g.name in sizes:
            _need(g.size == sizes[g.name], f"observation group {g.name!r} has {g.size} values; with "
                                           f"{m.future_frames} future frames of {spec.action.size} joints it has "
                                           f"{sizes[g.name]}")


@dataclass
class MotionState:
    """Where the controller is in the reference: ``clip`` (index into the spec's clips), ``frame`` (in the clip),
    ``heading``: ``(w, 0, 0, z)`` turning the reference about the vertical (``None``: the clip's own world frame)."""

    clip: int
    frame: int
    heading: np.ndarray | None = None


def _qmul(a0, a1, a2, a3, b0, b1, b2, b3):
    """Quaternion product, term for term the task kernel's (:func:`unilab_envs.tasks.g1_track_kernels.qmul`)."""
    return (a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3, a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2,
            a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1, a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0)


def rot6d(q0, q1, q2, q3) -> tuple[float, ...]:
    """The first two columns of ``R(q)``, row by row (BeyondMimic's 6D), as the task kernel writes them."""
    return (1.0 - 2.0 * (q2 * q2 + q3 * q3), 2.0 * (q1 * q2 - q0 * q3), 2.0 * (q1 * q2 + q0 * q3),
            1.0 - 2.0 * (q1 * q1 + q3 * q3), 2.0 * (q1 * q3 - q0 * q2), 2.0 * (q2 * q3 + q0 * q1))


def yaw(q) -> float:
    """Heading (rad) of a ``(w, x, y, z)`` quaternion: its x axis projected on the ground."""
    q0, q1, q2, q3 = (float(v) for v in q)
    return math.atan2(2.0 * (q0 * q3 + q1 * q2), 1.0 - 2.0 * (q2 * q2 + q3 * q3))


def gravity_z(q) -> float:
    """z of the unit gravity direction seen in the frame of ``q``."""
    return -(1.0 - 2.0 * (float(q[1]) ** 2 + float(q[2]) ** 2))


class MotionIO:
    """The spec's clips loaded against ``model`` at the control rate, bound to the spec's joints and bodies.

    :class:`SpecError` in one line when a clip file is missing, is not a motion file, or does not fit the
    model (a joint or body name it lacks or adds)."""

    def __init__(self, spec: Any, model: mujoco.MjModel, home: np.ndarray) -> None:
        m = spec.motion
        self.section, self.model = m, model
        if not m.paths:
            raise SpecError(f"the deploy spec's motion clips {list(m.clips)} have no folder: load the spec from a file "
                            f"(load_spec(PATH): the clips are beside it, where `unilab export` copies them)")
        for name, path in zip(m.clips, m.paths):
            if not Path(path).is_file():
                raise SpecError(f"the deploy spec names motion clip {name!r}, which is not in {Path(path).parent} "
                                f"(`unilab export` copies the clips beside policy.onnx; copy it there)")
        try:
            self.reference: MotionReference = load_reference(m.paths, model, 1.0 / spec.timing.control_dt)
        except MotionFormatError as e:
            raise SpecError(f"motion clip {e}") from None
        ref = self.reference
        columns = {n: k for k, n in enumerate(model_names(model)[0])}
        self.ref_joint = np.array([columns[n] for n in spec.action.joint_names], dtype=np.int64)
        bodies = {n: k for k, n in enumerate(ref.body_names)}
        missing = [b for b in (m.anchor_body, *m.end_effectors) if b not in bodies]
        if missing:
            raise SpecError(f"motion clips {list(m.clips)} lack the bodies {missing} the spec's episode rules need")
        self.ref_anchor = bodies[m.anchor_body]
        self.ref_ee = np.array([bodies[b] for b in m.end_effectors], dtype=np.int64)
        self.anchor = int(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, m.anchor_body))
        self.ee = np.array([mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, b) for b in m.end_effectors], np.int64)
        self.home = np.asarray(home, dtype=np.float64)
        self.future = int(m.future_frames)
        self._ref_joint_pos = ref.joint_pos[:, self.ref_joint]  # (F, J) action order (a copy: the same values)
        self._ref_joint_vel = ref.joint_vel[:, self.ref_joint]
        self._quat = np.empty(4)

    # --- the clip and the frame ------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return self.reference.names

    def clip_index(self, clip: str | int | None) -> int:
        """The index of clip ``clip`` (a name, ``CMU_016_22``, or an index); ``None``: the first."""
        if clip is None:
            return 0
        if isinstance(clip, (int, np.integer)):
            if not 0 <= int(clip) < len(self.names):
                raise SpecError(f"clip index {clip} out of range: the spec has {len(self.names)} clips")
            return int(clip)
        name = Path(str(clip)).stem
        if name not in self.names:
            shown = ", ".join(self.names[:8]) + (" ..." if len(self.names) > 8 else "")
            raise SpecError(f"no clip {clip!r} in the deploy spec; its clips: {shown}")
        return self.names.index(name)

    def length(self, clip: int) -> int:
        """Frames of clip ``clip`` at the control rate."""
        return int(self.reference.lengths[clip])

    def start_joints(self, clip: int = 0) -> np.ndarray:
        """The joint angles of clip ``clip``'s first frame, action order (where a robot is moved before it starts)."""
        return self._ref_joint_pos[self.reference.offsets[clip]].copy()

    def start(self, clip: int = 0, frame: int = 0) -> MotionState:
        self.reference.frame(clip, frame)  # IndexError outside the clip
        return MotionState(int(clip), int(frame))

    def advance(self, state: MotionState) -> None:
        """One control step on: the next frame, held at the clip's last."""
        state.frame = min(state.frame + 1, self.length(state.clip) - 1)

    def at_end(self, state: MotionState) -> bool:
        return state.frame >= self.length(state.clip) - 1

    def global_frame(self, state: MotionState, ahead: int = 0) -> int:
        """The reference's row ``ahead`` frames after the state's, held at its clip's last frame."""
        c = state.clip
        return int(self.reference.offsets[c] + min(state.frame + ahead, self.length(c) - 1))

    def align(self, state: MotionState, base_quat: np.ndarray) -> None:
        """Turn the reference about the vertical so that its heading at the state's frame is the robot's now."""
        offset = yaw(base_quat) - yaw(self.reference.body_quat[self.global_frame(state), self.ref_anchor])
        state.heading = np.array([math.cos(0.5 * offset), 0.0, 0.0, math.sin(0.5 * offset)])

    def reference_quat(self, state: MotionState, g: int) -> tuple[float, float, float, float]:
        """The reference anchor's orientation at row ``g``, turned by the state's heading."""
        r = self.reference.body_quat[g, self.ref_anchor]
        if state.heading is None:
            return float(r[0]), float(r[1]), float(r[2]), float(r[3])
        h = state.heading
        return _qmul(float(h[0]), float(h[1]), float(h[2]), float(h[3]), float(r[0]), float(r[1]), float(r[2]),
                     float(r[3]))

    # --- the groups ------------------------------------------------------------------------
    def ref_joint_pos(self, state: MotionState) -> np.ndarray:
        rows = [self.global_frame(state, f + 1) for f in range(self.future)]
        return (self._ref_joint_pos[rows] - self.home).ravel()

    def ref_joint_vel(self, state: MotionState) -> np.ndarray:
        rows = [self.global_frame(state, f + 1) for f in range(self.future)]
        return self._ref_joint_vel[rows].ravel()

    def ref_phase(self, state: MotionState) -> float:
        return state.frame / max(self.length(state.clip) - 1, 1)

    def ref_anchor_ori(self, base_quat: np.ndarray, state: MotionState) -> tuple[float, ...]:
        """The next frame's reference anchor orientation in the frame of ``base_quat`` (normalized as
        ``mj_kinematics`` normalizes a free joint's quaternion), 6D."""
        x = self._quat
        x[:] = base_quat
        mujoco.mju_normalize4(x)
        r0, r1, r2, r3 = self.reference_quat(state, self.global_frame(state, 1))
        return rot6d(*_qmul(float(x[0]), -float(x[1]), -float(x[2]), -float(x[3]), r0, r1, r2, r3))

    # --- episodes (simulated robots) -------------------------------------------------------
    def reference_qpos(self, state: MotionState, root_q: int, joint_q: np.ndarray, qpos: np.ndarray) -> None:
        """Write the reference pose of the state's frame into ``qpos`` (root position and orientation, joints)."""
        g, ref = self.global_frame(state), self.reference
        qpos[root_q:root_q + 3] = ref.root_pos[g]
        qpos[root_q + 3:root_q + 7] = ref.root_quat[g]
        qpos[joint_q] = self._ref_joint_pos[g]

    def place(self, data: mujoco.MjData, state: MotionState, root_q: int, root_d: int, joint_q: np.ndarray,
              joint_d: np.ndarray, rng: np.random.Generator) -> None:
        """Put the robot on the state's frame, as the task's reset does: root pose and velocity, joints (plus
        uniform ``reset_joint_noise``) and joint velocities of the reference."""
        g, ref = self.global_frame(state), self.reference
        self.reference_qpos(state, root_q, joint_q, data.qpos)
        noise = float(self.section.reset_joint_noise)
        if noise > 0:
            data.qpos[joint_q] += rng.uniform(-noise, noise, len(joint_q))
        data.qvel[root_d:root_d + 3] = ref.body_lin_vel[g, self.ref_anchor]  # world frame
        rot = np.empty(9)
        mujoco.mju_quat2Mat(rot, ref.root_quat[g])
        data.qvel[root_d + 3:root_d + 6] = rot.reshape(3, 3).T @ ref.body_ang_vel[g, self.ref_anchor]  # body frame
        data.qvel[joint_d] = self._ref_joint_vel[g]

    def terminated(self, data: mujoco.MjData, state: MotionState) -> bool:
        """The task's termination at the state's frame: the anchor's height off by more than ``anchor_z_threshold``,
        its gravity z off the reference's by more than ``anchor_ori_threshold``, or an end effector's height off by
        more than ``ee_z_threshold``. Reads ``xpos`` / ``xquat``: the kinematics must be current."""
        m, g, ref = self.section, self.global_frame(state), self.reference
        if abs(data.xpos[self.anchor, 2] - ref.body_pos[g, self.ref_anchor, 2]) > m.anchor_z_threshold:
            return True
        if abs(gravity_z(data.xquat[self.anchor]) - gravity_z(ref.body_quat[g, self.ref_anchor])) > m.anchor_ori_threshold:
            return True
        return bool(np.any(np.abs(data.xpos[self.ee, 2] - ref.body_pos[g, self.ref_ee, 2]) > m.ee_z_threshold))


def motion_io(spec: Any, model: mujoco.MjModel, home: np.ndarray) -> MotionIO | None:
    """The spec's :class:`MotionIO` on ``model``, or ``None`` for a spec without a motion section."""
    return MotionIO(spec, model, home) if getattr(spec, "motion", None) is not None else None


def _motion(io: Any, name: str) -> MotionIO:
    if io.motion is None:
        raise SpecError(f"observation group {name!r} needs the spec's motion section (the clips it follows)")
    return io.motion


def _state(state: Any, name: str) -> MotionState:
    if state.motion is None:
        raise SpecError(f"observation group {name!r} needs the controller's place in the clip (ControllerState.motion: "
                        f"PolicyIO.initial_state sets it)")
    return state.motion


#: the reference groups' robot-side builders ``(io, data, state) -> values`` (in ``GROUP_BUILDERS``)
MOTION_BUILDERS = {
    "ref_joint_pos": lambda io, data, state: _motion(io, "ref_joint_pos").ref_joint_pos(_state(state, "ref_joint_pos")),
    "ref_joint_vel": lambda io, data, state: _motion(io, "ref_joint_vel").ref_joint_vel(_state(state, "ref_joint_vel")),
    "ref_phase": lambda io, data, state: _motion(io, "ref_phase").ref_phase(_state(state, "ref_phase")),
    "ref_anchor_ori": lambda io, data, state: _motion(io, "ref_anchor_ori").ref_anchor_ori(
        io.base_quat(data), _state(state, "ref_anchor_ori")),
}
