"""``LocomotionTask``: the :class:`~unilab_envs.core.task.Task` of a legged robot following a velocity joystick.

A robot's task subclasses it and gives only what differs, as class keywords: the config
class (its defaults), the robot (:class:`~unilab_envs.locomotion.robot.LeggedRobot`) and
its observation groups::

    class Go1Joystick(LocomotionTask, config=Go1JoystickConfig, legged=GO1,
                      obs_groups=("linvel", "gyro", ..., "phase"),
                      privileged_obs_groups=("height", "foot_contact", ...)):
        ...

The groups are names of the layer's groups (:mod:`unilab_envs.locomotion.groups`) or the
task's own :class:`~unilab_envs.core.obs_groups.ObsGroup` declarations, laid end to end in
order; ``cls.obs_groups`` / ``cls.privileged_obs_groups`` are their slices, checked against the
robot when the class is made (at import), and the kernels write them through their writers
(:mod:`unilab_envs.locomotion.observation_kernel`). The reward terms are
the class's ``reward_terms`` (:data:`~unilab_envs.locomotion.terms.LEGGED_TERMS` unless a task adds
its own: ``reward_terms = LocomotionTask.reward_terms + (MY_TERM,)``), plus any registered term
the config's ``reward_terms`` names; the step kernel is generated from them
(:mod:`unilab_envs.locomotion.reward_kernel`), the rest is :mod:`unilab_envs.locomotion.kernels`.
The ground is flat (z = 0) unless a task overrides
:meth:`LocomotionTask.load_model` and :meth:`LocomotionTask.make_ground` (a terrain task,
e.g. :mod:`unilab_envs.tasks.go1_rough`).
"""

from __future__ import annotations

from functools import cached_property
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from unilab_envs.core.batch_code import batch_kernel
from unilab_envs.core.config import ConfigError, build_config
from unilab_envs.core.generated import first_call_locked
from unilab_envs.core.model import load_model, servo_joint_actuators
from unilab_envs.core.obs_groups import ObsGroup, resolve_groups
from unilab_envs.core.state import StateError, copy_attributes, restore_attributes
from unilab_envs.core.reward_terms import RewardTerm, resolve_terms
from unilab_envs.core.task import Task
from unilab_envs.locomotion import kernels
from unilab_envs.locomotion.actions import apply_actions
from unilab_envs.locomotion.config import LocomotionConfig, kernel_records
from unilab_envs.locomotion.ground import flat_ground
from unilab_envs.locomotion.groups import LAYER as GROUP_LAYER
from unilab_envs.locomotion.mirror import MirrorMap, locomotion_mirror
from unilab_envs.locomotion.observation_kernel import ObservationPlan, plan_observation
from unilab_envs.locomotion.records import Ground, Legs, Physics
from unilab_envs.locomotion.reward_kernel import step_kernel
from unilab_envs.locomotion.rewards import POSITIVE_CLIP, REWARD_NAMES
from unilab_envs.locomotion.robot import LeggedRobot, resolve_robot
from unilab_envs.locomotion.terms import LEGGED_TERMS
from unilab_envs.sensors import CAMERA_PIXELS, DepthCamera, camera_group

LAYER = "locomotion"  # the layer name terms are registered under (unilab_envs.core.reward_terms)
GroupList = Sequence[ObsGroup | str] | Mapping[str, slice]


def _group_list(groups: GroupList | None, where: str, cls: type) -> tuple[ObsGroup, ...]:
    """A task's ``obs_groups`` / ``privileged_obs_groups`` keyword as declarations: names of the layer's groups
    or ``ObsGroup``s; a ``{name: slice}`` dict (the form before groups were declared) is taken by its names,
    its slices checked against the derived ones (:func:`_check_slices`)."""
    if groups is None:
        raise TypeError(f"{cls.__name__}: a locomotion task names its policy observation groups (obs_groups=...)")
    return resolve_groups(GROUP_LAYER, list(groups), where)


