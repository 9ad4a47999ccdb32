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
    the height to lift the object to).
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
    section (:class:`unilab_envs.deploy.safety.SafetyConfig`). ``unilab export`` writes it
    for every joystick policy, resolved on the training model (per-joint numbers by joint
    name, :func:`unilab_envs.deploy.safety.spec_section`) and with a ``source``: the run's
    profile section, or the defaults. ``PolicyIO`` and ``unilab play`` run it by default
    (``PolicyIO(..., safety=False)`` / ``--safety off`` opt out). Optional: a spec without it
    (exported before it; arm specs, whose actions are not ``home_offset``) runs no guard
    unless ``unilab play --safety`` asks for one.
``terrain``
    rough-terrain tasks: the ``height_scan`` group's grid and frame, the heightfield geom the
    ground is read from, and how ``unilab play`` rebuilds the training terrain and where its
    episodes start (:class:`unilab_envs.deploy.height_scan.TerrainSpec`). Optional: a spec
    without it is for flat ground.
``grasp``
    pick tasks (``action.mode: ee_delta``): the end-effector controller (workspace, lead,
    orientation held, damping, joint step), the gripper (actuator, open / closed ``ctrl``,
    pads) and the object (body, size, table, reset placement, mass and friction, success
    rule) (:class:`unilab_envs.deploy.grasp.GraspSpec`). Optional: absent for other tasks.
