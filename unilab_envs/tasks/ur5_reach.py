"""``UniLab/UR5Reach-v0``: a UR5e-like arm brings its end effector to a target point.

Each episode samples a target position in a reachable shell in front of the arm
(cylindrical coordinates about the base axis: radius, azimuth around the
arm's front ``+y``, height), shown by the mocap sphere ``target``. The policy
runs at 25 Hz; each action moves the six joint position targets by
``action_scale * a`` (rad, ``a`` clipped to [-1, 1]) from where they were, so a
zero action holds the arm still (the model compensates gravity, as the UR
controller does). Episodes end on the time limit only (3 s, 75 steps): no
termination, reaching the target does not end the episode, so the policy
learns to reach *and stay*; ``info["is_success"]`` says whether the end
effector is within ``success_threshold`` of the target after the step (for a
row that just finished under SAME_STEP autoreset: at its final step, which is
what SB3's ``is_success`` logging reads; ``reset()`` does not recompute it).

The end-effector position is the site ``attachment_site``'s ``site_xpos``, a
derived field; the task sets ``step_stage = mjSTAGE_POS`` so the batch runs
the kinematics after each control step and the observation and reward see the
current position (cheap for a 6-DoF chain, and it keeps the task correct on a
user's Menagerie model, which hand-written forward kinematics would not).

Observation (33 floats, SI units, world frame with the base at the origin): the groups of
:data:`~unilab_envs.tasks.arm_groups.REACH_GROUPS`, in that order (sizes, units, meanings in
their declarations, ``unilab tasks --groups``, docs/tasks.md): the class's ``policy_groups``
(a subclass adds its own with ``policy_groups = (*UR5Reach.policy_groups, MY_GROUP)``, and a
critic observation with ``critic_groups``: :class:`~unilab_envs.tasks.arm_groups.ArmObservation`),
each written by its writer in the generated kernels.

Reward terms (weight = scale * control_dt): ``distance`` (metres, linear),
``distance_fine`` (``1 - tanh(d / fine_std)``), ``success`` (1 within the
threshold), ``action_rate``, ``joint_vel`` (sum of squares) and
``joint_limits`` (radians beyond the soft limits): the class's ``reward_terms``
(:data:`~unilab_envs.tasks.arm_terms.REACH_TERMS`; a subclass adds its own with
``reward_terms = UR5Reach.reward_terms + (MY_TERM,)``), plus any term registered
under ``"ur5_reach"`` that the config's ``reward_terms`` names
(:mod:`unilab_envs.core.reward_terms`). The step kernel is generated from them
(:mod:`unilab_envs.tasks.arm_reward_kernel`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import mujoco
import numba as nb
import numpy as np

from unilab_robot.assets import ur5e as robot
from unilab_envs.core.batch_code import batch_kernel
from unilab_envs.core.config import build_config, require, require_range
from unilab_envs.core.generated import first_call_locked
from unilab_envs.core.model import actuators_for_joints, load_model, object_ids, servo_joint_actuators
from unilab_envs.core.reward_terms import RewardTerm, resolve_terms
from unilab_envs.core.rng import uniform_range
from unilab_envs.core.single_env import UniLabEnv
from unilab_envs.core.task import DeployFacts, Task
from unilab_envs.core.vector_env import UniLabVectorEnv
from unilab_envs.tasks.arm_config import ArmConfig
from unilab_envs.tasks.arm_groups import REACH_GROUPS, ArmObservation
from unilab_envs.tasks.arm_reward_kernel import REACH_OBS_QUANTITIES, reach_kernel
from unilab_envs.tasks.arm_terms import REACH_TERMS, reward_scales_class

NUM_JOINTS = 6
LAYER = "ur5_reach"  # the layer name terms are registered under (unilab_envs.core.reward_terms)

UR5ReachRewardScales = reward_scales_class("UR5ReachRewardScales", __name__, REACH_TERMS)
REWARD_NAMES = tuple(t.name for t in REACH_TERMS)


@dataclass(frozen=True, kw_only=True)
class UR5ReachConfig(ArmConfig):
    """Everything the UR5e reach task can be told (:class:`~unilab_envs.tasks.arm_config.ArmConfig` and the
    target shell); unknown keys are rejected."""

    model_path: str = str(robot.MJCF_PATH)
    action_scale: float = 0.05  # joint-target change (rad) per control step at |action| = 1
    pd_kp: tuple[float, ...] = robot.PD_KP  # ur5e.xml's position-actuator kp / kv
    pd_kd: tuple[float, ...] = robot.PD_KD
    # target shell: radius from the base axis (m), azimuth from the arm's front (rad), height (m)
    target_radius: tuple[float, float] = (0.3, 0.65)
    target_azimuth: tuple[float, float] = (-1.0, 1.0)
    target_height: tuple[float, float] = (0.15, 0.6)
    success_threshold: float = 0.05
    fine_std: float = 0.1
    soft_joint_limit: float = 0.95
    reset_joint_range: float = 0.1
    reward_scales: UR5ReachRewardScales = field(default_factory=UR5ReachRewardScales)

    def validate(self) -> None:
        self.validate_common()
        require(0 < self.action_scale <= 1.0, f"action_scale must be in (0, 1] rad per step, got {self.action_scale}")
        for name in ("target_radius", "target_azimuth", "target_height"):
            require_range(name, getattr(self, name))
        require(self.target_radius[0] > 0, f"target_radius must be > 0, got {self.target_radius}")
        require(-math.pi <= self.target_azimuth[0] and self.target_azimuth[1] <= math.pi, f"target_azimuth must lie in [-pi, pi], got {self.target_azimuth}")
        require(math.hypot(self.target_radius[1], self.target_height[1] - robot.DH["d1"]) <= 0.85, f"targets up to radius {self.target_radius[1]} and height {self.target_height[1]} are out of the arm's reach (0.85 m from the shoulder)")
        require(self.success_threshold > 0, f"success_threshold must be > 0, got {self.success_threshold}")
        require(self.fine_std > 0, f"fine_std must be > 0, got {self.fine_std}")
        require(0 < self.soft_joint_limit <= 1, f"soft_joint_limit must be in (0, 1], got {self.soft_joint_limit}")


# --- kernels -------------------------------------------------------------------


@nb.njit(parallel=True, cache=True)
def _apply_actions(actions, ctrl, joint_target, last_action, previous_action, actuator_ids, low, high, action_scale):
    for i in nb.prange(actions.shape[0]):
        for j in range(NUM_JOINTS):
            a = min(max(actions[i, j], -1.0), 1.0)
            previous_action[i, j] = last_action[i, j]
            last_action[i, j] = a
            t = min(max(joint_target[i, j] + action_scale * a, low[j]), high[j])
            joint_target[i, j] = t
            ctrl[i, actuator_ids[j]] = t


@nb.njit(inline="always", cache=True)
def reach_quantities(i, qpos, qvel, site_xpos, joint_q, joint_d, site, soft_low, soft_high, target, last_action,
                     previous_action, threshold):  # fmt: skip
    """Env ``i``'s ``(dist, succeeded, action_rate_sq, joint_vel_sq, limits)`` after the step: end
    effector to target (m), within ``threshold``, sums of squared action changes and joint velocities,
    radians beyond the soft joint limits (the step kernel's quantities, :mod:`~unilab_envs.tasks.arm_reward_kernel`)."""
    dist_sq = 0.0
    for d in range(3):
        e = target[i, d] - site_xpos[i, site, d]
        dist_sq += e * e
    dist = math.sqrt(dist_sq)
    action_rate = 0.0
    vel_sq = 0.0
    limits = 0.0
    for j in range(NUM_JOINTS):
        da = last_action[i, j] - previous_action[i, j]
        action_rate += da * da
        v = qvel[i, joint_d[j]]
        vel_sq += v * v
        q = qpos[i, joint_q[j]]
        limits += max(0.0, q - soft_high[j]) + max(0.0, soft_low[j] - q)
    return dist, dist < threshold, action_rate, vel_sq, limits


@nb.njit(cache=True)
def _reset_envs(
    ids, rng, qpos, mocap_pos, joint_q, home, low, high, joint_target, target, last_action, previous_action,
    mocap_id, joint_range, radius, azimuth, height, front,
):  # fmt: skip
    for i in ids:
        for j in range(NUM_JOINTS):
            value = home[j] + uniform_range(rng, i, -joint_range, joint_range)
            value = min(max(value, low[j]), high[j])
            qpos[i, joint_q[j]] = value
            joint_target[i, j] = value
            last_action[i, j] = 0.0
            previous_action[i, j] = 0.0
        r = uniform_range(rng, i, radius[0], radius[1])
        phi = front + uniform_range(rng, i, azimuth[0], azimuth[1])
        target[i, 0] = r * math.cos(phi)
        target[i, 1] = r * math.sin(phi)
        target[i, 2] = uniform_range(rng, i, height[0], height[1])
        if mocap_id >= 0:
            for d in range(3):
                mocap_pos[i, mocap_id, d] = target[i, d]


# --- the task ------------------------------------------------------------------


class UR5Reach(ArmObservation, Task):
    """The UR5e reach task (see module docstring)."""

    policy_groups = REACH_GROUPS
    obs_quantities = REACH_OBS_QUANTITIES
    reward_terms: ClassVar[tuple[RewardTerm, ...]] = REACH_TERMS
    reward_names = REWARD_NAMES  # an instance's own: its resolved terms
    tracking_body = "world"  # a fixed camera on the workspace

    def __init__(self, **config: Any) -> None:
        cfg = build_config(UR5ReachConfig, config, kind="UR5Reach config key")
        model = load_model(cfg.model_path, cfg.sim_dt)
        super().__init__(model, cfg)
        joint_ids = object_ids(model, mujoco.mjtObj.mjOBJ_JOINT, robot.JOINT_NAMES, "joint")
        self._joint_q = model.jnt_qposadr[joint_ids].astype(np.int64)
        self._joint_d = model.jnt_dofadr[joint_ids].astype(np.int64)
        self._actuator_ids = actuators_for_joints(model, joint_ids)
        self.actuator_kinds = servo_joint_actuators(model, self._actuator_ids, cfg.pd_kp, cfg.pd_kd)  # <motor>s become PD servos
        self._site = int(object_ids(model, mujoco.mjtObj.mjOBJ_SITE, (robot.EE_SITE,), "site")[0])
        self._keyframe = int(object_ids(model, mujoco.mjtObj.mjOBJ_KEY, (robot.HOME_KEYFRAME,), "keyframe")[0])
        self._home = model.key_qpos[self._keyframe, self._joint_q].copy()
        target_body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, robot.TARGET_BODY)
        self._mocap_id = int(model.body_mocapid[target_body]) if target_body >= 0 else -1
        low, high = model.jnt_range[joint_ids, 0].copy(), model.jnt_range[joint_ids, 1].copy()
        limited = model.jnt_limited[joint_ids].astype(bool)
        low[~limited], high[~limited] = -2 * math.pi, 2 * math.pi
        self._low, self._high = low, high
        mid, half = 0.5 * (low + high), 0.5 * (high - low) * cfg.soft_joint_limit
        self._soft_low, self._soft_high = mid - half, mid + half
        scales = cfg.reward_scales
        terms = resolve_terms(LAYER, self.reward_terms, {name: getattr(scales, name) for name in REWARD_NAMES}, cfg.reward_terms)
        self.reward_names = terms.names
        self._weights = np.array(terms.scales) * cfg.control_dt
        self._term_params = terms.param_table()
        kernel = reach_kernel(terms.terms, terms.active, self.policy_groups, self.critic_groups)
        self._compute, self._observe = first_call_locked(kernel, "compute"), first_call_locked(kernel, "observe")
        self._apply_kernel, self._reset_kernel = batch_kernel(_apply_actions), batch_kernel(_reset_envs)
        self._ranges = tuple(np.array(getattr(cfg, n), dtype=np.float64) for n in ("target_radius", "target_azimuth", "target_height"))

    action_size = property(lambda self: NUM_JOINTS)
    reward_weights = property(lambda self: self._weights)
    reset_keyframe = property(lambda self: self._keyframe)
    step_stage = property(lambda self: int(mujoco.mjtStage.mjSTAGE_POS))

    state_names = ("joint_target", "target", "last_action", "_previous_action", "is_success")

    def bind(self, batch, num_envs: int) -> None:
        n = num_envs
        self._qpos, self._qvel, self._ctrl = batch.bind("qpos"), batch.bind("qvel"), batch.bind("ctrl")
        self._site_xpos = batch.bind("site_xpos")
        self._mocap_pos = batch.bind("mocap_pos") if self._mocap_id >= 0 else np.zeros((n, 1, 3))
        self.joint_target = np.zeros((n, NUM_JOINTS))
        self.target = np.zeros((n, 3))
        self.last_action = np.zeros((n, NUM_JOINTS))
        self._previous_action = np.zeros((n, NUM_JOINTS))
        self.is_success = np.zeros(n, dtype=np.bool_)

    @property
    def ee_pos(self) -> np.ndarray:
        """``(N, 3)`` end-effector positions (current after a step or reset)."""
        return self._site_xpos[:, self._site]

    def apply_actions(self, actions: np.ndarray) -> None:
        self._apply_kernel(actions, self._ctrl, self.joint_target, self.last_action, self._previous_action, self._actuator_ids, self._low, self._high, self.config.action_scale)

    def compute(self, obs, privileged_obs, reward_terms, reward, terminated, episode_step, rng) -> None:
        cfg = self.config
        self._compute(
            obs, privileged_obs, reward_terms, reward, terminated, self.is_success,
            self._qpos, self._qvel, self._site_xpos, self._joint_q, self._joint_d, self._site, self._home,
            self._soft_low, self._soft_high, self.joint_target, self.target, self.last_action, self._previous_action,
            self._weights, self._term_params, cfg.success_threshold, cfg.fine_std,
        )  # fmt: skip

    def reset_envs(self, ids: np.ndarray, rng: np.ndarray) -> None:
        self._reset_kernel(
            ids, rng, self._qpos, self._mocap_pos, self._joint_q, self._home, self._low, self._high,
            self.joint_target, self.target, self.last_action, self._previous_action,
            self._mocap_id, self.config.reset_joint_range, *self._ranges, robot.FRONT_AZIMUTH,
        )  # fmt: skip

    def observe(self, ids: np.ndarray, obs, privileged_obs) -> None:
        cfg = self.config
        self._observe(
            ids, obs, privileged_obs, self._qpos, self._qvel, self._site_xpos, self._joint_q, self._joint_d, self._site,
            self._home, self._soft_low, self._soft_high, self.joint_target, self.target, self.last_action,
            self._previous_action, cfg.success_threshold, cfg.fine_std,
        )  # fmt: skip

    def task_info(self) -> dict[str, np.ndarray]:
        return {"is_success": self.is_success}

    def deploy_facts(self) -> DeployFacts:
        """A target to reach with the end-effector site, the arm's joints and front, the config's MJCF (deploy spec)."""
        return DeployFacts(command="reach_target", joint_names=robot.JOINT_NAMES, mjcf=UR5ReachConfig.model_path,
                           ee_site=robot.EE_SITE, target_body=robot.TARGET_BODY, front_azimuth=robot.FRONT_AZIMUTH)


OBS_GROUPS = UR5Reach.obs_groups  # the declared groups' columns


def make_env(**kwargs: Any) -> UniLabEnv:
    """Entry point of ``gym.make``: one UR5e reach env."""
    return UniLabEnv(UR5Reach, **kwargs)


def make_vector_env(num_envs: int, **kwargs: Any) -> UniLabVectorEnv:
    """Entry point of ``gym.make_vec``: ``num_envs`` UR5e reach envs, batched."""
    return UniLabVectorEnv(UR5Reach, num_envs, **kwargs)
