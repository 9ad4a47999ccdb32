"""The deploy spec: what a robot-side program needs to run an exported policy.

``unilab export`` writes it as ``deploy_spec.json`` beside ``policy.onnx`` and stores
the same JSON in the ONNX file's metadata (key :data:`ONNX_METADATA_KEY`). It is one
small, versioned JSON document:

``schema`` / ``schema_version``
    :data:`SCHEMA` and :data:`SCHEMA_VERSION`; a loader refuses other versions.
``task``
    the Gymnasium id it was exported from (``UniLab/Go1Joystick-v0``) and its version.
``timing``
    physics step, substeps per control step, control period (``control_dt =
    physics_dt * substeps``).
``model``
    the MJCF's joint and actuator names (in model order), the floating-base body, the
    end-effector site and the target mocap body where the task has them.
``observation``
    size, the groups in order with index ranges ``[start, stop)``, units and meaning,
    and the normalizer (``folded_in``: the ONNX input is the raw observation).
``action``
    how an action becomes ``ctrl``: joint and actuator names in order, the ``home``
    pose, ``scale``, ``clip``, ``mode`` (``home_offset``: target = home + scale * a;
    ``target_delta``: target += scale * a, kept within ``target_low/high``; ``ee_delta``:
    the end-effector target += scale * a[:3] m, a[3] the gripper, through the ``grasp``
    section's controller, the joint lists then being the arm's), PD gains and torque /
    control limits of the actuators.
``command``
    what the task commands and how training drew it (ranges, resampling time; ``lift``:
    the height to lift the object to; ``motion``: a clip of the ``motion`` section, no values).
``gait``
    the gait phase clock (frequency, per-foot offsets), for tasks with one.
``episode``
    length, reset randomization, termination and success rules, as in training.
``precision``
    the numeric precision of the ONNX graph (``fp32``, ``fp16``, ``int8``: ``unilab export
    --precision``) and how far its actions were measured from the fp32 policy's: on the
    bare task and, for a run trained under a sim-to-real profile, on observations recorded
    under that profile (``measured``; the top-level error and the bound are the worse one's).
    Optional: a spec without it (exported before this section existed) loads as ``fp32``.
    Input and output stay float32 whatever the precision.
``safety``
    the safety guard between the policy and the motors (limits on the joint targets,
    watchdogs that latch a safe mode): the keys of a sim-to-real profile's ``safety:``
    section (:class:`unilab_robot.deploy.safety.SafetyConfig`). ``unilab export`` writes it
    for every joystick policy, resolved on the training model (per-joint numbers by joint
    name, :func:`unilab_robot.deploy.safety.spec_section`) and with a ``source``: the run's
    profile section, or the defaults. ``PolicyIO`` and ``unilab play`` run it by default
    (``PolicyIO(..., safety=False)`` / ``--safety off`` opt out). Optional: a spec without it
    (exported before it; arm specs, whose actions are not ``home_offset``) runs no guard
    unless ``unilab play --safety`` asks for one.
``terrain``
    rough-terrain tasks: the ``height_scan`` group's grid and frame, the heightfield geom the
    ground is read from, and how ``unilab play`` rebuilds the training terrain and where its
    episodes start (:class:`unilab_robot.deploy.height_scan.TerrainSpec`). Optional: a spec
    without it is for flat ground.
``grasp``
    pick tasks (``action.mode: ee_delta``): the end-effector controller (workspace, lead,
    orientation held, damping, joint step), the gripper (actuator, open / closed ``ctrl``,
    pads) and the object (body, size, table, reset placement, mass and friction, success
    rule) (:class:`unilab_robot.deploy.grasp.GraspSpec`). Optional: absent for other tasks.
``camera``
    depth-camera tasks: the camera the ``depth`` group's frames come from (intrinsics, pose on
    the body, range, frame rate; :class:`unilab_robot.deploy.camera.CameraSpec`). A robot program
    sets ``PolicyIO.depth_frame`` to its camera's latest frame; ``unilab play`` renders one.
    Optional: absent for tasks without a camera.
``motion``
    motion-tracking tasks (``command.kind: motion``): the clips the policy follows, by file name
    beside the spec (``unilab export`` copies them there), the reference frames it sees ahead, the
    anchor body and the task's termination thresholds (:class:`unilab_robot.deploy.motion.MotionSpec`).
    Optional: absent for other tasks.
``history``
    the observation history the policy sees (a run's ``obs_history``,
    :mod:`unilab_robot.deploy.history`): ``length`` frames of ``groups``; the ONNX input is
    ``size`` wide, the ``observation`` above followed by ``columns`` (``"<group>@<k>"``:
    the group's values ``k`` control steps earlier). Optional: a spec without it feeds
    the ``observation`` to the policy as it is.
``recurrent``
    a recurrent policy's hidden state (``policy.recurrent`` of the run): ``kind`` (``gru``), ``size``,
    the ONNX's ``state_input`` / ``state_output`` (``h_in`` / ``h_out``, ``[1, size]`` float32) and
    ``reset`` (``episode``: zeroed at each episode's start; a hot swap resets it too).
    :mod:`unilab_robot.policy_state` keeps it, one per robot. Optional: a spec without it is
    for a feed-forward policy.
``estimator``
    a learned state estimator inside the graph (``policy.estimator`` of the run): the ``groups``
    it estimates (name, columns ``[start, stop)`` of its output, unit, meaning: e.g. ``linvel``,
    which the observation then lacks, so the robot needs no odometry), their total ``size`` and
    the ONNX ``output`` that carries the estimate (``estimate``, ``[1, size]`` float32) for a program
    to log. The action already reads it: running the policy needs nothing of this section.
    Optional: a spec without it is for a policy without an estimator.

Everything here is plain Python and NumPy-free JSON: a robot program imports it
without torch, Numba or the training stack.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Mapping

from unilab_robot.deploy.sections import (  # noqa: F401 (the spec's names, re-exported)
    SpecError, TaskInfo, Timing, ModelInfo, ObsGroup, Normalizer, Observation, Action, Command, Gait, Episode,
    PrecisionSample, Precision, HistoryColumn, History, DeploySpec, tupled, build_section, SCHEMA,
    SCHEMA_VERSION, ONNX_METADATA_KEY, SPEC_FILENAME, ACTION_MODES, PRECISIONS, COMMAND_KINDS, Recurrent,
    RECURRENT_KINDS, Estimator,
)


def _build(cls: type, data: Any, where: str) -> Any:
    """A spec dataclass from its JSON object, its sections, groups and columns built too."""
    return build_section(cls, data, where, _nested(cls))


_SECTIONS = {"task": TaskInfo, "timing": Timing, "model": ModelInfo, "observation": Observation, "action": Action,
             "command": Command, "episode": Episode, "gait": Gait, "normalizer": Normalizer, "precision": Precision,
             "history": History, "recurrent": Recurrent, "estimator": Estimator}


def _nested(cls: type) -> dict[str, Any]:
    """How :func:`_build` builds the values of ``cls``'s keys that are not plain JSON."""
    if cls in (ObsGroup, PrecisionSample):
        return {}
    nested: dict[str, Any] = {key: _optional(section) for key, section in _SECTIONS.items()}
    if cls is DeploySpec:
        nested.update(safety=_safety, grasp=_grasp, terrain=_terrain, camera=_camera, motion=_motion)
    elif cls is History:
        nested["columns"] = _listed(HistoryColumn, "columns")
    elif cls in (Observation, Estimator):
        nested["groups"] = _listed(ObsGroup, "groups")
    elif cls is Precision:
        nested["measured"] = _listed(PrecisionSample, "measured")
    return nested