``history``
    the observation history the policy sees (a run's ``obs_history``,
    :mod:`unilab_envs.deploy.history`): ``length`` frames of ``groups``; the ONNX input is
    ``size`` wide, the ``observation`` above followed by ``columns`` (``"<group>@<k>"``:
    the group's values ``k`` control steps earlier). Optional: a spec without it feeds
    the ``observation`` to the policy as it is.

Everything here is plain Python and NumPy-free JSON: a robot program imports it
without torch, Numba or the training stack.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

SCHEMA = "unilab.deploy_spec"
SCHEMA_VERSION = 1
ONNX_METADATA_KEY = "unilab_deploy_spec"
SPEC_FILENAME = "deploy_spec.json"
ACTION_MODES = ("home_offset", "target_delta", "ee_delta")
PRECISIONS = ("fp32", "fp16", "int8")
COMMAND_KINDS = ("velocity", "reach_target", "lift")


class SpecError(ValueError):
    """A deploy spec that is malformed, of another schema version, or for another task or policy."""


@dataclass(frozen=True)
class TaskInfo:
    id: str
    version: int


@dataclass(frozen=True)
class Timing:
    physics_dt: float
    substeps: int
    control_dt: float

    @property
    def control_hz(self) -> float:
        return 1.0 / self.control_dt


@dataclass(frozen=True)
class ModelInfo:
    joint_names: tuple[str, ...]
    actuator_names: tuple[str, ...]
    root_body: str | None = None      # body with the free joint (legged robots)
    ee_site: str | None = None        # end-effector site (arms)
    target_body: str | None = None    # mocap body that shows a reach target, if the model has one
    home_keyframe: str | None = None  # keyframe an episode starts from
    mjcf: str | None = None           # the MJCF trained on when it was not the package's robot (model_path=)


@dataclass(frozen=True)
class ObsGroup:
    name: str
    start: int
    stop: int
    unit: str
    meaning: str

    @property
    def size(self) -> int:
        return self.stop - self.start


@dataclass(frozen=True)
class Normalizer:
    """``folded_in``: the ONNX graph normalizes itself; else ``(obs - mean) / std`` then clip."""

    folded_in: bool = True
    mean: tuple[float, ...] | None = None
    std: tuple[float, ...] | None = None
    clip: float | None = None


@dataclass(frozen=True)
class Observation:
    size: int
    groups: tuple[ObsGroup, ...]
    normalizer: Normalizer = field(default_factory=Normalizer)

    def group(self, name: str) -> ObsGroup:
        for g in self.groups:
            if g.name == name:
                return g
        raise SpecError(f"the observation has no group {name!r}; it has {[g.name for g in self.groups]}")


@dataclass(frozen=True)
class Action:
    size: int
    mode: str
    joint_names: tuple[str, ...]
    actuator_names: tuple[str, ...]
    home: tuple[float, ...]          # rad, the zero of joint_pos and of home_offset actions
    scale: float                     # rad per unit action (ee_delta: m of the end-effector target)
    clip: tuple[float, float]        # the policy's action is clipped to this first
    kp: tuple[float, ...]            # N m / rad
    kd: tuple[float, ...]            # N m s / rad
    torque_limit: tuple[float | None, ...]   # N m, symmetric; None: unlimited
    ctrl_low: tuple[float | None, ...]       # rad, the actuator's ctrlrange (None: unlimited)
    ctrl_high: tuple[float | None, ...]
    target_low: tuple[float, ...] | None = None   # target_delta mode: joint target bounds
    target_high: tuple[float, ...] | None = None


@dataclass(frozen=True)
class Command:
    """Velocity: ``names`` (vx, vy, yaw_rate) with ``ranges``; reach_target: radius/azimuth/height."""

    kind: str
    names: tuple[str, ...]
    units: tuple[str, ...]
    ranges: tuple[tuple[float, float], ...]
    resample_time: float | None = None       # s; None: once per episode
    zero_probability: float = 0.0
    straight_probability: float = 0.0        # velocity: a moving draw keeps vx only (vy = yaw_rate = 0)
    azimuth_offset: float = 0.0               # reach_target: azimuth of the arm's front (rad)


@dataclass(frozen=True)
class Gait:
    frequency: float                  # Hz; the phase advances 2 pi f control_dt per control step
    foot_phase_offsets: tuple[float, ...]


@dataclass(frozen=True)
class Episode:
    max_steps: int
    reset_joint_range: float = 0.0            # rad, uniform noise on the home pose
    reset_xy_range: float = 0.0               # m, floating base
    reset_base_velocity: float = 0.0          # m/s, floating base, uniform per axis
    reset_random_yaw: bool = False
    max_tilt: float | None = None             # rad; a fall beyond it
    min_base_height: float | None = None      # m; a fall below it
    success_threshold: float | None = None    # m; reach tasks
    tracking_sigma: float | None = None       # exp(-error^2 / sigma) tracking metric


@dataclass(frozen=True)
class PrecisionSample:
    """The action error on one set of recorded observations: ``on`` the bare task, or ``sim2real <profile>``."""

    on: str
    max_action_error: float
    mean_action_error: float
    samples: int


@dataclass(frozen=True)
class Precision:
    """The ONNX graph's numeric precision and what it costs in actions (``unilab export --precision``).

    ``max_action_error`` / ``mean_action_error``: max and mean absolute difference to the fp32
    policy's action, as a fraction of the action range (``high - low``), on the worse of the
    ``measured`` observation sets (the bare task, and the run's sim-to-real profile when it
    trained under one); ``samples``: the observations of all sets; ``bound``: the max error the
    export allowed, on the worse set. ``None`` / empty for fp32 (and ``measured`` empty in
    specs exported before it: their error is on the bare task).
    """

    name: str = "fp32"
    max_action_error: float | None = None
    mean_action_error: float | None = None
    samples: int | None = None
    bound: float | None = None
    measured: tuple[PrecisionSample, ...] = ()


@dataclass(frozen=True)
class HistoryColumn:
    """Columns ``[start, stop)`` of the policy input: group ``group`` as it was ``lag`` control steps ago."""

    name: str
    group: str
    lag: int
    start: int
    stop: int


@dataclass(frozen=True)
class History:
    """The policy's observation history (:mod:`unilab_envs.deploy.history` builds and checks the layout)."""

    length: int                          # frames per group, the current one included
    groups: tuple[str, ...]              # observation groups with a history, in column order
    size: int                            # the policy input: observation.size + the history's columns
    columns: tuple[HistoryColumn, ...]   # after the observation, one block per lag 1 .. length - 1


@dataclass(frozen=True)
class DeploySpec:
    task: TaskInfo
    timing: Timing
    model: ModelInfo
    observation: Observation
    action: Action
    command: Command
    episode: Episode
    gait: Gait | None = None
    precision: Precision = field(default_factory=Precision)  # absent in older specs: fp32
    safety: Any = None  # a unilab_envs.deploy.safety.SafetyConfig; absent (None): no guard
    terrain: Any = None  # a unilab_envs.deploy.height_scan.TerrainSpec; absent (None): flat ground
    history: History | None = None  # absent (None): the policy input is the observation
    grasp: Any = None  # a unilab_envs.deploy.grasp.GraspSpec (ee_delta actions); absent (None): no object to pick
    schema: str = SCHEMA
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        data = _plain(dataclasses.asdict(self))
        if data.get("safety") is None:
            data.pop("safety", None)  # no guard: the key is left out, as in specs made before it
        if not data["precision"].get("measured"):
            data["precision"].pop("measured", None)  # fp32: nothing measured, as in specs made before it
        if data.get("terrain") is None:
            data.pop("terrain", None)  # flat ground: as in specs made before terrain tasks had one
        if data.get("history") is None:
            data.pop("history", None)  # no history: as in specs made before it
        if data.get("grasp") is None:
            data.pop("grasp", None)  # no object to pick: as in specs made before pick tasks had one
        return {"schema": data.pop("schema"), "schema_version": data.pop("schema_version"), **data}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, allow_nan=False) + "\n"

    def require_task(self, task_id: str) -> None:
        """Raise :class:`SpecError` unless this spec is for ``task_id``."""
        if self.task.id != task_id:
            raise SpecError(f"the deploy spec is for {self.task.id}, not {task_id}: use the deploy_spec.json "
                            f"exported with the policy (`unilab export RUN` writes it beside policy.onnx)")

    @property
    def input_size(self) -> int:
        """The policy's input size: the observation's, plus the history's columns when it has one."""
        return self.observation.size if self.history is None else self.history.size

    def require_sizes(self, obs_size: int, action_size: int, what: str = "the policy") -> None:
        """Raise :class:`SpecError` unless the policy input and action sizes match ``what``'s."""
        if (self.input_size, self.action.size) != (obs_size, action_size):
            history = f" with a {self.history.length}-frame history" if self.history is not None else ""
            raise SpecError(f"the deploy spec ({self.task.id}: obs {self.input_size}{history}, action "
                            f"{self.action.size}) does not fit {what} (obs {obs_size}, action {action_size}); "
                            f"use the deploy_spec.json exported with that policy")


