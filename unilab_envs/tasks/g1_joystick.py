"""``UniLab/G1Joystick-v0``: a G1-like humanoid walks after a velocity joystick.

Commands (forward, sideways, yaw rate) are resampled every
``command_resample_time`` seconds; the policy runs at 50 Hz and sets PD
position targets around the standing pose (29 joints: legs, waist, arms). A
two-beat walking phase (feet half a period apart) is in the observation and
drives the ``feet_phase`` term, as in MuJoCo Playground's G1 joystick.

Observation (101 floats, SI units, pelvis frame; what a real G1 senses or estimates):

==============  =====  =======  ===========================================
group           size   offset   content
==============  =====  =======  ===========================================
linvel          3      0        pelvis linear velocity (a state estimator's)
gyro            3      3        pelvis angular velocity (IMU)
gravity         3      6        unit gravity direction in the pelvis frame
joint_pos       29     9        joint angles minus the standing pose
joint_vel       29     38       joint velocities
last_action     29     67       previous action
command         3      96       (vx, vy, yaw rate) command
phase           2      99       sin, cos of the gait phase
==============  =====  =======  ===========================================

The base linear velocity is in the policy's observation as in MuJoCo Playground's and
mjlab's G1 tasks (and our Go1): without it an MLP policy must infer its speed from the
joints to track a velocity command.

Privileged observation for the critic (45 floats): base linear velocity (3,
pelvis frame), gyro (3), gravity (3), pelvis height (1), foot contacts (2),
foot heights (2), foot air times (2), actuator forces (29). Noise wrappers touch
only the policy observation, so the critic keeps the clean values.

Termination: pelvis tilt beyond ``max_tilt`` or pelvis below ``min_base_height``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numba as nb
import numpy as np

from unilab_envs.assets import g1 as robot
from unilab_envs.core.config import build_config, require, require_range, require_timing
from unilab_envs.core.model import actuators_for_joints, free_joint_of, load_model, object_ids
from unilab_envs.core.prefetch import PREFETCH_DISTANCE, prefetch_row
from unilab_envs.core.quat import advance_phase, exp_f32, projected_gravity, rotate_inverse, sin_cos_f32
from unilab_envs.core.rng import uniform, uniform_range
from unilab_envs.core.single_env import UniLabEnv
from unilab_envs.core.task import Task
from unilab_envs.core.vector_env import UniLabVectorEnv

NUM_JOINTS = robot.NUM_JOINTS  # 29
NUM_FEET = 2
OBS_GROUPS = {
    "linvel": slice(0, 3),
    "gyro": slice(3, 6),
    "gravity": slice(6, 9),
    "joint_pos": slice(9, 38),
    "joint_vel": slice(38, 67),
    "last_action": slice(67, 96),
    "command": slice(96, 99),
    "phase": slice(99, 101),
}
OBS_SIZE = 101
PRIVILEGED_GROUPS = {
    "linvel": slice(0, 3),
    "gyro": slice(3, 6),
    "gravity": slice(6, 9),
    "height": slice(9, 10),
    "foot_contact": slice(10, 12),
    "foot_height": slice(12, 14),
    "foot_air_time": slice(14, 16),
    "actuator_force": slice(16, 45),
}
PRIVILEGED_OBS_SIZE = 45
_JP, _JV, _LA, _CMD, _PH = 9, 38, 67, 96, 99  # observation offsets


@dataclass(frozen=True)
class G1RewardScales:
    """Signed scales of the named reward terms (weight = scale * control_dt).

    ``positive_clip`` must stay the last term (it reads the sum of the others).
    """

    tracking_lin_vel: float = 2.0
    tracking_ang_vel: float = 1.0
    lin_vel_z: float = -1.0
    ang_vel_xy: float = -0.05
    orientation: float = -2.0
    base_height: float = -10.0
    torques: float = -1e-5
    action_rate: float = -0.01
    pose: float = -0.5
    feet_air_time: float = 2.0
    feet_phase: float = 1.0
    feet_slip: float = -0.25
    joint_limits: float = -1.0
    stand_still: float = -1.0
    termination: float = -50.0
    # +scale per step while upright: surviving must be worth more than falling early
    alive: float = 1.0
    # legged_gym's only_positive_rewards as its own visible term: value = positive_clip *
    # max(0, -(sum of the terms but termination)), so 1.0 clips the shaped reward at zero
    # and the fall penalty still counts in full; 0.0 is off. reward == sum of terms holds.
    positive_clip: float = 1.0


REWARD_NAMES = tuple(f.name for f in dataclasses.fields(G1RewardScales))


@dataclass(frozen=True)
class G1JoystickConfig:
    """Everything the G1 joystick task can be told; unknown keys are rejected."""

    model_path: str = str(robot.MJCF_PATH)
    sim_dt: float = 0.004
    control_dt: float = 0.02
    # targets move at most action_scale rad from the standing pose (0.5: ~8 cm of foot lift)
    action_scale: float = 0.5
    # commands: (low, high) per axis, resampled every command_resample_time seconds
    command_vx: tuple[float, float] = (-0.5, 1.0)
    command_vy: tuple[float, float] = (-0.3, 0.3)
    command_yaw: tuple[float, float] = (-1.0, 1.0)
    command_resample_time: float = 5.0
    zero_command_probability: float = 0.15
    # gait
    gait_frequency: float = 1.25
    swing_height: float = 0.08
    feet_phase_width: float = 0.01  # feet_phase = exp(-sum of squared height errors / width)
    # reward shaping constants
    tracking_sigma: float = 0.25
    base_height_target: float = 0.78
    air_time_target: float = 0.2
    soft_joint_limit: float = 0.9
    contact_height: float = 0.02  # a sole below this height (m) is in contact
    # termination: tilt beyond this angle (rad) or pelvis below this height (m)
    max_tilt: float = 0.8
    min_base_height: float = 0.45
    # reset randomization
    reset_xy_range: float = 0.5
    reset_joint_range: float = 0.05
    reset_base_velocity: float = 0.1
    reward_scales: G1RewardScales = field(default_factory=G1RewardScales)

    def validate(self) -> None:
        require_timing(self.sim_dt, self.control_dt)
        require(self.action_scale > 0, f"action_scale must be > 0, got {self.action_scale}")
        for name in ("command_vx", "command_vy", "command_yaw"):
            require_range(name, getattr(self, name))
        require(self.command_resample_time > 0, "command_resample_time must be > 0")
        require(0.0 <= self.zero_command_probability <= 1.0, f"zero_command_probability must be in [0, 1], got {self.zero_command_probability}")
        require(self.gait_frequency > 0, f"gait_frequency must be > 0, got {self.gait_frequency}")
        require(self.swing_height >= 0, f"swing_height must be >= 0, got {self.swing_height}")
        require(self.feet_phase_width > 0, f"feet_phase_width must be > 0, got {self.feet_phase_width}")
        require(self.tracking_sigma > 0, f"tracking_sigma must be > 0, got {self.tracking_sigma}")
        require(self.base_height_target > 0, f"base_height_target must be > 0, got {self.base_height_target}")
        require(0 < self.soft_joint_limit <= 1, f"soft_joint_limit must be in (0, 1], got {self.soft_joint_limit}")
        require(self.contact_height > 0, f"contact_height must be > 0, got {self.contact_height}")
        require(0 < self.max_tilt <= math.pi, f"max_tilt must be in (0, pi], got {self.max_tilt}")
        for name in ("air_time_target", "reset_xy_range", "reset_joint_range", "reset_base_velocity", "min_base_height"):
            require(getattr(self, name) >= 0, f"{name} must be >= 0, got {getattr(self, name)}")
        for f in dataclasses.fields(self.reward_scales):
            value = getattr(self.reward_scales, f.name)
            require(math.isfinite(value), f"reward_scales.{f.name} must be finite, got {value}")


# --- kernels -------------------------------------------------------------------


@nb.njit(parallel=True, cache=True)
def _apply_actions(actions, ctrl, last_action, previous_action, stand, actuator_ids, action_scale):
    for i in nb.prange(actions.shape[0]):
        for j in range(actions.shape[1]):
            a = min(max(actions[i, j], -1.0), 1.0)
            previous_action[i, j] = last_action[i, j]
            last_action[i, j] = a
            ctrl[i, actuator_ids[j]] = stand[j] + action_scale * a


@nb.njit(inline="always", cache=True)
def _base_state(i, qpos, qvel, root_q, root_d):
    """Pelvis-frame linear velocity, gyro, gravity direction and height of env ``i``."""
    q = (qpos[i, root_q + 3], qpos[i, root_q + 4], qpos[i, root_q + 5], qpos[i, root_q + 6])  # a tuple: no array view
    vx, vy, vz = rotate_inverse(q, qvel[i, root_d], qvel[i, root_d + 1], qvel[i, root_d + 2])
    gx, gy, gz = projected_gravity(q)
    wx, wy, wz = qvel[i, root_d + 3], qvel[i, root_d + 4], qvel[i, root_d + 5]
    return vx, vy, vz, wx, wy, wz, gx, gy, gz, qpos[i, root_q + 2]


@nb.njit(inline="always", cache=True)
def _write_joint_obs(i, j, obs, privileged_obs, dq, dq_dt, action, force):
    """Joint ``j``'s slots of the observations (one writer for the step and reset paths)."""
    obs[i, _JP + j] = dq
    obs[i, _JV + j] = dq_dt
    obs[i, _LA + j] = action
    privileged_obs[i, 16 + j] = force