def _optional(cls: type):
    return lambda value, where: None if value is None else _build(cls, value, where)


def _listed(cls: type, what: str):
    def build(value: Any, where: str) -> tuple:
        if not isinstance(value, list):
            raise SpecError(f"{where} must be a list of {what}")
        return tuple(_build(cls, v, f"{where}[{i}]") for i, v in enumerate(value))

    return build


def _grasp(value: Any, where: str) -> Any:
    from unilab_robot.deploy.grasp import grasp_from_dict  # NumPy: only for pick specs

    return grasp_from_dict(value, where)


def _terrain(value: Any, where: str) -> Any:
    from unilab_robot.deploy.height_scan import terrain_from_dict  # NumPy: only for terrain specs

    return terrain_from_dict(value, where)


def _camera(value: Any, where: str) -> Any:
    from unilab_robot.deploy.camera import camera_from_dict

    return camera_from_dict(value, where)


def _motion(value: Any, where: str) -> Any:
    from unilab_robot.deploy.motion import motion_from_dict  # NumPy and MuJoCo: only for motion specs

    return motion_from_dict(value, where)


def _safety(value: Any, where: str) -> Any:
    """The spec's ``safety`` section as a validated ``SafetyConfig`` (``None`` stays ``None``)."""
    if value is None:
        return None
    from unilab_robot.deploy.safety import safety_config  # NumPy: only for specs that carry a guard

    try:
        return safety_config(value)
    except ValueError as e:
        raise SpecError(f"{where}: {e}") from None


