"""``UniLab/UR5Grasp-v0``: a UR5e-like arm with a 2F-85-like gripper picks a cube off a
table and holds it up.

Each episode puts the cube (a ``cube_size`` cube, 5 cm by default) at a random place and
yaw on the table in front of the arm, with a random mass and sliding friction
(``cube_mass``, ``cube_friction``: written per env through ``Batch.expand``). The arm
starts at its home pose (plus ``reset_joint_range`` noise) with the gripper open above
the workspace.

**Action** (4 floats in [-1, 1], 25 Hz): ``a[:3]`` moves the pinch-point target by
``action_scale * a`` metres (clipped to the ``workspace`` box and to ``max_target_lead``
from the pinch point); ``a[3]`` is the gripper command, -1 open .. +1 closed (absolute).
A resolved-rate controller holds the home orientation (gripper pointing down, home yaw)
and turns the pose error into the six joint position targets by one damped-least-squares
step from the measured joint angles (Jacobian from the joint axes and anchors). End-
effector deltas rather than joint deltas because PPO then explores in the 3-D space the
task lives in, with the orientation a top-down grasp needs held for free: 4 actions
against 7, and no joint coordination to discover before the first grasp.

**Observation** (42 floats, SI units, world axes): the groups of
:data:`~unilab_envs.tasks.arm_groups.GRASP_GROUPS`, in that order (pinch point = the
end-effector site; sizes, units, meanings in their declarations, ``unilab tasks --groups``, docs/tasks.md).
**Privileged** (critic only, 6): :data:`~unilab_envs.tasks.arm_groups.GRASP_CRITIC_GROUPS`: pad
contacts and contact forces, cube mass and friction. They are the class's ``policy_groups`` /
``critic_groups`` (a subclass adds its own: :class:`~unilab_envs.tasks.arm_groups.ArmObservation`),
each written by its writer in the generated kernels.

**Reward** (named terms, weight = scale * control_dt, summed; the class's ``reward_terms``,
:data:`~unilab_envs.tasks.arm_terms.GRASP_TERMS`, plus any term registered under ``"ur5_grasp"``
that the config's ``reward_terms`` names; the step kernel is generated from them,
:mod:`~unilab_envs.tasks.arm_reward_kernel`): ``reach``
(``1 - tanh(d / reach_std)``, d = pinch-cube distance), ``grasp`` (1 with both pads on
the cube and d within half the cube's edge: fingertips pressed on its top face touch it
with both pads too, and a policy learned to farm that), ``lift`` (grasped: cube bottom height / ``lift_target``, capped at 1),
``hold`` (1 while grasped at >= ``success_height``), ``action_rate`` (sum of squared
action changes), ``success`` (1 at the step the hold reaches ``success_hold_s``) and
``hold_break`` (at the step a hold breaks before it succeeds: the share of ``success_hold_s``
it had lasted; scale 0 by default, -100 takes back the ``hold`` reward the broken hold earned
with the default ``hold`` scale and hold time) and ``overlift`` (grasped: how far the cube's bottom
is above ``lift_target``, in lift targets; scale 0 by default).

**Episode end.** Success: the cube held >= ``success_height`` (10 cm) above the table
for ``success_hold_s`` (1 s) ends the episode as ``terminated`` with
``info["is_success"] = True`` (the success bonus is large enough that ending is worth
more than hovering below the line, not more than holding the cube up and letting the hold
break before the second is up: at gamma 0.98 with time-outs bootstrapped, ~14 against ~20;
larger per-step scales or gamma tip training into that farm). The cube off the table
(outside its top, or 5 cm below it) terminates as a failure. Time-out: 5 s (125 steps,
the registry's episode length).

The task reads these names from the model (Menagerie's ``universal_robots_ur5e`` and
``robotiq_2f85``), so ``model_path=`` may point at a user's combined model: arm joints
``shoulder_pan_joint`` ... ``wrist_3_joint`` each driven by one position or torque (``<motor>``, run as a PD
servo with ``pd_kp`` / ``pd_kd``) actuator, site
``pinch``, bodies ``left_pad`` / ``right_pad``, actuator ``fingers_actuator`` (low ctrl
open, high closed), body ``cube`` with a free joint and one box geom, keyframe ``home``
(gripper pointing down). The pad-cube contact sensors are added when the model lacks them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import mujoco
import numpy as np

from unilab_robot.assets import mjcf_file, ur5e_2f85 as scene
from unilab_envs.core.batch_code import batch_kernel
from unilab_envs.core.config import build_config, require, require_range
from unilab_envs.core.generated import first_call_locked
from unilab_envs.core.model import actuators_for_joints, free_joint_of, object_ids, servo_joint_actuators
from unilab_envs.core.reward_terms import RewardTerm, resolve_terms
from unilab_envs.core.single_env import UniLabEnv
from unilab_envs.core.task import DeployFacts, Task
from unilab_envs.core.vector_env import UniLabVectorEnv
from unilab_envs.tasks import ur5_grasp_kernels as k
from unilab_envs.tasks.arm_config import ArmConfig
from unilab_envs.tasks.arm_groups import GRASP_CRITIC_GROUPS, GRASP_GROUPS, ArmObservation
from unilab_envs.tasks.arm_reward_kernel import GRASP_OBS_QUANTITIES, grasp_kernel
from unilab_envs.tasks.arm_terms import GRASP_TERMS, reward_scales_class
from unilab_envs.tasks.ur5_grasp_script import scripted_grasp

PAD_SENSORS = ("left_pad_cube", "right_pad_cube")

LAYER = "ur5_grasp"  # the layer name terms are registered under (unilab_envs.core.reward_terms)

UR5GraspRewardScales = reward_scales_class("UR5GraspRewardScales", __name__, GRASP_TERMS)
REWARD_NAMES = tuple(t.name for t in GRASP_TERMS)


@dataclass(frozen=True, kw_only=True)
class UR5GraspConfig(ArmConfig):
    """Everything the UR5e grasp task can be told (:class:`~unilab_envs.tasks.arm_config.ArmConfig`, the
    controller, the cube, the lift); unknown keys are rejected."""

    model_path: str = str(scene.MJCF_PATH)
    action_scale: float = 0.02  # pinch-target change (m) per control step at |action| = 1
    pd_kp: tuple[float, ...] = scene.PD_KP  # the scene's position-actuator kp / kv
    pd_kd: tuple[float, ...] = scene.PD_KD
    #: the pinch target stays within this distance (m) of the pinch point (no wind-up)
    max_target_lead: float = 0.05
    #: box (m) the pinch target stays in: x, y, z lows and highs
    workspace_low: tuple[float, float, float] = (-0.45, 0.22, 0.02)
    workspace_high: tuple[float, float, float] = (0.18, 0.78, 0.45)
    #: controller: damping of the least-squares step, largest joint-target step (rad)
    ik_damping: float = 0.01
    max_joint_step: float = 0.2
    # the cube: edge (m, fixed per env build), and per-episode ranges of position, yaw, mass, friction
    cube_size: float = 0.05
    cube_x: tuple[float, float] = (-0.28, 0.02)
    cube_y: tuple[float, float] = (0.38, 0.62)
    cube_yaw: tuple[float, float] = (-0.4, 0.4)
    cube_mass: tuple[float, float] = (0.05, 0.25)
    cube_friction: tuple[float, float] = (0.5, 1.0)
    #: lift target (m) of the cube's bottom face above the table; success height and hold time
    lift_target: float = 0.15
    success_height: float = 0.10
    success_hold_s: float = 1.0
    reach_std: float = 0.25
    reset_joint_range: float = 0.05
    reward_scales: UR5GraspRewardScales = field(default_factory=UR5GraspRewardScales)

    max_reset_joint_range: ClassVar[float] = 0.5

    def validate(self) -> None:
        self.validate_common()
        require(0 < self.action_scale <= 0.05, f"action_scale must be in (0, 0.05] m per step, got {self.action_scale}")
        require(self.max_target_lead >= self.action_scale, f"max_target_lead ({self.max_target_lead}) must be >= action_scale ({self.action_scale})")
        require(len(self.workspace_low) == 3 and len(self.workspace_high) == 3, "workspace_low / workspace_high must be (x, y, z) triples")
        require(all(lo < hi for lo, hi in zip(self.workspace_low, self.workspace_high)), f"workspace_low {self.workspace_low} must be below workspace_high {self.workspace_high}")
        require(self.ik_damping > 0 and self.max_joint_step > 0, "ik_damping and max_joint_step must be > 0")
        require(0.04 <= self.cube_size <= 0.06, f"cube_size must be in [0.04, 0.06] m (the gripper opens 85 mm), got {self.cube_size}")
        for name in ("cube_x", "cube_y", "cube_yaw", "cube_mass", "cube_friction"):
            require_range(name, getattr(self, name))
        require(scene.TABLE_X[0] < self.cube_x[0] and self.cube_x[1] < scene.TABLE_X[1] and scene.TABLE_Y[0] < self.cube_y[0] and self.cube_y[1] < scene.TABLE_Y[1], f"cube_x {self.cube_x} / cube_y {self.cube_y} must lie on the table (x in {scene.TABLE_X}, y in {scene.TABLE_Y})")
        require(self.cube_mass[0] > 0, f"cube_mass must be > 0 kg, got {self.cube_mass}")
        require(self.cube_friction[0] > 0, f"cube_friction must be > 0, got {self.cube_friction}")
        require(0 < self.success_height <= self.lift_target, f"need 0 < success_height ({self.success_height}) <= lift_target ({self.lift_target})")
        require(self.success_hold_s >= self.control_dt, f"success_hold_s must be >= control_dt, got {self.success_hold_s}")
        require(self.reach_std > 0, f"reach_std must be > 0, got {self.reach_std}")


def load_scene(path: str | Path, sim_dt: float, cube_size: float) -> mujoco.MjModel:
    """Compile the scene at ``path`` with the pad-cube contact sensors (added when missing),
    the cube's edge set to ``cube_size`` and the physics timestep ``sim_dt``."""
    path = mjcf_file(path)
    try:
        spec = mujoco.MjSpec.from_file(str(path))
        names = {s.name for s in spec.sensors}
        for sensor, pad in zip(PAD_SENSORS, scene.PAD_BODIES):
            if sensor not in names:  # contacts found + net force of all the pad's contacts with the cube
                spec.add_sensor(name=sensor, type=mujoco.mjtSensor.mjSENS_CONTACT, objtype=mujoco.mjtObj.mjOBJ_BODY, objname=pad,
                                reftype=mujoco.mjtObj.mjOBJ_BODY, refname=scene.OBJECT_BODY, intprm=[3, 3, 1])  # fmt: skip
        cube = spec.body(scene.OBJECT_BODY)
        if cube is None or len(cube.geoms) != 1 or cube.geoms[0].type != mujoco.mjtGeom.mjGEOM_BOX:
            raise ValueError(f"the model needs a body {scene.OBJECT_BODY!r} with one box geom (the object to pick)")
        cube.geoms[0].size = [0.5 * cube_size] * 3
        model = spec.compile()
    except ValueError as error:
        raise ValueError(f"could not build the grasp scene from {str(path)!r}: {error}") from error
    model.opt.timestep = sim_dt
    return model