@nb.njit(inline="always", cache=True)
def _write_base_obs(i, obs, privileged_obs, vx, vy, vz, wx, wy, wz, gx, gy, gz, height, command, sin_phase, cos_phase, contact, air_time, foot_height):
    """Everything but the joint slots (see the module docstring for the layout)."""
    obs[i, 0], obs[i, 1], obs[i, 2] = vx, vy, vz
    obs[i, 3], obs[i, 4], obs[i, 5] = wx, wy, wz
    obs[i, 6], obs[i, 7], obs[i, 8] = gx, gy, gz
    obs[i, _CMD], obs[i, _CMD + 1], obs[i, _CMD + 2] = command[i, 0], command[i, 1], command[i, 2]
    obs[i, _PH], obs[i, _PH + 1] = sin_phase, cos_phase
    privileged_obs[i, 0], privileged_obs[i, 1], privileged_obs[i, 2] = vx, vy, vz
    privileged_obs[i, 3], privileged_obs[i, 4], privileged_obs[i, 5] = wx, wy, wz
    privileged_obs[i, 6], privileged_obs[i, 7], privileged_obs[i, 8] = gx, gy, gz
    privileged_obs[i, 9] = height
    for f in range(NUM_FEET):
        privileged_obs[i, 10 + f] = 1.0 if contact[i, f] else 0.0
        privileged_obs[i, 12 + f] = foot_height[i, f]
        privileged_obs[i, 14 + f] = air_time[i, f]


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
    qpos, qvel, site_xpos, actuator_force,
    root_q, root_d, joint_q, joint_d, actuator_ids, foot_sites, stand, joint_low, joint_high, pose_weights,
    last_action, previous_action, command, phase, contact, air_time, foot_height, previous_foot_pos,
    weights, params, vx_range, vy_range, yaw_range, phase_offsets,
):  # fmt: skip
    dt = params[0]
    inv_sigma = 1.0 / params[1]
    height_target = params[2]
    air_target = params[3]
    gait_step = params[4]
    swing_height = params[5]
    contact_height = params[6]
    cos_max_tilt = params[7]
    min_height = params[8]
    resample_steps = np.int64(params[9])
    zero_probability = params[10]
    inv_phase_width = 1.0 / params[11]
    clip_scale = weights[16] / dt  # positive_clip: 1.0 clips the shaped reward at zero
    inv_dt = 1.0 / dt
    for i in nb.prange(obs.shape[0]):
        prefetch_row(qpos, i + PREFETCH_DISTANCE)  # qpos / qvel are rows of the batch state, far apart
        prefetch_row(qvel, i + PREFETCH_DISTANCE)
        vx, vy, vz, wx, wy, wz, gx, gy, gz, height = _base_state(i, qpos, qvel, root_q, root_d)
        moving = (command[i, 0] ** 2 + command[i, 1] ** 2) > 0.01 or abs(command[i, 2]) > 0.1

        # one pass over the joints: reward sums and the joint slots of the observations
        torque_sq = 0.0
        action_rate = 0.0
        pose = 0.0
        limits = 0.0
        stand_dev = 0.0
        for j in range(NUM_JOINTS):
            qj = qpos[i, joint_q[j]]
            dq = qj - stand[j]
            tau = actuator_force[i, actuator_ids[j]]
            a = last_action[i, j]
            da = a - previous_action[i, j]
            torque_sq += tau * tau
            action_rate += da * da
            pose += pose_weights[j] * dq * dq
            stand_dev += abs(dq)
            limits += max(0.0, qj - joint_high[j]) + max(0.0, joint_low[j] - qj)
            _write_joint_obs(i, j, obs, privileged_obs, dq, qvel[i, joint_d[j]], a, tau)

        phase[i] = advance_phase(phase[i], gait_step)
        sin_phase, cos_phase = sin_cos_f32(phase[i])
        air_reward = 0.0
        slip = 0.0
        phase_error = 0.0
        for f in range(NUM_FEET):
            s_id = foot_sites[f]
            px, py, pz = site_xpos[i, s_id, 0], site_xpos[i, s_id, 1], site_xpos[i, s_id, 2]
            foot_height[i, f] = pz
            in_contact = pz < contact_height
            first_contact = in_contact and not contact[i, f] and air_time[i, f] > 0.0
            air_time[i, f] += dt
            if first_contact:
                air_reward += max(0.0, min(air_time[i, f] - air_target, air_target))  # short steps are not punished
            if in_contact:
                air_time[i, f] = 0.0
                fvx = (px - previous_foot_pos[i, f, 0]) * inv_dt
                fvy = (py - previous_foot_pos[i, f, 1]) * inv_dt
                slip += fvx * fvx + fvy * fvy
            contact[i, f] = in_contact
            previous_foot_pos[i, f, 0], previous_foot_pos[i, f, 1], previous_foot_pos[i, f, 2] = px, py, pz
            s = sin_phase * phase_offsets[f, 0] + cos_phase * phase_offsets[f, 1]  # sin(phase + offset)
            target = swing_height * s * s if (moving and s > 0.0) else 0.0
            phase_error += (pz - target) ** 2

        fell = gz > -cos_max_tilt or height < min_height
        lin_error = (command[i, 0] - vx) ** 2 + (command[i, 1] - vy) ** 2
        yaw_error = (command[i, 2] - wz) ** 2
        # the 17 terms, in REWARD_NAMES order
        t0 = weights[0] * exp_f32(-lin_error * inv_sigma)
        t1 = weights[1] * exp_f32(-yaw_error * inv_sigma)
        t2 = weights[2] * vz * vz
        t3 = weights[3] * (wx * wx + wy * wy)
        t4 = weights[4] * (gx * gx + gy * gy)
        t5 = weights[5] * (height - height_target) ** 2
        t6 = weights[6] * torque_sq
        t7 = weights[7] * action_rate
        t8 = weights[8] * pose
        t9 = weights[9] * air_reward if moving else 0.0
        t10 = weights[10] * exp_f32(-phase_error * inv_phase_width)
        t11 = weights[11] * slip
        t12 = weights[12] * limits
        t13 = 0.0 if moving else weights[13] * stand_dev
        t14 = weights[14] if fell else 0.0
        t15 = 0.0 if fell else weights[15]
        shaped = t0 + t1 + t2 + t3 + t4 + t5 + t6 + t7 + t8 + t9 + t10 + t11 + t12 + t13 + t15
        t16 = clip_scale * max(0.0, -shaped)  # the termination penalty stays outside the clip
        reward_terms[i, 0], reward_terms[i, 1], reward_terms[i, 2], reward_terms[i, 3], reward_terms[i, 4] = t0, t1, t2, t3, t4
        reward_terms[i, 5], reward_terms[i, 6], reward_terms[i, 7], reward_terms[i, 8], reward_terms[i, 9] = t5, t6, t7, t8, t9
        reward_terms[i, 10], reward_terms[i, 11], reward_terms[i, 12], reward_terms[i, 13], reward_terms[i, 14] = t10, t11, t12, t13, t14
        reward_terms[i, 15], reward_terms[i, 16] = t15, t16
        reward[i] = shaped + t16 + t14
        terminated[i] = fell

        if episode_step[i] % resample_steps == 0:
            _sample_command(i, command, rng, vx_range, vy_range, yaw_range, zero_probability)
        _write_base_obs(i, obs, privileged_obs, vx, vy, vz, wx, wy, wz, gx, gy, gz, height, command, sin_phase, cos_phase, contact, air_time, foot_height)