def spec_from_dict(data: Mapping[str, Any]) -> DeploySpec:
    """Build and :func:`validate` a spec from its JSON object."""
    if not isinstance(data, Mapping):
        raise SpecError(f"a deploy spec is a JSON object, got {type(data).__name__}")
    if data.get("schema") != SCHEMA:
        raise SpecError(f"not a UniLab deploy spec: 'schema' is {data.get('schema')!r}, expected {SCHEMA!r}")
    if data.get("schema_version") != SCHEMA_VERSION:
        raise SpecError(f"deploy spec schema_version {data.get('schema_version')!r} is not supported (this UniLab "
                        f"reads version {SCHEMA_VERSION}); re-export the policy with `unilab export RUN`")
    spec = _build(DeploySpec, data, "spec")
    validate(spec)
    return spec


def spec_from_json(text: str, where: str = "deploy spec") -> DeploySpec:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SpecError(f"{where} is not valid JSON: {e}") from None
    try:
        return spec_from_dict(data)
    except SpecError as e:
        raise SpecError(f"{where}: {e}") from None


def read_onnx_spec_text(path: str | Path) -> str | None:
    """The spec JSON stored in an exported ONNX file's metadata, or ``None`` when it holds none."""
    try:
        import onnxruntime as ort
    except ImportError:  # pragma: no cover - onnx is the fallback reader
        import onnx

        meta = {p.key: p.value for p in onnx.load(str(path), load_external_data=False).metadata_props}
    else:
        options = ort.SessionOptions()
        options.log_severity_level = 3
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        meta = session.get_modelmeta().custom_metadata_map
    return meta.get(ONNX_METADATA_KEY)


def load_spec(path: str | Path) -> DeploySpec:
    """Load and validate a deploy spec from a ``.json`` file, an exported ``.onnx`` file or a folder.

    A folder is searched for ``deploy_spec.json``, then for ``policy.onnx``'s metadata.
    """
    path = Path(path)
    if path.is_dir():
        if (path / SPEC_FILENAME).is_file():
            path = path / SPEC_FILENAME
        elif (path / "policy.onnx").is_file():
            path = path / "policy.onnx"
        else:
            raise SpecError(f"{path} holds neither {SPEC_FILENAME} nor policy.onnx; run `unilab export {path}` first")
    if not path.is_file():
        raise SpecError(f"{path} does not exist; pass a {SPEC_FILENAME}, a policy.onnx or their folder")
    if path.suffix == ".onnx":
        text = read_onnx_spec_text(path)
        if text is None:
            raise SpecError(f"{path} carries no deploy spec in its metadata (exported before deploy specs); "
                            f"re-export it with `unilab export RUN`")
        spec = spec_from_json(text, str(path))
    else:
        spec = spec_from_json(path.read_text(), str(path))
    if spec.motion is not None:  # a motion-tracking policy's clips are files beside its spec
        import dataclasses

        spec = dataclasses.replace(spec, motion=spec.motion.at(path.parent))
    return spec


# --- validation ----------------------------------------------------------------------------


def _need(condition: bool, message: str) -> None:
    if not condition:
        raise SpecError(message)


def _finite(values, name: str) -> None:
    for v in values:
        _need(isinstance(v, (int, float)) and math.isfinite(v), f"{name} must hold finite numbers, got {v!r}")


