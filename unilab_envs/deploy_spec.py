"""Build a task's deploy spec from the task itself: its config, its model and its deploy facts.

``deploy_spec_for("UniLab/Go1Joystick-v0", model_path=...)`` builds a one-env batched
env of the task (with those keywords, as ``gym.make_vec`` takes them) and reads the
observation groups, timing, action scale, home pose, actuator gains and limits,
command ranges and episode rules from it. What the model and config do not say (the
command kind, the joints in action order, the gait phases, the end-effector site, the
task's own MJCF) the task says: :meth:`unilab_envs.core.task.Task.deploy_facts`. So a task
registered outside this package (``gym.register`` in the user's module; the id may name
that module, ``"my_module:MyLab/MyTask-v0"``, as ``gym.make`` takes it) gets its spec too.
The gains are the ones in use: a model's own position servos, or, for ``<motor>``
actuators, the servos the task made of them with its ``pd_kp`` / ``pd_kd``
(:func:`unilab_envs.core.model.servo_joint_actuators`). :func:`deploy_spec_for` imports the
task (and so Numba) when called; importing this module does not.

This is the simulator's side of the deploy spec: the spec itself, its reader and the NumPy path a robot
runs (:mod:`unilab_robot.deploy`) know no task. :func:`task_group_builders` reads the robot-side builders
of a task module's own observation groups from their declarations, for ``unilab play``.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math
import re
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import mujoco
import numpy as np

from unilab_robot.assets import ASSETS_DIR
from unilab_robot.deploy.grasp import grasp_parts
from unilab_robot.deploy.camera import camera_section
from unilab_robot.deploy.height_scan import terrain_section
from unilab_robot.deploy.safety import actuator_torque_limit
from unilab_robot.deploy.spec import (Action, Command, DeploySpec, Episode, Estimator, Gait, ModelInfo, Normalizer,
                                     Observation, ObsGroup, SpecError, TaskInfo, Timing, validate)



class NoDeploySpec(SpecError):
    """The env is not a UniLab task (a Gymnasium env without a :class:`~unilab_envs.core.task.Task`):
    it has no robot-side contract to write."""


def group_docs(task: Any) -> dict[str, tuple[str, str]]:
    """``(units, meaning)`` of each of ``task``'s policy observation groups, from its declarations
    (``task.declared_groups``: :class:`~unilab_envs.core.obs_groups.ObsGroup`); :class:`SpecError` naming
    a group the task does not declare."""
    declared = getattr(task, "declared_groups", {}) or {}
    unknown = [name for name in task.obs_groups if name not in declared]
    if unknown:
        raise SpecError(f"{type(task).__name__}'s observation group(s) {unknown} are not declared, so the deploy spec "
                        f"cannot say their units and meaning: declare each as a unilab_envs.core.obs_groups.ObsGroup "
                        f"(name, size, units, meaning, NumPy builder for play) in {type(task).__name__}.declared_groups; "
                        f"declared: {sorted(declared)}")
    return {name: (declared[name].units, declared[name].doc) for name in task.obs_groups}


def _task_spec(env_id: str):
    """The registered ``EnvSpec`` of ``env_id`` (``"module:Id"`` imports ``module`` first, as ``gym.make`` does);
    :class:`NoDeploySpec` for an id without a batched (``vector_entry_point``) UniLab-style task."""
    import importlib

    import gymnasium as gym

    import unilab_envs  # noqa: F401  registers UniLab/*

    module, _, name = env_id.rpartition(":")
    if module:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as e:
            raise SpecError(f"task {env_id!r}: cannot import {module!r} ({e}); run where it is importable "
                            f"(its folder on sys.path / PYTHONPATH)") from None
    try:
        spec = gym.spec(name)
    except gym.error.Error as e:
        raise NoDeploySpec(f"no deploy spec builder for {env_id!r}: {e}") from None
    if spec.vector_entry_point is None:
        raise NoDeploySpec(f"no deploy spec builder for {env_id!r}: it is not a UniLab task (a batched env on "
                           f"unilab_envs.core.task.Task, whose deploy_facts() says what the robot side needs)")
    return spec


def _one_env(env_id: str, **env_kwargs: Any):
    """A one-env batched env of task ``env_id`` (closed by the caller) and its :class:`Task`."""
    import gymnasium as gym

    from unilab_envs.core.task import Task

    _task_spec(env_id)
    try:
        env = gym.make_vec(env_id, num_envs=1, num_threads=1, **env_kwargs)
    except TypeError as e:
        if "num_threads" not in str(e):
            raise
        raise NoDeploySpec(f"no deploy spec builder for {env_id!r}: its batched env is not a UniLab one "
                           f"(it takes no num_threads)") from None
    task = getattr(env.unwrapped, "task", None)
    if not isinstance(task, Task):
        env.close()
        raise NoDeploySpec(f"no deploy spec builder for {env_id!r}: its batched env has no "
                           f"unilab_envs.core.task.Task (env.unwrapped.task) to ask")
    return env, task


def _packaged(path: str | Path) -> bool:
    """Whether ``path`` is an MJCF shipped with UniLab (:mod:`unilab_robot.assets`)."""
    return Path(path).resolve().is_relative_to(ASSETS_DIR)


def _version(env_id: str) -> int:
    match = re.search(r"-v(\d+)$", env_id)
    return int(match.group(1)) if match else 0


def _names(model: mujoco.MjModel, kind: mujoco.mjtObj, count: int) -> tuple[str, ...]:
    return tuple(mujoco.mj_id2name(model, kind, i) or "" for i in range(count))


def _floats(values) -> tuple[float, ...]:
    return tuple(float(v) for v in np.asarray(values, dtype=np.float64).ravel())


def _optional(values, present) -> tuple[float | None, ...]:
    return tuple(float(v) if p else None for v, p in zip(values, present))


@functools.lru_cache(maxsize=None)
def default_model_path(env_id: str) -> Path:
    """The MJCF task ``env_id`` loads by default, as the task says (its :class:`DeployFacts`' ``mjcf``).

    Builds a one-env batch of the task (imports it); :class:`SpecError` for an id without one.
    (``unilab play`` finds a spec's model without the task: :func:`unilab_robot.model.packaged_model_path`.)
    """
    env, task = _one_env(env_id)
    try:
        return Path(task.deploy_facts().mjcf)
    finally:
        env.close()


def _own_packaged_model(task: Any, model_path: str | Path, default: str | Path) -> bool:
    """Whether the spec may leave ``model.mjcf`` out: one of this package's tasks on its own packaged MJCF
    (play finds it among the package's by the spec's names, :func:`unilab_robot.model.packaged_model_path`). Any other
    task or model gets the MJCF's absolute path, so play loads it without the task's code."""
    return (type(task).__module__.startswith("unilab_envs.") and Path(model_path) == Path(default)
            and _packaged(default))


def spec_from_env(env: Any, env_id: str, safety: Any = None, safety_source: str = "") -> DeploySpec:
    """The deploy spec of a UniLab vector env (``gym.make_vec(env_id, ...)``, unwrapped or not).

    ``safety``: a ``safety:`` section (``{}``: the defaults) to resolve on the task's model and
    write as the spec's ``safety`` section (:func:`unilab_robot.deploy.safety.spec_section`, with
    ``safety_source`` saying where it came from); tasks whose actions are not joint targets
    around a home pose (the arms) get none. ``None``: no section.
    """
    base = env.unwrapped
    task, model, cfg = base.task, base.model, base.task.config
    facts = task.deploy_facts()
    joint_names = tuple(facts.joint_names)
    joints = np.array([mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n) for n in joint_names])
    actuators = []
    for j, name in zip(joints, joint_names):
        drives = np.flatnonzero((model.actuator_trnid[:, 0] == j) & (model.actuator_trntype == mujoco.mjtTrn.mjTRN_JOINT))
        if drives.size != 1:
            raise SpecError(f"joint {name!r} must be driven by exactly one actuator, found {drives.size}")
        actuators.append(int(drives[0]))
    actuators = np.asarray(actuators)
    home = model.key_qpos[task.reset_keyframe, model.jnt_qposadr[joints]]
    floating = task.tracking_body != "world"
    docs = group_docs(task)
    groups = tuple(ObsGroup(name, s.start, s.stop, *docs[name]) for name, s in task.obs_groups.items())
    kp = model.actuator_gainprm[actuators, 0]
    kd = -model.actuator_biasprm[actuators, 2]
    torque = actuator_torque_limit(model, actuators, joints)  # forcerange, or the joint's actuatorfrcrange
    force_limited = np.isfinite(torque)
    ctrl_limited = model.actuator_ctrllimited[actuators].astype(bool)
    action = dict(
        size=task.action_size, joint_names=joint_names,
        actuator_names=tuple(mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, int(a)) for a in actuators),
        home=_floats(home), scale=float(cfg.action_scale), clip=(-1.0, 1.0), kp=_floats(kp), kd=_floats(kd),
        torque_limit=_optional(torque, force_limited),
        ctrl_low=_optional(model.actuator_ctrlrange[actuators, 0], ctrl_limited),
        ctrl_high=_optional(model.actuator_ctrlrange[actuators, 1], ctrl_limited),
    )
    grasp = motion = None
    if facts.command == "grasp":  # pick tasks: the end-effector controller and the object
        grasp = grasp_parts(task, int(base.max_episode_steps))
        if grasp is None:
            raise SpecError(f"{type(task).__name__} says command 'grasp', but its config has no object to pick "
                            f"(cube_size ...: UR5Grasp's keys)")
        action.update(grasp[1])
        command, episode, gait = grasp[2], grasp[3], None
    elif facts.command == "motion":  # a clip to follow (the motion section), joint targets about the home pose
        action.update(mode="home_offset")
        motion = task.motion_section()
        command = Command(kind="motion", names=(), units=(), ranges=())
        # the tilt the task ends an episode at for an upright reference (the guard's tilt watchdog); the
        # episode's own rules are the motion section's (anchor and end-effector heights, tilt against the reference)
        tilt = math.acos(max(-1.0, 1.0 - motion.anchor_ori_threshold))
        episode = Episode(max_steps=int(base.max_episode_steps), reset_joint_range=float(motion.reset_joint_noise),
                          max_tilt=tilt)
        gait = None
    elif facts.command == "reach_target":
        low, high = model.jnt_range[joints, 0].copy(), model.jnt_range[joints, 1].copy()
        limited = model.jnt_limited[joints].astype(bool)
        low[~limited], high[~limited] = -2 * math.pi, 2 * math.pi
        action.update(mode="target_delta", target_low=_floats(low), target_high=_floats(high))
        command = Command(kind="reach_target", names=("radius", "azimuth", "height"), units=("m", "rad", "m"),
                          ranges=tuple(tuple(map(float, getattr(cfg, n))) for n in
                                       ("target_radius", "target_azimuth", "target_height")),
                          azimuth_offset=float(facts.front_azimuth))
        episode = Episode(max_steps=int(base.max_episode_steps), reset_joint_range=float(cfg.reset_joint_range),
                          success_threshold=float(cfg.success_threshold))
        gait = None
    else:
        action.update(mode="home_offset")
        command = Command(kind="velocity", names=("vx", "vy", "yaw_rate"), units=("m/s", "m/s", "rad/s"),
                          ranges=tuple(tuple(map(float, getattr(cfg, n))) for n in
                                       ("command_vx", "command_vy", "command_yaw")),
                          resample_time=float(cfg.command_resample_time),
                          zero_probability=float(cfg.zero_command_probability),
                          straight_probability=float(cfg.straight_command_probability))
        episode = Episode(max_steps=int(base.max_episode_steps), reset_joint_range=float(cfg.reset_joint_range),
                          reset_xy_range=float(cfg.reset_xy_range), reset_base_velocity=float(cfg.reset_base_velocity),
                          reset_random_yaw=True, max_tilt=float(cfg.max_tilt),
                          min_base_height=float(cfg.min_base_height), tracking_sigma=float(cfg.tracking_sigma))
        gait = Gait(frequency=float(cfg.gait_frequency), foot_phase_offsets=_floats(facts.phase_offsets))
    target_body = facts.target_body
    model_path = getattr(cfg, "model_path", facts.mjcf)
    spec = DeploySpec(
        task=TaskInfo(id=env_id, version=_version(env_id)),
        timing=Timing(physics_dt=float(model.opt.timestep), substeps=int(task.frame_skip), control_dt=float(task.control_dt)),
        model=ModelInfo(
            joint_names=_names(model, mujoco.mjtObj.mjOBJ_JOINT, model.njnt),
            actuator_names=_names(model, mujoco.mjtObj.mjOBJ_ACTUATOR, model.nu),
            root_body=task.tracking_body if floating else None,
            ee_site=facts.ee_site,
            target_body=target_body if target_body and mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, target_body) >= 0 else None,
            home_keyframe=mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_KEY, task.reset_keyframe),
            mjcf=None if _own_packaged_model(task, model_path, facts.mjcf) else str(Path(model_path).resolve()),
        ),
        observation=Observation(size=task.obs_size, groups=groups, normalizer=Normalizer(folded_in=True)),
        action=Action(**action), command=command, episode=episode, gait=gait,
        terrain=terrain_section(task),  # rough terrain: its scan grid, ground and start tiles
        camera=camera_section(task),  # a depth camera: intrinsics, pose, range, rate
        grasp=grasp[0] if grasp is not None else None,
        motion=motion,
    )
    if safety is not None and spec.action.mode == "home_offset":
        from unilab_robot.deploy.safety import joint_model_from_spec, spec_section

        section = spec_section(safety, joint_model_from_spec(spec, model), spec.timing.control_dt, safety_source)
        spec = dataclasses.replace(spec, safety=section)
    validate(spec)
    return spec


def deploy_spec_for(env_id: str, *, safety: Any = None, safety_source: str = "", estimator: Any = None,
                    **env_kwargs: Any) -> DeploySpec:
    """Build the deploy spec of task ``env_id`` made with ``env_kwargs`` (e.g. ``model_path=``).

    ``safety`` / ``safety_source``: the guard's section to resolve and write (:func:`spec_from_env`).
    ``estimator``: the groups a policy's learned state estimator estimates (its ``policy.estimator.targets``):
    the spec's ``estimator`` section (:func:`estimator_section`); ``None``: none.
    """
    env, task = _one_env(env_id, **env_kwargs)
    try:
        spec = spec_from_env(env, env_id, safety, safety_source)
        if estimator is None:
            return spec
        spec = dataclasses.replace(spec, estimator=estimator_section(task, tuple(estimator)))
        validate(spec)
        return spec
    finally:
        env.close()


def estimator_section(task: Any, targets: tuple[str, ...]) -> Estimator:
    """The spec's ``estimator`` section of a policy that estimates ``task``'s privileged groups ``targets``, in order,
    with their units and meaning from the task's declarations; :class:`SpecError` for a target it does not declare
    as a privileged group."""
    declared = getattr(task, "declared_groups", {}) or {}
    privileged = getattr(task, "privileged_obs_groups", {}) or {}
    groups, at = [], 0
    for name in targets:
        if name not in privileged or name not in declared:
            raise SpecError(f"the policy's estimator estimates {name!r}, which {type(task).__name__} does not declare as "
                            f"a privileged observation group (its privileged groups: {list(privileged)})")
        size = privileged[name].stop - privileged[name].start
        groups.append(ObsGroup(name, at, at + size, declared[name].units, declared[name].doc))
        at += size
    return Estimator(size=at, groups=tuple(groups))


def task_group_builders(module: str | ModuleType) -> dict[str, Callable]:
    """The robot-side builders of the groups of their own that ``module``'s task classes declare: name ->
    the :class:`~unilab_envs.core.obs_groups.ObsGroup`'s ``builder``, for the groups
    :data:`unilab_robot.deploy.reference.GROUP_BUILDERS` lacks (what ``PolicyIO(..., builders=)`` takes).

    ``module``: a module (or its name, imported here) defining :class:`~unilab_envs.core.task.Task`
    subclasses, such as the one a spec's task id ``"module:Id"`` names. Read from the classes' declarations
    (``declared_groups``) when asked, not collected into a table when the classes are made."""
    from unilab_envs.core.task import Task
    from unilab_robot.deploy.reference import GROUP_BUILDERS

    if isinstance(module, str):
        module = importlib.import_module(module)
    found: dict[str, Callable] = {}
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, Task):
            for name, group in (getattr(value, "declared_groups", None) or {}).items():
                if group.builder is not None and name not in GROUP_BUILDERS:
                    found.setdefault(name, group.builder)
    return found