@nb.njit(cache=True)
def _reset_envs(
    ids, rng, qpos, qvel, root_q, root_d, joint_q, stand, joint_low_hard, joint_high_hard,
    last_action, previous_action, command, phase, contact, air_time, foot_height, previous_foot_pos,
    xy_range, joint_range, base_velocity, vx_range, vy_range, yaw_range, zero_probability,
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
            value = stand[j] + uniform_range(rng, i, -joint_range, joint_range)
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
def _observe(ids, obs, privileged_obs, qpos, qvel, site_xpos, root_q, root_d, joint_q, joint_d, stand, last_action, command, phase, contact, air_time, foot_height, previous_foot_pos, foot_sites, actuator_force, actuator_ids):
    for k in nb.prange(ids.shape[0]):
        i = ids[k]
        for f in range(NUM_FEET):
            s_id = foot_sites[f]
            for d in range(3):
                previous_foot_pos[i, f, d] = site_xpos[i, s_id, d]
            foot_height[i, f] = site_xpos[i, s_id, 2]
        for j in range(NUM_JOINTS):
            _write_joint_obs(i, j, obs, privileged_obs, qpos[i, joint_q[j]] - stand[j], qvel[i, joint_d[j]], last_action[i, j], actuator_force[i, actuator_ids[j]])
        vx, vy, vz, wx, wy, wz, gx, gy, gz, height = _base_state(i, qpos, qvel, root_q, root_d)
        sin_phase, cos_phase = sin_cos_f32(phase[i])
        _write_base_obs(i, obs, privileged_obs, vx, vy, vz, wx, wy, wz, gx, gy, gz, height, command, sin_phase, cos_phase, contact, air_time, foot_height)


# --- the task ------------------------------------------------------------------


class G1Joystick(Task):
    """The G1 joystick task (see module docstring)."""

    obs_groups = OBS_GROUPS
    privileged_obs_groups = PRIVILEGED_GROUPS
    reward_names = REWARD_NAMES
    tracking_body = robot.ROOT_BODY

    def __init__(self, **config: Any) -> None:
        cfg = build_config(G1JoystickConfig, config, kind="G1Joystick config key")
        model = load_model(cfg.model_path, cfg.sim_dt)
        super().__init__(model, cfg)
        joint_ids = object_ids(model, mujoco.mjtObj.mjOBJ_JOINT, robot.JOINT_NAMES, "joint")
        self._joint_q = model.jnt_qposadr[joint_ids].astype(np.int64)
        self._joint_d = model.jnt_dofadr[joint_ids].astype(np.int64)
        self._actuator_ids = actuators_for_joints(model, joint_ids)
        self._foot_sites = object_ids(model, mujoco.mjtObj.mjOBJ_SITE, robot.FOOT_SITES, "foot site")
        self._root_q, self._root_d = free_joint_of(model, robot.ROOT_BODY)
        self._keyframe = int(object_ids(model, mujoco.mjtObj.mjOBJ_KEY, (robot.STAND_KEYFRAME,), "keyframe")[0])
        self._stand = model.key_qpos[self._keyframe, self._joint_q].copy()
        low, high = model.jnt_range[joint_ids, 0].copy(), model.jnt_range[joint_ids, 1].copy()
        mid, half = 0.5 * (low + high), 0.5 * (high - low) * cfg.soft_joint_limit
        self._joint_low_hard, self._joint_high_hard = low, high
        self._joint_low, self._joint_high = mid - half, mid + half
        self._pose_weights = np.array(robot.POSE_WEIGHTS, dtype=np.float64)
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
                cfg.contact_height,
                math.cos(cfg.max_tilt),
                cfg.min_base_height,
                max(1, round(cfg.command_resample_time / cfg.control_dt)),
                cfg.zero_command_probability,
                cfg.feet_phase_width,
            ]
        )
        offsets = np.array(robot.WALK_PHASE_OFFSETS)
        self._phase_offsets = np.stack([np.cos(offsets), np.sin(offsets)], axis=1)  # (feet, 2): sin(p + o) = sin p cos o + cos p sin o
        self._ranges = tuple(np.array(getattr(cfg, n), dtype=np.float64) for n in ("command_vx", "command_vy", "command_yaw"))

    obs_size = property(lambda self: OBS_SIZE)
    privileged_obs_size = property(lambda self: PRIVILEGED_OBS_SIZE)
    action_size = property(lambda self: NUM_JOINTS)
    reward_weights = property(lambda self: self._weights)
    reset_keyframe = property(lambda self: self._keyframe)

    @property
    def stand_pose(self) -> np.ndarray:
        """``(29,)`` standing joint angles, the zero of ``joint_pos`` and of the actions."""
        return self._stand.copy()

    state_names = ("last_action", "_previous_action", "command", "phase", "_contact", "_air_time", "_foot_height", "_previous_foot_pos")

    def bind(self, batch, num_envs: int) -> None:
        n = num_envs
        self._qpos, self._qvel, self._ctrl = batch.bind("qpos"), batch.bind("qvel"), batch.bind("ctrl")
        self._site_xpos = batch.bind("site_xpos")
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
        _apply_actions(actions, self._ctrl, self.last_action, self._previous_action, self._stand, self._actuator_ids, self.config.action_scale)

    def compute(self, obs, privileged_obs, reward_terms, reward, terminated, episode_step, rng) -> None:
        _compute(
            obs, privileged_obs, reward_terms, reward, terminated, episode_step, rng,
            self._qpos, self._qvel, self._site_xpos, self._actuator_force,
            self._root_q, self._root_d, self._joint_q, self._joint_d, self._actuator_ids, self._foot_sites,
            self._stand, self._joint_low, self._joint_high, self._pose_weights,
            self.last_action, self._previous_action, self.command, self.phase, self._contact, self._air_time,
            self._foot_height, self._previous_foot_pos,
            self._weights, self._params, *self._ranges, self._phase_offsets,
        )  # fmt: skip

    def reset_envs(self, ids: np.ndarray, rng: np.ndarray) -> None:
        cfg = self.config
        _reset_envs(
            ids, rng, self._qpos, self._qvel, self._root_q, self._root_d, self._joint_q, self._stand,
            self._joint_low_hard, self._joint_high_hard,
            self.last_action, self._previous_action, self.command, self.phase, self._contact, self._air_time,
            self._foot_height, self._previous_foot_pos,
            cfg.reset_xy_range, cfg.reset_joint_range, cfg.reset_base_velocity,
            *self._ranges, cfg.zero_command_probability,
        )  # fmt: skip

    def observe(self, ids: np.ndarray, obs, privileged_obs) -> None:
        _observe(
            ids, obs, privileged_obs, self._qpos, self._qvel, self._site_xpos, self._root_q, self._root_d,
            self._joint_q, self._joint_d, self._stand, self.last_action, self.command, self.phase, self._contact,
            self._air_time, self._foot_height, self._previous_foot_pos, self._foot_sites,
            self._actuator_force, self._actuator_ids,
        )  # fmt: skip


def make_env(**kwargs: Any) -> UniLabEnv:
    """Entry point of ``gym.make``: one G1 joystick env."""
    return UniLabEnv(G1Joystick, **kwargs)


def make_vector_env(num_envs: int, **kwargs: Any) -> UniLabVectorEnv:
    """Entry point of ``gym.make_vec``: ``num_envs`` G1 joystick envs, batched."""
    return UniLabVectorEnv(G1Joystick, num_envs, **kwargs)