def validate(spec: DeploySpec) -> None:
    """Raise :class:`SpecError` naming the first inconsistency (sizes, ranges, timing, names)."""
    _need(spec.schema == SCHEMA and spec.schema_version == SCHEMA_VERSION, "schema / schema_version mismatch")
    t = spec.timing
    _need(t.physics_dt > 0 and t.control_dt > 0 and int(t.substeps) == t.substeps and t.substeps >= 1,
          f"timing must have physics_dt > 0, control_dt > 0 and a whole substeps >= 1, got {t}")
    _need(abs(t.physics_dt * t.substeps - t.control_dt) < 1e-9 * max(1.0, t.control_dt),
          f"timing: physics_dt * substeps ({t.physics_dt} * {t.substeps}) must equal control_dt ({t.control_dt})")

    obs = spec.observation
    _need(obs.size >= 1 and len(obs.groups) >= 1, "observation needs a size >= 1 and at least one group")
    at = 0
    for g in obs.groups:
        _need(g.start == at and g.stop > g.start,
              f"observation group {g.name!r} spans [{g.start}, {g.stop}); groups must tile [0, size) in order "
              f"(expected it to start at {at})")
        at = g.stop
    _need(at == obs.size, f"observation groups end at {at}, but the size is {obs.size}")
    names = [g.name for g in obs.groups]
    _need(len(set(names)) == len(names), f"observation group names repeat: {names}")
    n = obs.normalizer
    if not n.folded_in:
        _need(n.mean is not None and n.std is not None and len(n.mean) == len(n.std) == obs.size,
              f"a normalizer that is not folded in needs mean and std of length {obs.size}")
        _finite(n.mean, "normalizer.mean")
        _finite(n.std, "normalizer.std")

    a = spec.action
    _need(a.mode in ACTION_MODES, f"action.mode must be one of {ACTION_MODES}, got {a.mode!r}")
    joints = len(a.joint_names) if a.mode == "ee_delta" else a.size  # ee_delta: the arm's joints, not the action's size
    for key in ("joint_names", "actuator_names", "home", "kp", "kd", "torque_limit", "ctrl_low", "ctrl_high"):
        _need(len(getattr(a, key)) == joints, f"action.{key} has {len(getattr(a, key))} entries, "
              + (f"action.joint_names has {joints}" if a.mode == "ee_delta" else f"action.size is {a.size}"))
    _finite(a.home, "action.home")
    _finite((a.scale, *a.clip, *a.kp, *a.kd), "action scale, clip and gains")
    _need(a.scale > 0 and a.clip[0] < a.clip[1], f"action needs scale > 0 and clip low < high, got {a.scale}, {a.clip}")
    if a.mode in ("target_delta", "ee_delta"):
        _need(a.target_low is not None and a.target_high is not None
              and len(a.target_low) == len(a.target_high) == joints,
              f"{a.mode} actions need target_low and target_high of length {joints}")
    missing_j = [j for j in a.joint_names if j not in spec.model.joint_names]
    missing_a = [x for x in a.actuator_names if x not in spec.model.actuator_names]
    _need(not missing_j and not missing_a,
          f"action names not in the model's names: joints {missing_j}, actuators {missing_a}")

    c = spec.command
    _need(c.kind in COMMAND_KINDS, f"command.kind must be one of {COMMAND_KINDS}, got {c.kind!r}")
    _need(len(c.names) == len(c.units) == len(c.ranges), "command names, units and ranges must have one entry each")
    for name, r in zip(c.names, c.ranges):
        _need(len(r) == 2 and r[0] <= r[1], f"command range of {name!r} must be (low, high), got {r}")
    _need(spec.episode.max_steps >= 1, f"episode.max_steps must be >= 1, got {spec.episode.max_steps}")
    if spec.gait is not None:
        _need(spec.gait.frequency > 0, f"gait.frequency must be > 0, got {spec.gait.frequency}")
    if spec.safety is not None:
        from unilab_robot.deploy.safety import SafetyConfig

        _need(isinstance(spec.safety, SafetyConfig),
              f"safety must be a SafetyConfig (or null), got {type(spec.safety).__name__}; build it with "
              f"unilab_robot.deploy.safety.safety_config(section)")
    if spec.terrain is not None or any(g.name == "height_scan" for g in obs.groups):
        from unilab_robot.deploy.height_scan import validate_terrain

        validate_terrain(spec)
    if spec.camera is not None or any(g.name == "depth" for g in obs.groups):
        from unilab_robot.deploy.camera import validate_camera

        _need(spec.camera is not None, "observation group 'depth' needs the spec's camera section (its intrinsics, pose, range)")
        validate_camera(spec)
    if spec.history is not None:
        _validate_history(spec)
    if spec.recurrent is not None:
        r = spec.recurrent
        _need(r.kind in RECURRENT_KINDS, f"recurrent.kind must be one of {RECURRENT_KINDS}, got {r.kind!r}")
        _need(isinstance(r.size, int) and r.size >= 1, f"recurrent.size must be a whole number >= 1, got {r.size!r}")
        _need(r.reset == "episode", f"recurrent.reset must be 'episode', got {r.reset!r}")
    if spec.estimator is not None:
        _validate_estimator(spec)
    if spec.motion is not None or c.kind == "motion":
        from unilab_robot.deploy.motion import validate_motion  # NumPy and MuJoCo: only for motion specs

        validate_motion(spec)
    if spec.grasp is not None or a.mode == "ee_delta" or c.kind == "lift":
        from unilab_robot.deploy.grasp import validate_grasp  # NumPy: only for pick specs

        validate_grasp(spec)
    p = spec.precision
    _need(isinstance(p, Precision) and p.name in PRECISIONS,
          f"precision.name must be one of {PRECISIONS}, got {getattr(p, 'name', p)!r}")
    for key in ("max_action_error", "mean_action_error", "bound"):
        value = getattr(p, key)
        _need(value is None or (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0),
              f"precision.{key} must be a finite number >= 0 or null, got {value!r}")
    for i, m in enumerate(p.measured):
        _need(isinstance(m, PrecisionSample) and isinstance(m.on, str)
              and all(isinstance(v, (int, float)) and math.isfinite(v) and v >= 0
                      for v in (m.max_action_error, m.mean_action_error, m.samples)),
              f"precision.measured[{i}] needs 'on' (text) and finite action errors and samples >= 0, got {m!r}")


