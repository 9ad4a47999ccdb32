"""The deploy spec's building blocks: its schema constants, its sections as frozen dataclasses,
:class:`SpecError` and the JSON-object reader :func:`build_section`.

:mod:`unilab_robot.deploy.spec` documents the whole spec and reads, validates and writes it; the
modules of optional sections (``grasp``, ``terrain``, ``history``, ``safety``) build theirs
from these blocks, so they import this module rather than the spec reader that imports them.
Plain Python, no NumPy.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Mapping

SCHEMA = "unilab.deploy_spec"
SCHEMA_VERSION = 1
ONNX_METADATA_KEY = "unilab_deploy_spec"
SPEC_FILENAME = "deploy_spec.json"
ACTION_MODES = ("home_offset", "target_delta", "ee_delta")
PRECISIONS = ("fp32", "fp16", "int8")
COMMAND_KINDS = ("velocity", "reach_target", "lift", "motion")


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
    """The policy's observation history (:mod:`unilab_robot.deploy.history` builds and checks the layout)."""

    length: int                          # frames per group, the current one included
    groups: tuple[str, ...]              # observation groups with a history, in column order
    size: int                            # the policy input: observation.size + the history's columns
    columns: tuple[HistoryColumn, ...]   # after the observation, one block per lag 1 .. length - 1


RECURRENT_KINDS = ("gru",)


@dataclass(frozen=True)
class Recurrent:
    """A recurrent policy's hidden state (:mod:`unilab_robot.policy_state` keeps it): ``policy.onnx`` is
    ``obs, <state_input> [1, size] -> actions, <state_output> [1, size]``, float32; the program feeds each
    step's output back as the next step's input, and zeroes it at each episode's start (``reset``) and
    at a hot swap."""

    kind: str                     # the memory: "gru"
    size: int                     # the state's width
    state_input: str = "h_in"
    state_output: str = "h_out"
    reset: str = "episode"        # zeroed at each episode's start (and by a hot swap)


@dataclass(frozen=True)
class Estimator:
    """A learned state estimator inside ``policy.onnx`` (a bundled-PPO run's ``policy.estimator``): from the
    observation it estimates ``groups``, values the observation does not hold (so the robot need not
    measure them: no odometry for ``linvel``), and the action reads that estimate inside the graph. The
    graph also gives the estimate as its output ``output`` ``[1, size]`` float32, each group's columns
    ``[start, stop)`` in its ``unit``, for a program to log; acting needs nothing of it."""

    size: int                     # the estimate's width
    groups: tuple[ObsGroup, ...]  # what it estimates: name, columns of the output, unit, meaning
    output: str = "estimate"      # the ONNX output that carries it


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
    safety: Any = None  # a unilab_robot.deploy.safety.SafetyConfig; absent (None): no guard
    terrain: Any = None  # a unilab_robot.deploy.height_scan.TerrainSpec; absent (None): flat ground
    history: History | None = None  # absent (None): the policy input is the observation
    grasp: Any = None  # a unilab_robot.deploy.grasp.GraspSpec (ee_delta actions); absent (None): no object to pick
    camera: Any = None  # a unilab_robot.deploy.camera.CameraSpec; absent (None): no depth camera
    motion: Any = None  # a unilab_robot.deploy.motion.MotionSpec (command kind motion); absent (None): no clips
    recurrent: Recurrent | None = None  # absent (None): a feed-forward policy, no state between steps
    estimator: Estimator | None = None  # absent (None): the policy estimates nothing it would output
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
        if data.get("camera") is None:
            data.pop("camera", None)  # no depth camera: as in specs made before cameras
        if data.get("motion") is None:
            data.pop("motion", None)  # no clips to follow: as in specs made before motion tracking
        else:
            data["motion"].pop("paths", None)  # where this computer keeps the clips: found again when loaded
        if data.get("recurrent") is None:
            data.pop("recurrent", None)  # a feed-forward policy: as in specs made before recurrent ones
        if data.get("estimator") is None:
            data.pop("estimator", None)  # no state estimator: as in specs made before it
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