class UR5Grasp(ArmObservation, Task):
    """The UR5e grasp-and-lift task (see module docstring)."""

    policy_groups = GRASP_GROUPS
    critic_groups = GRASP_CRITIC_GROUPS
    obs_quantities = GRASP_OBS_QUANTITIES
    reward_terms: ClassVar[tuple[RewardTerm, ...]] = GRASP_TERMS
    reward_names = REWARD_NAMES  # an instance's own: its resolved terms
    tracking_body = "world"  # a fixed camera on the workspace
    state_names = ("ee_target", "last_action", "_previous_action", "hold_steps", "is_success", "_draws")

    def __init__(self, **config: Any) -> None:
        cfg = build_config(UR5GraspConfig, config, kind="UR5Grasp config key")
        model = load_scene(cfg.model_path, cfg.sim_dt, cfg.cube_size)
        super().__init__(model, cfg)
        obj = mujoco.mjtObj
        joint_ids = object_ids(model, obj.mjOBJ_JOINT, scene.JOINT_NAMES, "joint")
        self._joint_ids = joint_ids
        self._arm_q = model.jnt_qposadr[joint_ids].astype(np.int64)
        self._arm_d = model.jnt_dofadr[joint_ids].astype(np.int64)
        self._arm_act = actuators_for_joints(model, joint_ids)
        self.actuator_kinds = servo_joint_actuators(model, self._arm_act, cfg.pd_kp, cfg.pd_kd)  # <motor>s become PD servos
        self._keyframe = int(object_ids(model, obj.mjOBJ_KEY, (scene.HOME_KEYFRAME,), "keyframe")[0])
        self._home = model.key_qpos[self._keyframe, self._arm_q].copy()
        low, high = model.jnt_range[joint_ids, 0].copy(), model.jnt_range[joint_ids, 1].copy()
        limited = model.jnt_limited[joint_ids].astype(bool)
        low[~limited], high[~limited] = -2 * math.pi, 2 * math.pi
        self._low, self._high = low, high
        site = int(object_ids(model, obj.mjOBJ_SITE, (scene.PINCH_SITE,), "site")[0])
        pads = object_ids(model, obj.mjOBJ_BODY, scene.PAD_BODIES, "body")
        gripper = int(object_ids(model, obj.mjOBJ_ACTUATOR, (scene.GRIPPER_ACTUATOR,), "actuator")[0])
        cube_q, cube_d = free_joint_of(model, scene.OBJECT_BODY)
        cube_body = int(object_ids(model, obj.mjOBJ_BODY, (scene.OBJECT_BODY,), "body")[0])
        cube_geom = int(np.flatnonzero(model.geom_bodyid == cube_body)[0])
        sensors = [int(model.sensor_adr[model.sensor(n).id]) for n in PAD_SENSORS]
        self._ix = np.array([site, pads[0], pads[1], gripper, cube_q, cube_d, *sensors, cube_body, cube_geom], np.int64)
        self._cube_body, self._cube_geom = cube_body, cube_geom
        grip_low, grip_high = model.actuator_ctrlrange[gripper]
        half = 0.5 * cfg.cube_size
        self._fp = np.zeros(16)
        self._fp[[k.FP_ACTION_SCALE, k.FP_MAX_LEAD, k.FP_GRIP_LOW, k.FP_GRIP_HIGH, k.FP_DAMPING, k.FP_MAX_JOINT_STEP, k.FP_HALF,
                  k.FP_TABLE_Z, k.FP_LIFT_TARGET, k.FP_SUCCESS_HEIGHT, k.FP_REACH_STD, k.FP_HOLD_STEPS,
                  k.FP_TABLE_X0, k.FP_TABLE_X1, k.FP_TABLE_Y0, k.FP_TABLE_Y1]] = [
            cfg.action_scale, cfg.max_target_lead, grip_low, grip_high, cfg.ik_damping, cfg.max_joint_step, half,
            scene.TABLE_TOP_Z, cfg.lift_target, cfg.success_height, cfg.reach_std, round(cfg.success_hold_s / cfg.control_dt),
            *scene.TABLE_X, *scene.TABLE_Y,
        ]  # fmt: skip
        data = mujoco.MjData(model)
        mujoco.mj_resetDataKeyframe(model, data, self._keyframe)
        mujoco.mj_kinematics(model, data)
        self._goal_rot = data.site_xmat[site].reshape(3, 3).copy()  # the home orientation the controller holds
        require(self._goal_rot[2, 2] < -0.99, "the home keyframe must hold the gripper pointing down (pinch z axis along -z)")
        self._work_low, self._work_high = np.array(cfg.workspace_low, float), np.array(cfg.workspace_high, float)
        self._ranges = tuple(np.array(getattr(cfg, n), float) for n in ("cube_x", "cube_y", "cube_yaw", "cube_mass", "cube_friction"))
        scales = cfg.reward_scales
        terms = resolve_terms(LAYER, self.reward_terms, {name: getattr(scales, name) for name in REWARD_NAMES}, cfg.reward_terms)
        self.reward_names = terms.names
        self._weights = np.array(terms.scales) * cfg.control_dt
        self._term_params = terms.param_table()
        kernel = grasp_kernel(terms.terms, terms.active, self.policy_groups, self.critic_groups)
        self._compute, self._observe = first_call_locked(kernel, "compute"), first_call_locked(kernel, "observe")
        self._apply_kernel, self._reset_kernel = batch_kernel(k.apply_actions), batch_kernel(k.reset_envs)
        # unit inertia of a solid cube of this edge: mass * edge^2 / 6 on each axis
        self._unit_inertia = cfg.cube_size**2 / 6.0

    action_size = property(lambda self: k.ACTION_SIZE)
    reward_weights = property(lambda self: self._weights)
    reset_keyframe = property(lambda self: self._keyframe)
    step_stage = property(lambda self: int(mujoco.mjtStage.mjSTAGE_POS))

    def bind(self, batch, num_envs: int) -> None:
        n = num_envs
        self._batch = batch
        self._qpos, self._qvel, self._ctrl = batch.bind("qpos"), batch.bind("qvel"), batch.bind("ctrl")
        self._site_xpos, self._site_xmat, self._site_xquat = batch.bind("site_xpos"), batch.bind("site_xmat"), batch.bind("site_xquat")
        self._xpos, self._xanchor, self._xaxis = batch.bind("xpos"), batch.bind("xanchor"), batch.bind("xaxis")
        self._sensordata = batch.bind("sensordata")
        self._body_mass = batch.expand("body_mass")
        self._body_inertia = batch.expand("body_inertia")
        self._geom_friction = batch.expand("geom_friction")
        self.ee_target = np.zeros((n, 3))
        self.last_action = np.zeros((n, k.ACTION_SIZE))
        self._previous_action = np.zeros((n, k.ACTION_SIZE))
        self.hold_steps = np.zeros(n, np.int64)
        self.is_success = np.zeros(n, np.bool_)
        self._draws = np.zeros((n, 2))  # each env's cube mass and friction this episode

    @property
    def ee_pos(self) -> np.ndarray:
        """``(N, 3)`` pinch-point positions (current after a step or reset)."""
        return self._site_xpos[:, self._ix[k.IX_PINCH]]

    @property
    def cube_pos(self) -> np.ndarray:
        """``(N, 3)`` cube centre positions."""
        q = self._ix[k.IX_CUBE_Q]
        return self._qpos[:, q : q + 3]

    @property
    def cube_quat(self) -> np.ndarray:
        """``(N, 4)`` cube orientations (w, x, y, z)."""
        q = self._ix[k.IX_CUBE_Q]
        return self._qpos[:, q + 3 : q + 7]

    @property
    def cube_mass(self) -> np.ndarray:
        """``(N,)`` the cube mass (kg) each env drew for its episode."""
        return self._draws[:, 0]

    @property
    def cube_friction(self) -> np.ndarray:
        """``(N,)`` the cube sliding friction each env drew for its episode."""
        return self._draws[:, 1]

    @property
    def pad_contacts(self) -> np.ndarray:
        """``(N, 2)`` bool: the left / right pad touches the cube (as of the last substep)."""
        adr = self._ix[[k.IX_SENSOR_LEFT, k.IX_SENSOR_RIGHT]]
        return self._sensordata[:, adr] > 0

    def apply_actions(self, actions: np.ndarray) -> None:
        self._apply_kernel(
            actions, self._ctrl, self._qpos, self._site_xpos, self._site_xmat, self._xanchor, self._xaxis,
            self.ee_target, self.last_action, self._previous_action, self._arm_q, self._arm_act, self._joint_ids,
            self._low, self._high, self._work_low, self._work_high, self._goal_rot, self._ix, self._fp,
        )  # fmt: skip

    def compute(self, obs, privileged_obs, reward_terms, reward, terminated, episode_step, rng) -> None:
        self._compute(
            obs, privileged_obs, reward_terms, reward, terminated, self.is_success, self.hold_steps,
            self._qpos, self._qvel, self._site_xpos, self._site_xquat, self._xpos, self._xanchor, self._xaxis,
            self._sensordata, self._body_mass, self._geom_friction, self._arm_q, self._arm_d, self._joint_ids, self._home,
            self.ee_target, self.last_action, self._previous_action, self._weights, self._term_params, self._ix, self._fp,
        )  # fmt: skip

    def reset_envs(self, ids: np.ndarray, rng: np.ndarray) -> None:
        self._reset_kernel(
            ids, rng, self._qpos, self._ctrl, self._arm_q, self._arm_act, self._home, self._low, self._high,
            self.config.reset_joint_range, self.last_action, self._previous_action, self.hold_steps, self._draws,
            *self._ranges, self._ix, self._fp,
        )  # fmt: skip
        mass = self._draws[ids, 0]
        self._body_mass[ids, self._cube_body] = mass
        self._body_inertia[ids, self._cube_body] = (mass * self._unit_inertia)[:, None]
        self._geom_friction[ids, self._cube_geom, 0] = self._draws[ids, 1]
        self._batch.set_const(ids)  # the constants derived from the masses (inverse weights) follow

    def observe(self, ids: np.ndarray, obs, privileged_obs) -> None:
        self.ee_target[ids] = self._site_xpos[ids, self._ix[k.IX_PINCH]]  # after the reset's forward: target = pinch point
        self._observe(
            ids, obs, privileged_obs, self.hold_steps, self._qpos, self._qvel, self._site_xpos, self._site_xquat,
            self._xpos, self._xanchor, self._xaxis, self._sensordata, self._body_mass, self._geom_friction, self._arm_q,
            self._arm_d, self._joint_ids, self._home, self.ee_target, self.last_action, self._previous_action, self._ix,
            self._fp,
        )  # fmt: skip

    def set_state(self, state: dict[str, np.ndarray]) -> None:
        """Restore the task arrays, then the kinematics the controller reads (``site_xpos``,
        ``xanchor``... are outputs of the last step, not part of the saved physics state)."""
        super().set_state(state)
        self._batch.forward(stage=mujoco.mjtStage.mjSTAGE_POS)

    def task_info(self) -> dict[str, np.ndarray]:
        return {"is_success": self.is_success}

    def scripted_action(self, obs: np.ndarray) -> np.ndarray:
        """The scripted pick (:func:`~unilab_envs.tasks.ur5_grasp_script.scripted_grasp`): approach, descend, close, lift."""
        cfg = self.config
        return scripted_grasp(obs, self.obs_groups, cfg.action_scale, cfg.cube_size)

    def deploy_facts(self) -> DeployFacts:
        """Pick and lift through the pinch site, the arm's joints, the config's scene MJCF (deploy spec)."""
        return DeployFacts(command="grasp", joint_names=scene.JOINT_NAMES, mjcf=UR5GraspConfig.model_path,
                           ee_site=scene.PINCH_SITE)


OBS_GROUPS, PRIVILEGED_GROUPS = UR5Grasp.obs_groups, UR5Grasp.privileged_obs_groups  # the declared groups' columns


def make_env(**kwargs: Any) -> UniLabEnv:
    """Entry point of ``gym.make``: one UR5e grasp env."""
    return UniLabEnv(UR5Grasp, **kwargs)


def make_vector_env(num_envs: int, **kwargs: Any) -> UniLabVectorEnv:
    """Entry point of ``gym.make_vec``: ``num_envs`` UR5e grasp envs, batched."""
    return UniLabVectorEnv(UR5Grasp, num_envs, **kwargs)