def _check_slices(given: GroupList, derived: dict[str, slice], where: str, cls: type) -> None:
    """A ``{name: slice}`` keyword must be the slices its groups get laid end to end (sizes from the robot)."""
    if isinstance(given, Mapping) and dict(given) != derived:
        wrong = next(name for name in derived if given[name] != derived[name])
        raise ValueError(f"{cls.__name__}: {where} observation group {wrong!r} is given {given[wrong]}, its place laid end "
                         f"to end with its size is {derived[wrong]}; pass the group names in order (obs_groups=(...)) and "
                         f"the slices follow")


def critic_only(policy: tuple[ObsGroup, ...], privileged: tuple[ObsGroup, ...], names: Sequence[str],
                task: str) -> tuple[tuple[ObsGroup, ...], tuple[ObsGroup, ...]]:
    """``(policy, privileged)`` with the groups ``names`` taken out of the policy's and appended to the
    privileged ones (a group the critic already has is not added twice); ``ConfigError`` naming the
    policy's groups when a name is not one of them."""
    unknown = [n for n in names if n not in {g.name for g in policy}]
    if unknown:
        raise ConfigError(f"{task} config key critic_only_groups names {unknown}, which are not policy observation "
                          f"groups of this task; its policy groups are {[g.name for g in policy]}")
    moved = tuple(g for g in policy if g.name in names)
    have = {g.name for g in privileged}
    return (tuple(g for g in policy if g.name not in names),
            privileged + tuple(g for g in moved if g.name not in have))