# --- JSON -> spec ---------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """Tuples -> lists, recursively (JSON's shape of the dataclass dict)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def tupled(value: Any) -> Any:
    """JSON lists -> tuples, recursively, also inside objects (the dataclasses' frozen shape)."""
    if isinstance(value, Mapping):
        return {k: tupled(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return tuple(tupled(v) for v in value)
    return value


def build_section(cls: type, data: Any, where: str, nested: Mapping[str, Any] | None = None) -> Any:
    """``cls(**data)`` from a JSON object, with unknown and missing keys reported by path (``where``).

    ``nested`` says how the values of some keys are built: a dataclass is built the same way
    (at ``where.key``), a function is called as ``build(value, "where.key")``. Other values
    are kept, their lists made tuples (:func:`tupled`). The spec's sections (``grasp``,
    ``terrain``) are read with this too.
    """
    if not isinstance(data, Mapping):
        raise SpecError(f"{where} must be a JSON object, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise SpecError(f"{where} has unknown keys {unknown}; known: {sorted(fields)}")
    missing = [n for n, f in fields.items() if n not in data and f.default is dataclasses.MISSING
               and f.default_factory is dataclasses.MISSING]
    if missing:
        raise SpecError(f"{where} lacks keys {missing}")
    nested = nested or {}
    values = {}
    for key, value in data.items():
        build = nested.get(key)
        if build is None:
            values[key] = tupled(value)
        elif dataclasses.is_dataclass(build):
            values[key] = build_section(build, value, f"{where}.{key}")
        else:
            values[key] = build(value, f"{where}.{key}")
    return cls(**values)


def _build(cls: type, data: Any, where: str) -> Any:
    """A spec dataclass from its JSON object, its sections, groups and columns built too."""
    return build_section(cls, data, where, _nested(cls))


_SECTIONS = {"task": TaskInfo, "timing": Timing, "model": ModelInfo, "observation": Observation, "action": Action,
             "command": Command, "episode": Episode, "gait": Gait, "normalizer": Normalizer, "precision": Precision,
             "history": History}


def _nested(cls: type) -> dict[str, Any]:
    """How :func:`_build` builds the values of ``cls``'s keys that are not plain JSON."""
    if cls in (ObsGroup, PrecisionSample):
        return {}
    nested: dict[str, Any] = {key: _optional(section) for key, section in _SECTIONS.items()}
    if cls is DeploySpec:
        nested.update(safety=_safety, grasp=_grasp, terrain=_terrain)
    elif cls is History:
        nested["columns"] = _listed(HistoryColumn, "columns")
    elif cls is Observation:
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
    from unilab_envs.deploy.grasp import grasp_from_dict  # NumPy: only for pick specs

    return grasp_from_dict(value, where)


def _terrain(value: Any, where: str) -> Any:
    from unilab_envs.deploy.height_scan import terrain_from_dict  # NumPy: only for terrain specs

    return terrain_from_dict(value, where)


def _safety(value: Any, where: str) -> Any:
    """The spec's ``safety`` section as a validated ``SafetyConfig`` (``None`` stays ``None``)."""
    if value is None:
        return None
    from unilab_envs.deploy.safety import safety_config  # NumPy: only for specs that carry a guard

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
        return spec_from_json(text, str(path))
    return spec_from_json(path.read_text(), str(path))


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
        from unilab_envs.deploy.safety import SafetyConfig

        _need(isinstance(spec.safety, SafetyConfig),
              f"safety must be a SafetyConfig (or null), got {type(spec.safety).__name__}; build it with "
              f"unilab_envs.deploy.safety.safety_config(section)")
    if spec.terrain is not None or any(g.name == "height_scan" for g in obs.groups):
        from unilab_envs.deploy.height_scan import validate_terrain

        validate_terrain(spec)
    if spec.history is not None:
        _validate_history(spec)
    if spec.grasp is not None or a.mode == "ee_delta" or c.kind == "lift":
        from unilab_envs.deploy.grasp import validate_grasp  # NumPy: only for pick specs

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


def _validate_history(spec: DeploySpec) -> None:
    """The history section is the layout :func:`unilab_envs.deploy.history.history_section` gives its groups."""
    from unilab_envs.config import ConfigError
    from unilab_envs.deploy.history import HistoryConfig, history_section  # NumPy: only for specs with a history

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
