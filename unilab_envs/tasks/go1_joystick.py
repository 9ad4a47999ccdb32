"""``UniLab/Go1Joystick-v0``: a Go1-like quadruped follows a velocity joystick.

Commands (forward, sideways, yaw rate) are resampled every
``command_resample_time`` seconds; the policy runs at 50 Hz and sets PD
position targets around the home pose. A trot gait phase (two diagonal pairs)
is in the observation and drives the ``feet_phase`` term.

Observation (50 floats, SI units, body frame):

==============  =====  ==============================================
group           size   content
==============  =====  ==============================================
linvel          3      base linear velocity
gyro            3      base angular velocity
gravity         3      unit gravity direction
joint_pos       12     joint angles minus the home pose
joint_vel       12     joint velocities
last_action     12     previous action
command         3      (vx, vy, yaw rate) command
phase           2      sin, cos of the gait phase
==============  =====  ==============================================

Privileged observation for the critic (25 floats): base height, foot contacts
(4), foot air times (4), foot heights (4), actuator forces (12). These are
extras: a critic needs them together with the policy observation (the bundled
PPO's critic reads the policy observation followed by them).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numba as nb
import numpy as np

from unilab_envs.assets import go1 as robot
from unilab_envs.core.config import build_config, require, require_range, require_timing
from unilab_envs.core.model import actuators_for_joints, free_joint_of, load_model, object_ids
from unilab_envs.core.prefetch import PREFETCH_DISTANCE, prefetch_row
from unilab_envs.core.quat import advance_phase, exp_tracking, projected_gravity, rotate_inverse
from unilab_envs.core.rng import uniform, uniform_range
from unilab_envs.core.single_env import UniLabEnv
from unilab_envs.core.task import Task
from unilab_envs.core.vector_env import UniLabVectorEnv

OBS_GROUPS = {
    "linvel": slice(0, 3),
    "gyro": slice(3, 6),
    "gravity": slice(6, 9),
    "joint_pos": slice(9, 21),
    "joint_vel": slice(21, 33),
    "last_action": slice(33, 45),
    "command": slice(45, 48),
    "phase": slice(48, 50),
}
OBS_SIZE = 50
PRIVILEGED_OBS_SIZE = 25
NUM_JOINTS = 12
NUM_FEET = 4


@dataclass(frozen=True)
class Go1RewardScales:
    """Signed scales of the named reward terms (weight = scale * control_dt).

    ``positive_clip`` must stay the last term (it reads the sum of the others).
    """

    tracking_lin_vel: float = 1.5
    tracking_ang_vel: float = 0.8
    lin_vel_z: float = -2.0
    ang_vel_xy: float = -0.05
    orientation: float = -5.0
    base_height: float = -10.0
    torques: float = -2e-4
    action_rate: float = -0.01
    pose: float = -0.1
    feet_air_time: float = 0.5
    feet_phase: float = 1.0
    feet_slip: float = -0.1
    joint_limits: float = -1.0
    stand_still: float = -0.5
    termination: float = -20.0
    # +scale per step while not fallen: makes surviving worth more than the fall penalty
    alive: float = 0.0
    # Playground-style clip of the per-step total at >= 0, as its own visible term:
    # value = positive_clip * max(0, -(sum of the other terms)) per step, so 1.0 clips the
    # reward at zero, 0.0 (default) is off, and reward == sum of the terms still holds.
    positive_clip: float = 0.0


REWARD_NAMES = tuple(f.name for f in dataclasses.fields(Go1RewardScales))


@dataclass(frozen=True)
class Go1JoystickConfig:
    """Everything the Go1 joystick task can be told; unknown keys are rejected."""

    model_path: str = str(robot.MJCF_PATH)
    sim_dt: float = 0.004
    control_dt: float = 0.02
    action_scale: float = 0.5
    # commands: (low, high) per axis, resampled every command_resample_time seconds
    command_vx: tuple[float, float] = (-0.6, 1.0)
    command_vy: tuple[float, float] = (-0.4, 0.4)
    command_yaw: tuple[float, float] = (-1.0, 1.0)
    command_resample_time: float = 5.0
    zero_command_probability: float = 0.1
    # gait
    gait_frequency: float = 2.0
    swing_height: float = 0.08
    # width (m^2) of the feet_phase kernel exp(-sum of squared foot-height errors / width)
    feet_phase_width: float = 0.0025
    # reward shaping constants
    tracking_sigma: float = 0.25
    base_height_target: float = 0.27
    air_time_target: float = 0.1
    soft_joint_limit: float = 0.9
    # termination: tilt beyond this angle (rad) or trunk below this height (m)
    max_tilt: float = 1.0
    min_base_height: float = 0.12
    # reset randomization
    reset_xy_range: float = 0.5
    reset_joint_range: float = 0.1
    reset_base_velocity: float = 0.3
    reward_scales: Go1RewardScales = field(default_factory=Go1RewardScales)

    def validate(self) -> None:
        require_timing(self.sim_dt, self.control_dt)
        require(self.action_scale > 0, f"action_scale must be > 0, got {self.action_scale}")
        for name in ("command_vx", "command_vy", "command_yaw"):
            require_range(name, getattr(self, name))
        require(self.command_resample_time > 0, "command_resample_time must be > 0")
        require(0.0 <= self.zero_command_probability <= 1.0, f"zero_command_probability must be in [0, 1], got {self.zero_command_probability}")
        require(self.gait_frequency > 0, "gait_frequency must be > 0")
        require(self.swing_height >= 0, "swing_height must be >= 0")
        require(self.feet_phase_width > 0, "feet_phase_width must be > 0")
        require(self.tracking_sigma > 0, "tracking_sigma must be > 0")
        require(0 < self.soft_joint_limit <= 1, "soft_joint_limit must be in (0, 1]")
        require(0 < self.max_tilt <= math.pi, "max_tilt must be in (0, pi]")
        for name in ("reset_xy_range", "reset_joint_range", "reset_base_velocity", "min_base_height"):
            require(getattr(self, name) >= 0, f"{name} must be >= 0, got {getattr(self, name)}")


# --- kernels -------------------------------------------------------------------


@nb.njit(parallel=True, cache=True)
def _apply_actions(actions, ctrl, last_action, previous_action, home, actuator_ids, action_scale):
    for i in nb.prange(actions.shape[0]):
        for j in range(actions.shape[1]):
            a = min(max(actions[i, j], -1.0), 1.0)
            previous_action[i, j] = last_action[i, j]
            last_action[i, j] = a
            ctrl[i, actuator_ids[j]] = home[j] + action_scale * a


@nb.njit(inline="always", cache=True)
def _write_obs(i, obs, privileged_obs, qpos, qvel, root_q, root_d, joint_q, joint_d, home, last_action, command, phase, contact, air_time, foot_height, actuator_force, actuator_ids):
    q = qpos[i, root_q + 3 : root_q + 7]
    vx, vy, vz = rotate_inverse(q, qvel[i, root_d], qvel[i, root_d + 1], qvel[i, root_d + 2])
    gx, gy, gz = projected_gravity(q)
    obs[i, 0], obs[i, 1], obs[i, 2] = vx, vy, vz
    obs[i, 3], obs[i, 4], obs[i, 5] = qvel[i, root_d + 3], qvel[i, root_d + 4], qvel[i, root_d + 5]
    obs[i, 6], obs[i, 7], obs[i, 8] = gx, gy, gz
    for j in range(NUM_JOINTS):
        obs[i, 9 + j] = qpos[i, joint_q[j]] - home[j]
        obs[i, 21 + j] = qvel[i, joint_d[j]]
        obs[i, 33 + j] = last_action[i, j]
    obs[i, 45], obs[i, 46], obs[i, 47] = command[i, 0], command[i, 1], command[i, 2]
    obs[i, 48], obs[i, 49] = math.sin(phase[i]), math.cos(phase[i])
    privileged_obs[i, 0] = qpos[i, root_q + 2]
    for f in range(NUM_FEET):
        privileged_obs[i, 1 + f] = 1.0 if contact[i, f] else 0.0
        privileged_obs[i, 5 + f] = air_time[i, f]
        privileged_obs[i, 9 + f] = foot_height[i, f]
    for j in range(NUM_JOINTS):
        privileged_obs[i, 13 + j] = actuator_force[i, actuator_ids[j]]


@nb.njit(inline="always", cache=True)
def _sample_command(i, command, rng, vx_range, vy_range, yaw_range, zero_probability):
    if uniform(rng, i) < zero_probability:
        command[i, 0] = 0.0
        command[i, 1] = 0.0
        command[i, 2] = 0.0
    else:
        command[i, 0] = uniform_range(rng, i, vx_range[0], vx_range[1])
        command[i, 1] = uniform_range(rng, i, vy_range[0], vy_range[1])
        command[i, 2] = uniform_range(rng, i, yaw_range[0], yaw_range[1])


@nb.njit(parallel=True, cache=True)
def _compute(
    obs, privileged_obs, reward_terms, reward, terminated, episode_step, rng,
    qpos, qvel, geom_xpos, actuator_force,
    root_q, root_d, joint_q, joint_d, actuator_ids, foot_geoms, home, joint_low, joint_high, pose_weights,
    last_action, previous_action, command, phase, contact, air_time, foot_height, previous_foot_pos,
    weights, params, vx_range, vy_range, yaw_range, phase_offsets,
):  # fmt: skip
    dt = params[0]
    sigma = params[1]
    height_target = params[2]
    air_target = params[3]
    gait_step = params[4]
    swing_height = params[5]
    foot_radius = params[6]
    cos_max_tilt = params[7]
    min_height = params[8]
    resample_steps = np.int64(params[9])
    zero_probability = params[10]
    phase_width = params[11]
    for i in nb.prange(obs.shape[0]):
        prefetch_row(qpos, i + PREFETCH_DISTANCE)  # qpos / qvel are rows of the batch state, far apart
        prefetch_row(qvel, i + PREFETCH_DISTANCE)
        q = qpos[i, root_q + 3 : root_q + 7]
        vx, vy, vz = rotate_inverse(q, qvel[i, root_d], qvel[i, root_d + 1], qvel[i, root_d + 2])
        wx, wy, wz = qvel[i, root_d + 3], qvel[i, root_d + 4], qvel[i, root_d + 5]
        gx, gy, gz = projected_gravity(q)
        height = qpos[i, root_q + 2]
        moving = (command[i, 0] ** 2 + command[i, 1] ** 2) > 0.01 or abs(command[i, 2]) > 0.1

        torque_sq = 0.0
        action_rate = 0.0
        pose = 0.0
        limits = 0.0
        stand = 0.0
        for j in range(NUM_JOINTS):
            tau = actuator_force[i, actuator_ids[j]]
            torque_sq += tau * tau
            da = last_action[i, j] - previous_action[i, j]
            action_rate += da * da
            dq = qpos[i, joint_q[j]] - home[j]
            pose += pose_weights[j] * dq * dq
            stand += abs(dq)
            qj = qpos[i, joint_q[j]]
            limits += max(0.0, qj - joint_high[j]) + max(0.0, joint_low[j] - qj)

        phase[i] = advance_phase(phase[i], gait_step)
        air_reward = 0.0
        slip = 0.0
        phase_error = 0.0
        for f in range(NUM_FEET):
            g = foot_geoms[f]
            px, py, pz = geom_xpos[i, g, 0], geom_xpos[i, g, 1], geom_xpos[i, g, 2]
            h = pz - foot_radius
            foot_height[i, f] = h
            in_contact = h < 0.01
            first_contact = in_contact and not contact[i, f] and air_time[i, f] > 0.0
            air_time[i, f] += dt
            if first_contact:
                air_reward += air_time[i, f] - air_target
            if in_contact:
                air_time[i, f] = 0.0
                fvx = (px - previous_foot_pos[i, f, 0]) / dt
                fvy = (py - previous_foot_pos[i, f, 1]) / dt
                slip += fvx * fvx + fvy * fvy
            contact[i, f] = in_contact
            previous_foot_pos[i, f, 0], previous_foot_pos[i, f, 1], previous_foot_pos[i, f, 2] = px, py, pz
            s = math.sin(phase[i] + phase_offsets[f])
            target = swing_height * s * s if (moving and s > 0.0) else 0.0
            phase_error += (h - target) ** 2

        fell = gz > -cos_max_tilt or height < min_height
        lin_error = (command[i, 0] - vx) ** 2 + (command[i, 1] - vy) ** 2
        terms = (
            exp_tracking(lin_error, sigma),
            exp_tracking((command[i, 2] - wz) ** 2, sigma),
            vz * vz,
            wx * wx + wy * wy,
            gx * gx + gy * gy,
            (height - height_target) ** 2,
            torque_sq,
            action_rate,
            pose,
            air_reward if moving else 0.0,
            math.exp(-phase_error / phase_width),
            slip,
            limits,
            0.0 if moving else stand,
            1.0 if fell else 0.0,
            0.0 if fell else 1.0,
        )
        total = 0.0
        for k in range(len(terms)):
            value = weights[k] * terms[k]
            reward_terms[i, k] = value
            total += value
        clip = (weights[len(terms)] / dt) * max(0.0, -total)
        reward_terms[i, len(terms)] = clip
        reward[i] = total + clip
        terminated[i] = fell

        if episode_step[i] % resample_steps == 0:
            _sample_command(i, command, rng, vx_range, vy_range, yaw_range, zero_probability)
        _write_obs(i, obs, privileged_obs, qpos, qvel, root_q, root_d, joint_q, joint_d, home, last_action, command, phase, contact, air_time, foot_height, actuator_force, actuator_ids)


@nb.njit(cache=True)
def _reset_envs(
    ids, rng, qpos, qvel, root_q, root_d, joint_q, home, joint_low_hard, joint_high_hard,
    last_action, previous_action, command, phase, contact, air_time, foot_height, previous_foot_pos,
    xy_range, joint_range, base_velocity, foot_radius, vx_range, vy_range, yaw_range, zero_probability,
):  # fmt: skip
    for i in ids:
        qpos[i, root_q] += uniform_range(rng, i, -xy_range, xy_range)
        qpos[i, root_q + 1] += uniform_range(rng, i, -xy_range, xy_range)
        yaw = uniform_range(rng, i, -math.pi, math.pi)
        qpos[i, root_q + 3] = math.cos(0.5 * yaw)
        qpos[i, root_q + 4] = 0.0
        qpos[i, root_q + 5] = 0.0
        qpos[i, root_q + 6] = math.sin(0.5 * yaw)
        for j in range(NUM_JOINTS):
            value = home[j] + uniform_range(rng, i, -joint_range, joint_range)
            qpos[i, joint_q[j]] = min(max(value, joint_low_hard[j]), joint_high_hard[j])
        for d in range(3):
            qvel[i, root_d + d] = uniform_range(rng, i, -base_velocity, base_velocity)
        for j in range(NUM_JOINTS):
            last_action[i, j] = 0.0
            previous_action[i, j] = 0.0
        phase[i] = uniform_range(rng, i, 0.0, 2.0 * math.pi)
        for f in range(NUM_FEET):
            contact[i, f] = True
            air_time[i, f] = 0.0
            foot_height[i, f] = 0.0
            for d in range(3):
                previous_foot_pos[i, f, d] = 0.0
        _sample_command(i, command, rng, vx_range, vy_range, yaw_range, zero_probability)


@nb.njit(parallel=True, cache=True)
def _observe(ids, obs, privileged_obs, qpos, qvel, geom_xpos, root_q, root_d, joint_q, joint_d, home, last_action, command, phase, contact, air_time, foot_height, previous_foot_pos, foot_geoms, foot_radius, actuator_force, actuator_ids):
    for k in nb.prange(ids.shape[0]):
        i = ids[k]
        for f in range(NUM_FEET):
            g = foot_geoms[f]
            for d in range(3):
                previous_foot_pos[i, f, d] = geom_xpos[i, g, d]
            foot_height[i, f] = geom_xpos[i, g, 2] - foot_radius
        _write_obs(i, obs, privileged_obs, qpos, qvel, root_q, root_d, joint_q, joint_d, home, last_action, command, phase, contact, air_time, foot_height, actuator_force, actuator_ids)


# --- the task ------------------------------------------------------------------


class Go1Joystick(Task):
    """The Go1 joystick task (see module docstring)."""

    obs_groups = OBS_GROUPS
    reward_names = REWARD_NAMES
    tracking_body = robot.ROOT_BODY

    def __init__(self, **config: Any) -> None:
        cfg = build_config(Go1JoystickConfig, config, kind="Go1Joystick config key")
        model = load_model(cfg.model_path, cfg.sim_dt)
        super().__init__(model, cfg)
        joint_ids = object_ids(model, mujoco.mjtObj.mjOBJ_JOINT, robot.JOINT_NAMES, "joint")
        self._joint_q = model.jnt_qposadr[joint_ids].astype(np.int64)
        self._joint_d = model.jnt_dofadr[joint_ids].astype(np.int64)
        self._actuator_ids = actuators_for_joints(model, joint_ids)
        self._foot_geoms = object_ids(model, mujoco.mjtObj.mjOBJ_GEOM, robot.FOOT_NAMES, "foot geom")
        self._foot_radius = float(model.geom_size[self._foot_geoms[0], 0])
        self._root_q, self._root_d = free_joint_of(model, robot.ROOT_BODY)
        self._keyframe = int(object_ids(model, mujoco.mjtObj.mjOBJ_KEY, (robot.HOME_KEYFRAME,), "keyframe")[0])
        self._home = model.key_qpos[self._keyframe, self._joint_q].copy()
        low, high = model.jnt_range[joint_ids, 0].copy(), model.jnt_range[joint_ids, 1].copy()
        mid, half = 0.5 * (low + high), 0.5 * (high - low) * cfg.soft_joint_limit
        self._joint_low_hard, self._joint_high_hard = low, high
        self._joint_low, self._joint_high = mid - half, mid + half
        self._pose_weights = np.tile([1.0, 0.5, 0.5], 4)
        scales = cfg.reward_scales
        self._weights = np.array([getattr(scales, name) for name in REWARD_NAMES]) * cfg.control_dt
        self._params = np.array(
            [
                cfg.control_dt,
                cfg.tracking_sigma,
                cfg.base_height_target,
                cfg.air_time_target,
                2.0 * math.pi * cfg.gait_frequency * cfg.control_dt,
                cfg.swing_height,
                self._foot_radius,
                math.cos(cfg.max_tilt),
                cfg.min_base_height,
                max(1, round(cfg.command_resample_time / cfg.control_dt)),
                cfg.zero_command_probability,
                cfg.feet_phase_width,
            ]
        )
        self._phase_offsets = np.array(robot.TROT_PHASE_OFFSETS)
        self._ranges = tuple(np.array(getattr(cfg, n), dtype=np.float64) for n in ("command_vx", "command_vy", "command_yaw"))

    obs_size = property(lambda self: OBS_SIZE)
    privileged_obs_size = property(lambda self: PRIVILEGED_OBS_SIZE)
    action_size = property(lambda self: NUM_JOINTS)
    reward_weights = property(lambda self: self._weights)
    reset_keyframe = property(lambda self: self._keyframe)

    state_names = ("last_action", "_previous_action", "command", "phase", "_contact", "_air_time", "_foot_height", "_previous_foot_pos")

    def bind(self, batch, num_envs: int) -> None:
        n = num_envs
        self._qpos, self._qvel, self._ctrl = batch.bind("qpos"), batch.bind("qvel"), batch.bind("ctrl")
        self._geom_xpos = batch.bind("geom_xpos")
        self._actuator_force = batch.bind("actuator_force")
        self.last_action = np.zeros((n, NUM_JOINTS))
        self._previous_action = np.zeros((n, NUM_JOINTS))
        self.command = np.zeros((n, 3))
        self.phase = np.zeros(n)
        self._contact = np.ones((n, NUM_FEET), dtype=np.bool_)
        self._air_time = np.zeros((n, NUM_FEET))
        self._foot_height = np.zeros((n, NUM_FEET))
        self._previous_foot_pos = np.zeros((n, NUM_FEET, 3))

    def apply_actions(self, actions: np.ndarray) -> None:
        _apply_actions(actions, self._ctrl, self.last_action, self._previous_action, self._home, self._actuator_ids, self.config.action_scale)

    def compute(self, obs, privileged_obs, reward_terms, reward, terminated, episode_step, rng) -> None:
        _compute(
            obs, privileged_obs, reward_terms, reward, terminated, episode_step, rng,
            self._qpos, self._qvel, self._geom_xpos, self._actuator_force,
            self._root_q, self._root_d, self._joint_q, self._joint_d, self._actuator_ids, self._foot_geoms,
            self._home, self._joint_low, self._joint_high, self._pose_weights,
            self.last_action, self._previous_action, self.command, self.phase, self._contact, self._air_time,
            self._foot_height, self._previous_foot_pos,
            self._weights, self._params, *self._ranges, self._phase_offsets,
        )  # fmt: skip

    def reset_envs(self, ids: np.ndarray, rng: np.ndarray) -> None:
        cfg = self.config
        _reset_envs(
            ids, rng, self._qpos, self._qvel, self._root_q, self._root_d, self._joint_q, self._home,
            self._joint_low_hard, self._joint_high_hard,
            self.last_action, self._previous_action, self.command, self.phase, self._contact, self._air_time,
            self._foot_height, self._previous_foot_pos,
            cfg.reset_xy_range, cfg.reset_joint_range, cfg.reset_base_velocity, self._foot_radius,
            *self._ranges, cfg.zero_command_probability,
        )  # fmt: skip

    def observe(self, ids: np.ndarray, obs, privileged_obs) -> None:
        _observe(
            ids, obs, privileged_obs, self._qpos, self._qvel, self._geom_xpos, self._root_q, self._root_d,
            self._joint_q, self._joint_d, self._home, self.last_action, self.command, self.phase, self._contact,
            self._air_time, self._foot_height, self._previous_foot_pos, self._foot_geoms, self._foot_radius,
            self._actuator_force, self._actuator_ids,
        )  # fmt: skip


def make_env(**kwargs: Any) -> UniLabEnv:
    """Entry point of ``gym.make``: one Go1 joystick env."""
    return UniLabEnv(Go1Joystick, **kwargs)


def make_vector_env(num_envs: int, **kwargs: Any) -> UniLabVectorEnv:
    """Entry point of ``gym.make_vec``: ``num_envs`` Go1 joystick envs, batched."""
    return UniLabVectorEnv(Go1Joystick, num_envs, **kwargs)