class LocomotionTask(Task):
    """A legged robot, a velocity command, a gait clock, the shared terms (see the module docstring)."""

    config_class: type[LocomotionConfig]
    legged: LeggedRobot
    policy_groups: ClassVar[tuple[ObsGroup, ...]] = ()
    privileged_groups: ClassVar[tuple[ObsGroup, ...]] = ()
    num_scan_points: ClassVar[int] = 0
    reward_terms: ClassVar[tuple[RewardTerm, ...]] = LEGGED_TERMS
    reward_names = REWARD_NAMES  # an instance's own: its terms, then positive_clip
    state_names = ("last_action", "_previous_action", "command", "phase", "_contact", "_air_time", "_foot_height", "_previous_foot_pos")

    def __init_subclass__(cls, *, config: type[LocomotionConfig] | None = None, legged: LeggedRobot | None = None,
                          obs_groups: GroupList | None = None, privileged_obs_groups: GroupList | None = None,
                          num_scan_points: int | None = None, **kwargs: Any) -> None:  # fmt: skip
        super().__init_subclass__(**kwargs)
        if num_scan_points is not None:
            cls.num_scan_points = num_scan_points
        if legged is None:  # an intermediate base (e.g. TerrainLocomotionTask): a robot's subclass gives the rest
            return
        cls.config_class, cls.legged, cls.tracking_body = config, legged, legged.root_body
        cls.policy_groups = _group_list(obs_groups, "policy", cls)
        cls.privileged_groups = _group_list(privileged_obs_groups or (), "privileged", cls)
        plan = cls._plan(cls.policy_groups, cls.privileged_groups, config())  # checked at import
        _check_slices(obs_groups, plan.policy_slices, "policy", cls)
        _check_slices(privileged_obs_groups or {}, plan.privileged_slices, "privileged", cls)
        cls.obs_groups, cls.privileged_obs_groups = plan.policy_slices, plan.privileged_slices
        cls.declared_groups = plan.groups

    @classmethod
    def _plan(cls, policy: tuple[ObsGroup, ...], privileged: tuple[ObsGroup, ...], cfg: LocomotionConfig) -> ObservationPlan:
        camera = getattr(cfg, "camera", None)
        counts = {"joints": len(cls.legged.joint_names), "feet": len(cls.legged.foot_names), "scan_points": cls.num_scan_points}
        if camera is None and any(g.size == CAMERA_PIXELS for g in (*policy, *privileged)):
            raise ValueError(f"{cls.__name__}: its observation has a camera frame (the depth group) but its config class "
                             f"{type(cfg).__name__} has no camera: give it a field camera: DepthCameraConfig")
        try:
            if camera is not None:
                counts["camera_pixels"] = camera.pixels
                policy, privileged = (tuple(camera_group(g, camera) for g in groups) for groups in (policy, privileged))
            return plan_observation(policy, privileged, counts)
        except (TypeError, ValueError) as e:
            raise type(e)(f"{cls.__name__}: {e}") from None

    def observation_groups(self, cfg: LocomotionConfig) -> tuple[tuple[ObsGroup, ...], tuple[ObsGroup, ...]]:
        """The ``(policy, privileged)`` groups of a task made with ``cfg``: the class's, with the config's
        ``critic_only_groups`` moved from the policy's to the end of the privileged (a terrain task also
        leaves the policy's height scan out when its config says so)."""
        return critic_only(self.policy_groups, self.privileged_groups, cfg.critic_only_groups, type(self).__name__)

    def __init__(self, **config: Any) -> None:
        cfg = build_config(self.config_class, config, kind=f"{type(self).__name__} config key")
        model = self.load_model(cfg)
        super().__init__(model, cfg)
        self.robot, self._keyframe = resolve_robot(model, self.legged, cfg.soft_joint_limit)
        # position actuators as they are; torque actuators become PD servos with the config's gains
        self.actuator_kinds = servo_joint_actuators(model, self.robot.actuator_ids, cfg.pd_kp, cfg.pd_kd)
        self._home = self.robot.home  # (J,) home pose: the zero of the actions and of joint_pos
        scales = cfg.reward_scales
        terms = resolve_terms(LAYER, self.reward_terms, {name: getattr(scales, name) for name in REWARD_NAMES[:-1]}, cfg.reward_terms)
        self.reward_names = (*terms.names, POSITIVE_CLIP)
        self._weights = np.array([*terms.scales, scales.positive_clip]) * cfg.control_dt
        self._term_params = terms.param_table()
        groups = self.observation_groups(cfg)
        plan = self._plan(*groups, cfg)
        self._camera_config = cfg.camera if any(g.size == CAMERA_PIXELS for g in (*groups[0], *groups[1])) else None
        self.obs_groups, self.privileged_obs_groups, self.declared_groups = plan.policy_slices, plan.privileged_slices, plan.groups
        kernel = step_kernel(terms.terms, terms.active, plan)
        self._compute, self._observe = first_call_locked(kernel, "compute"), first_call_locked(kernel, "observe")
        self._apply_kernel, self._reset_kernel = batch_kernel(apply_actions), batch_kernel(kernels.reset_envs)
        self.params, self.commands, self.reset_ranges = kernel_records(cfg)
        self._obs_size = max((s.stop for s in self.obs_groups.values()), default=0)
        self._privileged_obs_size = max((s.stop for s in self.privileged_obs_groups.values()), default=0)

    obs_size = property(lambda self: self._obs_size)
    privileged_obs_size = property(lambda self: self._privileged_obs_size)
    action_size = property(lambda self: len(self.legged.joint_names))
    reward_weights = property(lambda self: self._weights)
    reset_keyframe = property(lambda self: self._keyframe)

    @cached_property
    def mirror(self) -> MirrorMap:
        """The left/right mirror of the policy observation and the actions
        (:mod:`~unilab_envs.locomotion.mirror`); ``ValueError`` where the robot or layout has none."""
        legged = self.legged
        return locomotion_mirror(self.model, self.obs_groups, self.declared_groups, legged.joint_names, legged.foot_names,
                                 legged.phase_offsets, self._keyframe)

    @cached_property
    def privileged_mirror(self) -> MirrorMap:
        """The same reflection on the privileged (critic) observation: ``obs_perm`` / ``obs_sign`` over its
        columns, the actions' as :attr:`mirror`'s; ``ValueError`` where it has none."""
        legged = self.legged
        return locomotion_mirror(self.model, self.privileged_obs_groups, self.declared_groups, legged.joint_names,
                                 legged.foot_names, legged.phase_offsets, self._keyframe)

    def load_model(self, cfg: LocomotionConfig):
        """The MuJoCo model of the task: the robot's MJCF (its floor plane) unless a terrain task says otherwise."""
        return load_model(cfg.model_path, cfg.sim_dt)

    def make_ground(self, num_envs: int) -> Ground:
        """The ground heights are measured from: flat (z = 0) unless a terrain task says otherwise."""
        return flat_ground()

    def bind(self, batch, num_envs: int) -> None:
        n, joints, feet = num_envs, self.action_size, len(self.legged.foot_names)
        self.physics = Physics(batch.bind("qpos"), batch.bind("qvel"), batch.bind(self.legged.foot_positions), batch.bind("actuator_force"))
        self._ctrl = batch.bind("ctrl")
        self.last_action = np.zeros((n, joints))
        self._previous_action = np.zeros((n, joints))
        self.command = np.zeros((n, 3))
        self.phase = np.zeros(n)
        self._contact = np.ones((n, feet), dtype=np.bool_)
        self._air_time = np.zeros((n, feet))
        self._foot_height = np.zeros((n, feet))
        self._previous_foot_pos = np.zeros((n, feet, 3))
        self.legs = Legs(*(getattr(self, name) for name in LocomotionTask.state_names))  # the same arrays, by name
        self.ground = self.make_ground(n)
        self.camera = None
        if self._camera_config is not None:  # a task whose observation has the depth image
            self.camera = DepthCamera(self._camera_config, self.model, n, self.robot.root_q, self.control_dt)
            self.ground = self.ground._replace(depth_image=self.camera.images)

    def apply_actions(self, actions: np.ndarray) -> None:
        self._apply_kernel(actions, self._ctrl, self.legs, self.robot, self.config.action_scale)

    def compute(self, obs, privileged_obs, reward_terms, reward, terminated, episode_step, rng) -> None:
        if self.camera is not None:
            self.camera.after_step(self.physics.qpos)
        self._compute(obs, privileged_obs, reward_terms, reward, terminated, episode_step, rng, self.physics, self.robot,
                      self.legs, self.ground, self.params, self.commands, self._weights, self._term_params)  # fmt: skip

    def reset_envs(self, ids: np.ndarray, rng: np.ndarray) -> None:
        self._reset_kernel(ids, rng, self.physics, self.robot, self.legs, self.reset_ranges, self.commands)

    def observe(self, ids: np.ndarray, obs, privileged_obs) -> None:
        if self.camera is not None:
            self.camera.after_reset(self.physics.qpos, ids)
        self._observe(ids, obs, privileged_obs, self.physics, self.robot, self.legs, self.ground, self.params, self.commands)

    def get_state(self) -> dict[str, Any]:
        state = super().get_state()
        if self.camera is not None:
            state["camera"] = copy_attributes(self.camera, DepthCamera.state_names)
        return state

    def set_state(self, state: dict[str, Any]) -> None:
        super().set_state(state)
        if self.camera is not None:
            if "camera" not in state:
                raise StateError(f"{type(self).__name__} task state: the saved state has no depth camera; it was saved "
                                 "from a task without one")
            restore_attributes(self.camera, DepthCamera.state_names, state["camera"], f"{type(self).__name__} depth camera")

    def deploy_facts(self):
        """A velocity command, the robot's joints and gait phases, the config class's MJCF (deploy spec)."""
        from unilab_envs.core.task import DeployFacts

        return DeployFacts(command="velocity", joint_names=tuple(self.legged.joint_names),
                           mjcf=getattr(self.config_class, "model_path", self.config.model_path),
                           phase_offsets=tuple(self.legged.phase_offsets))