def _validate_estimator(spec: DeploySpec) -> None:
    """The estimator's groups tile ``[0, size)`` of its output, and the observation holds none of them."""
    e = spec.estimator
    _need(isinstance(e, Estimator), f"estimator must be an Estimator section (or null), got {type(e).__name__}")
    _need(isinstance(e.size, int) and e.size >= 1 and len(e.groups) >= 1 and isinstance(e.output, str) and e.output,
          f"estimator needs a whole size >= 1, at least one group and an output name, got {e}")
    at = 0
    for g in e.groups:
        _need(g.start == at and g.stop > g.start, f"estimator group {g.name!r} spans [{g.start}, {g.stop}); its groups "
                                                  f"must tile [0, size) in order (expected it to start at {at})")
        at = g.stop
    _need(at == e.size, f"estimator groups end at {at}, but its size is {e.size}")
    observed = [g.name for g in e.groups if g.name in {o.name for o in spec.observation.groups}]
    _need(not observed, f"estimator: the observation already holds {observed}; an estimator estimates what it lacks")


def _validate_history(spec: DeploySpec) -> None:
    """The history section is the layout :func:`unilab_robot.deploy.history.history_section` gives its groups."""
    from unilab_robot.config import ConfigError
    from unilab_robot.deploy.history import HistoryConfig, history_section  # NumPy: only for specs with a history

    h = spec.history
    _need(isinstance(h, History), f"history must be a History section (or null), got {type(h).__name__}")
    try:
        want = history_section({g.name: (g.start, g.stop) for g in spec.observation.groups}, spec.observation.size,
                               HistoryConfig(groups=tuple(h.groups), length=h.length))
    except ConfigError as e:
        raise SpecError(f"history: {e}") from None
    _need(h == want, f"history: its columns or size do not match the layout of {h.length} frames of "
                     f"{list(h.groups)} after the observation (size {want.size}, columns "
                     f"{[c.name for c in want.columns]}); re-export the policy with `unilab export RUN`")
