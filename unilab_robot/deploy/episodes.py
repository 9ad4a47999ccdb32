"""Episodes as training runs them, for a plain ``MjData``: reset randomization, commands, falls, success.

(The grasp's object placement and its success and off-table ends live with its controller:
:meth:`unilab_robot.deploy.grasp.GraspIO.reset_object`, :class:`unilab_robot.deploy.grasp.LiftRule`;
a motion-tracking spec's reset onto a clip's first frame and its termination, with its reference:
:meth:`unilab_robot.deploy.motion.MotionIO.place`, :meth:`~unilab_robot.deploy.motion.MotionIO.terminated`.)

Everything comes from the deploy spec's ``episode`` and ``command`` sections, drawn from a
NumPy generator (the same distributions as the task kernels, not their random sequence).
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from unilab_robot.deploy.height_scan import base_ground, place_on_terrain
from unilab_robot.deploy.reference import ControllerState, PolicyIO


def sample_command(io: PolicyIO, rng: np.random.Generator) -> np.ndarray:
    """A velocity command drawn as in training (zero with ``zero_probability``, else uniform per axis and straight
    ahead with ``straight_probability``), or a reach target (world, m)."""
    c = io.spec.command
    if c.kind == "motion":  # a clip, chosen by whoever plays it: no values
        return np.zeros(0)
    if c.kind == "reach_target":
        (r0, r1), (a0, a1), (h0, h1) = c.ranges
        r, phi = rng.uniform(r0, r1), c.azimuth_offset + rng.uniform(a0, a1)
        return np.array([r * math.cos(phi), r * math.sin(phi), rng.uniform(h0, h1)])
    if rng.random() < c.zero_probability:
        return np.zeros(len(c.names))
    command = np.array([rng.uniform(lo, hi) for lo, hi in c.ranges])
    if c.straight_probability > 0.0 and rng.random() < c.straight_probability:
        command[1:] = 0.0
    return command


def show_target(io: PolicyIO, data: mujoco.MjData, target: np.ndarray) -> None:
    """Move the model's target marker (a mocap body), when it has one."""
    if io.target_mocap >= 0:
        data.mocap_pos[io.target_mocap] = target


def reset_episode(io: PolicyIO, model: mujoco.MjModel, data: mujoco.MjData, rng: np.random.Generator,
                  command: np.ndarray | None = None, clip: str | int | None = None) -> ControllerState:
    """Reset ``data`` to the spec's keyframe, randomize it as training does, and return a fresh state.

    ``command``: keep this command (or target) instead of drawing one. A motion-tracking spec's robot
    starts on the first frame of ``clip`` (a name or an index; ``None``: drawn uniformly), as the task's
    per-clip evaluation starts it (:func:`start_on_clip`).
    """
    if io.motion is not None:
        return start_on_clip(io, model, data, rng, clip)
    spec, ep = io.spec, io.spec.episode
    key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, spec.model.home_keyframe) if spec.model.home_keyframe else -1
    if key >= 0:
        mujoco.mj_resetDataKeyframe(model, data, key)
    else:
        mujoco.mj_resetData(model, data)
        data.qpos[io.joint_q] = io.home
    if io.root_q >= 0:
        q = io.root_q
        data.qpos[q:q + 2] += rng.uniform(-ep.reset_xy_range, ep.reset_xy_range, 2)
        if ep.reset_random_yaw:
            yaw = rng.uniform(-math.pi, math.pi)
            data.qpos[q + 3:q + 7] = (math.cos(0.5 * yaw), 0.0, 0.0, math.sin(0.5 * yaw))
    joints = io.home + rng.uniform(-ep.reset_joint_range, ep.reset_joint_range, io.home.shape)
    jids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n) for n in spec.action.joint_names]
    limited = model.jnt_limited[jids].astype(bool)
    low = np.where(limited, model.jnt_range[jids, 0], -np.inf)
    high = np.where(limited, model.jnt_range[jids, 1], np.inf)
    if spec.action.mode == "target_delta":
        low, high = np.maximum(low, io.target_low), np.minimum(high, io.target_high)
    data.qpos[io.joint_q] = np.clip(joints, low, high)
    if io.root_d >= 0:
        data.qvel[io.root_d:io.root_d + 3] = rng.uniform(-ep.reset_base_velocity, ep.reset_base_velocity, 3)
    if getattr(spec, "terrain", None) is not None:  # onto a start tile of the terrain, as training's first episodes
        place_on_terrain(io, data, rng)
    command = sample_command(io, rng) if command is None else np.asarray(command, dtype=np.float64)
    phase = rng.uniform(0.0, 2.0 * math.pi) if spec.gait else 0.0
    if spec.command.kind == "reach_target":
        state = io.initial_state(data, target=command, phase=phase)
        show_target(io, data, command)
    else:
        state = io.initial_state(data, command=command, phase=phase)
    if state.joint_target is not None:
        data.ctrl[io.actuators] = state.joint_target
    else:
        data.ctrl[io.actuators] = io.home
    if io.grasp is not None:  # the object placed, weighed and its friction drawn as the task does; the gripper open
        io.grasp.reset_object(model, data, rng)
    mujoco.mj_forward(model, data)
    return state


def start_on_clip(io: PolicyIO, model: mujoco.MjModel, data: mujoco.MjData, rng: np.random.Generator,
                  clip: str | int | None = None) -> ControllerState:
    """A motion-tracking episode: the robot on the first frame of ``clip`` (``None``: drawn uniformly) with the
    reference's velocities and ``reset_joint_noise`` (reference-state initialization), the PD targets there."""
    mujoco.mj_resetData(model, data)
    index = int(rng.integers(len(io.motion.names))) if clip is None else io.motion.clip_index(clip)
    state = io.initial_state(data)
    state.motion = io.motion.start(index, 0)
    io.motion.place(data, state.motion, io.root_q, io.root_d, io.joint_q, io.joint_d, rng)
    data.ctrl[io.actuators] = data.qpos[io.joint_q]
    mujoco.mj_forward(model, data)
    return state


def fell(io: PolicyIO, data: mujoco.MjData, state: ControllerState | None = None) -> bool:
    """The task's termination: tilt beyond ``max_tilt`` or base below ``min_base_height`` (from the ground under it).

    A motion-tracking spec's is its own (:meth:`~unilab_robot.deploy.motion.MotionIO.terminated`), at the frame of
    ``state`` (required then); its kinematics are brought up to date with ``qpos`` first."""
    if io.motion is not None:
        if state is None or state.motion is None:
            raise ValueError("a motion-tracking spec's fall rule compares with the reference: pass the controller state")
        mujoco.mj_kinematics(io.model, data)
        return io.motion.terminated(data, state.motion)
    ep = io.spec.episode
    if io.root_q < 0 or ep.max_tilt is None:
        return False
    height = data.qpos[io.root_q + 2] - base_ground(io, data)
    return bool(io.gravity(data)[2] > -math.cos(ep.max_tilt) or height < ep.min_base_height)


def distance_to_target(io: PolicyIO, data: mujoco.MjData, state: ControllerState) -> float:
    """Reach tasks: end effector to target (m); the kinematics must be current."""
    return float(np.linalg.norm(state.target - io.ee_pos(data)))
