"""Identification from the robot's own log: the floor friction (and optionally the motor strength, the latency and a
payload) that explain it.

The runtime's step log (:mod:`unilab_robot.steplog`) holds, at every control step, what the
robot reported (joint ``q`` / ``dq``, the IMU's quaternion and gyro, and, in the observation, the
base velocity the state estimator gave) and the command it was sent (``q_des``, ``kp``, ``kd``).
:func:`identify` replays those commands in MuJoCo from the logged states and asks which
parameters make the simulation predict what the robot did next:

* **windows**: from every ``stride``-th row, ``horizon`` consecutive control steps in policy mode
  with a fresh state each, no dropped state (``state_tick`` advancing by the spec's substeps) and
  no jump (a reset: a joint moving more than ``max_joint_step`` rad in one step), the base not
  held (a gantry: gyro and base velocity exactly 0); with ``latency``, also the rows that can still act at the
  window's start (``ceil(max_latency_steps / substeps)`` before it) in policy mode;
* **start state**: the logged joints, IMU quaternion, gyro and base-frame velocity; the base
  height is not logged (a robot does not measure it), so it comes from leg kinematics and the
  logged velocity: at every row of an unbroken policy-mode stretch, the height that puts the
  lowest point of the collision geoms (boxes, spheres, capsules) at the floor's surface, carried to
  the window's start by the logged vertical velocity (trapezoid) and averaged over the rows within
  ``height_rows`` of it (a complementary filter: kinematics for the level, the velocity for the
  motion within a step); then lowered by the **walking depth**, how deep the lowest point sits in
  the soft floor on average while the log's commands are replayed (the windows replayed once from
  the depth at which the model stands still at home, at the model's own floor friction, under the
  payload; the lowest point measured after every control step);
* **replay**: each step's logged command through the motor driver's law
  (:class:`~unilab_robot.driver.MotorDriver`; motor strength ``s`` scales ``kp``, ``kd`` and
  the torque limit), ``substeps`` physics steps per control step; with a **latency** of ``L``
  physics steps the command of row ``k`` takes effect ``L`` physics steps after row ``k``'s state
  (the previous commands act until then). Measured from the logged state, ``L`` is the whole loop:
  the state's way to the controller, its compute, and the command's way back (wire latency ``l``
  each way in :mod:`~unilab_robot.lockstep`: ``L = 2 l / physics_dt``). A **payload** of
  ``p`` kg is carried by the spec's root body (:func:`set_payload`: its mass plus ``p``, its
  inertia scaled by the same ratio, its centre of mass unchanged), and the start height is
  re-measured under it;
* **error**: at every step of the window, the squared prediction error of joint positions (scale
  0.05 rad), joint velocities (1 rad/s), base velocity (0.1 m/s) and gyro (0.2 rad/s), each
  divided by its scale, averaged per window; the windows' errors are averaged after dropping the
  worst ``trim`` fraction (a fall or a push the model cannot explain);
* **the start height as a nuisance**: a few millimetres of start height decide how hard a stance
  foot presses into the soft floor at the window's start, and so whether it slips: with the height
  estimate's error (~3 mm), a replay slips on a slippery floor where the robot did not, and a fit
  of the friction alone came out high (0.7 for a 0.2 floor). So each window's error is its
  smallest over start heights ``height_grid`` points within +-``height_span`` of the estimate,
  at each parameter evaluated (a profile over the window's height; ``height_grid`` 1: the estimate
  only);
* **search**, coordinate-wise: the floor friction on a log-spaced grid over ``friction_range``,
  then golden-section search in log friction inside the best grid cell, to ``tol`` relative
  width; then, at that friction, each enabled parameter in turn, each at the ones fitted before
  it: the latency at every integer in ``0..max_latency_steps``, the payload on a linear grid over
  ``payload_range`` then golden section to ``payload_tol`` kg, the strength as the friction; then,
  with any of them, the friction again. Friction and payload trade off (a heavier robot on a
  more slippery floor): fitted together, the coordinate-wise search stops on that ridge.

The floor's friction is set with a higher geom priority than everything else, so it is the
contact's sliding friction whatever the feet's own (:func:`set_floor_friction`). The model is
changed in place and left at the fit (floor friction, payload, force limits scaled by the strength).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import mujoco
import numpy as np

from unilab_robot.deploy import PolicyIO
from unilab_robot.deploy.reference import rotation_matrix
from unilab_robot.deploy.spec import DeploySpec
from unilab_robot.driver import MotorDriver
from unilab_robot.steplog import MODES

SCALES = {"q": 0.05, "dq": 1.0, "linvel": 0.1, "gyro": 0.2}
GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0
BOX, SPHERE, CAPSULE, PLANE = (int(t) for t in (mujoco.mjtGeom.mjGEOM_BOX, mujoco.mjtGeom.mjGEOM_SPHERE,
                                                 mujoco.mjtGeom.mjGEOM_CAPSULE, mujoco.mjtGeom.mjGEOM_PLANE))


class IdentifyError(ValueError):
    """The log cannot be identified from; the message says why and what to do."""


@dataclass(frozen=True)
class IdentifyConfig:
    """How :func:`identify` cuts the log and searches."""

    horizon: int = 10
    stride: int = 5
    max_windows: int = 60
    friction_range: tuple[float, float] = (0.05, 1.5)
    grid: int = 9
    tol: float = 0.02
    strength: bool = False
    strength_range: tuple[float, float] = (0.5, 1.5)
    latency: bool = False
    max_latency_steps: int | None = None  # physics steps; None: three control steps' worth (3 * substeps)
    payload: bool = False
    payload_range: tuple[float, float] = (-2.0, 6.0)  # kg on the root body
    payload_tol: float = 0.05  # kg
    trim: float = 0.1
    height_rows: int = 25
    height_span: float = 0.006  # m: each window's start height is searched within +- this of the estimate
    height_grid: int = 7  # points of that search (1: the estimate only)
    max_joint_step: float = 0.5
    burn_in: int = 0

    def __post_init__(self) -> None:
        lo, hi = self.friction_range
        slo, shi = self.strength_range
        if not (0 < lo < hi and 0 < slo < shi):
            raise IdentifyError(f"friction and strength ranges must be 0 < low < high, got {self.friction_range} "
                                f"and {self.strength_range}")
        if not self.payload_range[0] < self.payload_range[1]:
            raise IdentifyError(f"the payload range must be low < high (kg), got {self.payload_range}")
        if self.max_latency_steps is not None and self.max_latency_steps < 0:
            raise IdentifyError(f"max_latency_steps must be >= 0 physics steps, got {self.max_latency_steps}")
        if not self.payload_tol > 0:
            raise IdentifyError(f"payload_tol must be > 0 kg, got {self.payload_tol}")
        if self.horizon < 1 or self.stride < 1 or self.max_windows < 1 or self.grid < 3 or not 0 <= self.trim < 1 \
                or self.height_rows < 0 or self.height_grid < 1 or not self.height_span >= 0:
            raise IdentifyError("horizon, stride and max_windows must be >= 1, grid >= 3, trim in [0, 1), "
                                "height_rows >= 0, height_grid >= 1 and height_span >= 0")

    def latency_steps(self, spec: DeploySpec) -> int:
        """The largest latency searched, in physics steps (0 without ``latency``)."""
        if not self.latency:
            return 0
        return 3 * spec.timing.substeps if self.max_latency_steps is None else self.max_latency_steps


class Evaluation(NamedTuple):
    """One error evaluation: the parameters (latency in physics steps, payload in kg) and the error there."""

    friction: float
    strength: float
    latency: int
    payload: float
    error: float


@dataclass
class Identified:
    """What :func:`identify` found: the parameters, the error there, and every evaluation it made.

    ``latency_steps``: physics steps from a logged state to its command taking effect (``latency_s`` in
    seconds); ``payload``: kg added to the root body. Parameters not fitted keep their neutral values
    (strength 1, latency 0, payload 0)."""

    friction: float
    strength: float
    error: float
    windows: int
    latency_steps: int = 0
    latency_s: float = 0.0
    payload: float = 0.0
    evaluations: list[Evaluation] = field(default_factory=list)

    def summary(self) -> dict:
        """JSON-ready: the fit and every evaluation (``curve``: friction, strength, latency steps, payload kg, error)."""
        return {"friction": round(self.friction, 4), "strength": round(self.strength, 4),
                "latency_steps": self.latency_steps, "latency_ms": round(self.latency_s * 1e3, 3),
                "payload_kg": round(self.payload, 3), "error": round(self.error, 5),
                "windows": self.windows, "evaluations": len(self.evaluations),
                "curve": [[round(v.friction, 4), round(v.strength, 4), v.latency, round(v.payload, 3), round(v.error, 5)]
                          for v in self.evaluations]}


def floor_geom(model: mujoco.MjModel) -> int:
    """The floor: the geom named ``floor``, else the first plane; :class:`IdentifyError` when there is none."""
    g = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "floor")
    if g < 0:
        planes = np.flatnonzero(model.geom_type == PLANE)
        if not len(planes):
            raise IdentifyError("the model has no floor (no geom named 'floor', no plane): identification needs one")
        g = int(planes[0])
    return g


def set_floor_friction(model: mujoco.MjModel, friction: float) -> None:
    """Make ``friction`` the sliding friction of every contact with the floor (floor geom priority above all)."""
    g = floor_geom(model)
    model.geom_priority[g] = int(np.delete(model.geom_priority, g).max(initial=0)) + 1
    model.geom_friction[g, 0] = friction


def payload_body(spec: DeploySpec, model: mujoco.MjModel) -> int:
    """The body a payload rides on: the spec's root body; :class:`IdentifyError` when it has none."""
    b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, spec.model.root_body) if spec.model.root_body else -1
    if b < 0:
        raise IdentifyError(f"the spec's root body {spec.model.root_body!r} is not in the model: a payload needs the "
                            f"body it rides on")
    return b


def set_payload(model: mujoco.MjModel, body: int, kg: float, mass: float, inertia: np.ndarray) -> None:
    """``body`` carries ``kg`` on top of its unloaded ``mass`` (kg) and principal ``inertia``: mass ``mass + kg``,
    inertia scaled by ``(mass + kg) / mass`` (the body's own shape, denser; centre of mass and axes unchanged), and
    the model's derived constants recomputed (``mj_setConst``). :class:`IdentifyError` when no mass would be left."""
    total = mass + kg
    if not total > 0:
        raise IdentifyError(f"a payload of {kg:g} kg leaves body {model.body(body).name!r} ({mass:g} kg) no mass: keep "
                            f"it above {-mass:g} kg")
    model.body_mass[body] = total
    model.body_inertia[body] = np.asarray(inertia) * (total / mass)
    mujoco.mj_setConst(model, mujoco.MjData(model))


def add_payload(spec: DeploySpec, model: mujoco.MjModel, kg: float) -> int:
    """Put ``kg`` on the spec's root body of ``model`` (in place, as :func:`set_payload`); returns the body."""
    b = payload_body(spec, model)
    set_payload(model, b, kg, float(model.body_mass[b]), model.body_inertia[b].copy())
    return b


def _rows(log: dict, spec: DeploySpec, config: IdentifyConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: in policy mode; a state one control step after the previous row's, without a jump; held (gantry)."""
    n = len(log["t"])
    step = np.zeros(n, bool)
    step[1:] = (np.diff(log["state_tick"]) == spec.timing.substeps) & \
               (np.abs(np.diff(log["q"], axis=0)).max(axis=1) <= config.max_joint_step)
    lin = _linvel(log, spec)
    held = (np.abs(log["gyro"]).max(axis=1) == 0) & (np.abs(lin).max(axis=1) == 0)
    return log["mode"] == MODES.index("policy"), step, held


def windows(log: dict, spec: DeploySpec, config: IdentifyConfig) -> np.ndarray:
    """Start rows of the replay windows (see the module's docstring); :class:`IdentifyError` when none qualifies."""
    n, h = len(log["t"]), config.horizon
    back = -(-config.latency_steps(spec) // spec.timing.substeps)  # earlier rows whose commands may still act
    policy, step, held = _rows(log, spec, config)
    ok = policy & (log["fresh"] > 0)
    starts = [i for i in range(back, n - h, config.stride)
              if ok[i:i + h + 1].all() and step[i + 1:i + h + 1].all() and not held[i:i + h + 1].any()
              and policy[i - back:i].all()]
    if not starts:
        raise IdentifyError(f"the log has no {h + 1} consecutive fresh policy-mode steps off the gantry: record a "
                            f"longer run (`unilab robot run ... --log PATH`)")
    pick = np.linspace(0, len(starts) - 1, min(config.max_windows, len(starts))).round().astype(int)
    return np.asarray(starts)[np.unique(pick)]


def _linvel(log: dict, spec: DeploySpec) -> np.ndarray:
    group = next((g for g in spec.observation.groups if g.name == "linvel"), None)
    if group is None:
        raise IdentifyError("the spec's observation has no linvel group, so the log has no base velocity to replay "
                            "from; identification needs a policy that observes it")
    return log["obs"][:, group.start:group.stop]


class Replay:
    """The logged commands replayed from the logged states on ``model`` (the spec's MJCF; changed in place)."""

    def __init__(self, spec: DeploySpec, model: mujoco.MjModel, log: dict, config: IdentifyConfig = IdentifyConfig()) -> None:
        self.spec, self.model, self.log, self.config = spec, model, log, config
        self.io = PolicyIO(spec, model, safety=False)
        if self.io.root_q < 0:
            raise IdentifyError("the spec's robot has no floating base: floor friction has nothing to act on")
        self.driver = MotorDriver(model, spec.action.joint_names)
        self.tau_max = self.driver.tau_max.copy()
        self.data = mujoco.MjData(model)
        self.linvel = _linvel(log, spec)
        self.starts = windows(log, spec, config)
        floor = floor_geom(model)
        self.feet = [g for g in range(model.ngeom) if g != floor and (model.geom_contype[g] or model.geom_conaffinity[g])
                     and int(model.geom_type[g]) in (BOX, SPHERE, CAPSULE)]
        if not self.feet:
            raise IdentifyError("the model has no box, sphere or capsule collision geoms to stand on the floor with")
        self.friction0 = float(model.geom_friction[floor, 0])
        self.body = payload_body(spec, model) if config.payload else -1
        self.unloaded = (float(model.body_mass[self.body]), model.body_inertia[self.body].copy()) if config.payload else None
        self.heights = self._surface_heights()
        span, points = config.height_span, config.height_grid
        self.offsets = np.linspace(-span, span, points) if points > 1 else np.zeros(1)
        self.depths: dict[float, float] = {}  # walking depth per payload (kg): a heavier robot sinks deeper
        self._load(0.0)

    def _lowest(self) -> float:
        d, m, low = self.data, self.model, math.inf
        for g in self.feet:
            r, s, z = d.geom_xmat[g].reshape(3, 3), m.geom_size[g], d.geom_xpos[g][2]
            t = int(m.geom_type[g])
            if t == BOX:
                z -= abs(r[2, 0]) * s[0] + abs(r[2, 1]) * s[1] + abs(r[2, 2]) * s[2]
            elif t == SPHERE:
                z -= s[0]
            else:
                z -= abs(r[2, 2]) * s[1] + s[0]
            low = min(low, z)
        return low

    def _place(self, i: int) -> None:
        m, d, io, log = self.model, self.data, self.io, self.log
        mujoco.mj_resetData(m, d)
        quat = log["quat"][i] / np.linalg.norm(log["quat"][i])
        q, r = io.root_q, io.root_d
        d.qpos[q:q + 3] = 0.0
        d.qpos[q + 3:q + 7] = quat
        d.qpos[io.joint_q] = log["q"][i]
        d.qvel[r:r + 3] = rotation_matrix(quat) @ self.linvel[i]
        d.qvel[r + 3:r + 6] = log["gyro"][i]
        d.qvel[io.joint_d] = log["dq"][i]

    def _settled_depth(self, seconds: float = 1.0) -> float:
        """How deep the lowest point sits in the floor when the robot stands still at its home pose (soft contacts
        give way a little under the weight): the home keyframe held by the spec's PD for ``seconds``."""
        m, d, io = self.model, self.data, self.io
        key = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, self.spec.model.home_keyframe or "")
        mujoco.mj_resetDataKeyframe(m, d, key) if key >= 0 else mujoco.mj_resetData(m, d)
        d.qpos[io.joint_q] = io.home
        mujoco.mj_kinematics(m, d)
        d.qpos[io.root_q + 2] -= self._lowest()
        a = self.spec.action
        zeros = np.zeros(len(a.joint_names))
        self.driver.command(d, io.home, zeros, zeros, np.asarray(a.kp), np.asarray(a.kd))
        for _ in range(int(round(seconds / m.opt.timestep))):
            mujoco.mj_step(m, d)
        mujoco.mj_kinematics(m, d)
        return float(self._lowest())

    def _surface_heights(self) -> dict[int, float]:
        """Per window start: the filtered base height with the lowest point at the floor's surface (module docstring)."""
        log, n, half = self.log, len(self.log["t"]), self.config.height_rows
        policy, step, held = _rows(log, self.spec, self.config)
        good = policy & ~held
        stretch = np.cumsum(~(good & step))  # a new stretch at every break
        kin, vz = np.full(n, np.nan), np.zeros(n)
        for i in np.flatnonzero(good):
            self._place(i)
            mujoco.mj_kinematics(self.model, self.data)
            kin[i], vz[i] = -self._lowest(), self.data.qvel[self.io.root_d + 2]
        rise = np.concatenate([[0.0], np.cumsum((vz[1:] + vz[:-1]) / 2)]) * self.spec.timing.control_dt
        out = {}
        for i in self.starts:
            js = np.arange(max(0, i - half), min(n, i + half + 1))
            js = js[good[js] & (stretch[js] == stretch[i])]
            out[int(i)] = float(np.mean(kin[js] + rise[i] - rise[js]))
        return out

    def _start(self, i: int, offset: float = 0.0) -> None:
        self._place(i)
        self.data.qpos[self.io.root_q + 2] = self.heights[int(i)] + self.depth + offset
        mujoco.mj_forward(self.model, self.data)

    def _walking_depth(self) -> float:
        """The mean depth of the lowest point after every control step of the windows replayed from the standing
        depth at the model's own floor friction (latency 0, strength 1)."""
        set_floor_friction(self.model, self.friction0)
        finite = np.where(np.isfinite(self.tau_max), self.tau_max, 0.0)
        self.model.actuator_forcerange[self.driver.actuators] = np.stack([-finite, finite], axis=1)
        self.depth, low = self._settled_depth(), []
        for i in self.starts:
            for _ in self._steps(i, 1.0, 0):
                mujoco.mj_kinematics(self.model, self.data)
                low.append(self._lowest())
        return float(np.mean(low)) if np.isfinite(low).all() else self.depth

    def _load(self, payload: float) -> None:
        """The payload (kg) on the root body, and the walking depth under it."""
        if self.unloaded is None and payload != 0.0:
            raise IdentifyError("a payload needs IdentifyConfig(payload=True)")
        if self.unloaded is not None:
            set_payload(self.model, self.body, payload, *self.unloaded)
        if payload not in self.depths:
            self.depths[payload] = self._walking_depth()
        self.depth = self.depths[payload]

    def _steps(self, i: int, strength: float, latency: int, offset: float = 0.0):
        """Replay the window starting at row ``i`` (its start height ``offset`` m above the estimate): yields each
        control step's row ``k`` after its physics steps."""
        m, d, log, sub = self.model, self.data, self.log, self.spec.timing.substeps
        zeros = np.zeros(len(self.driver.actuators))
        self._start(i, offset)
        acting = None
        for k in range(i, i + self.config.horizon):
            for u in range(sub):
                c = k + (u - latency) // sub  # the row whose command acts at this physics step
                if c != acting:
                    self.driver.command(d, log["q_des"][c], zeros, zeros, log["kp"][c] * strength, log["kd"][c] * strength)
                    acting = c
                mujoco.mj_step(m, d)
            yield k

    def error(self, friction: float, strength: float = 1.0, latency: int = 0, payload: float = 0.0) -> float:
        """The trimmed mean over the windows of the scaled squared multi-step prediction error (each window at its best
        start height, module docstring); ``latency`` in physics steps (at most the config's ``latency_steps``),
        ``payload`` in kg."""
        m, d, io, log, h = self.model, self.data, self.io, self.log, self.config.horizon
        if not 0 <= latency <= self.config.latency_steps(self.spec):
            raise IdentifyError(f"latency {latency} is outside 0..{self.config.latency_steps(self.spec)} physics steps "
                                f"the windows were cut for")
        self._load(payload)
        set_floor_friction(m, friction)
        tau = self.tau_max * strength
        finite = np.where(np.isfinite(tau), tau, 0.0)
        m.actuator_forcerange[self.driver.actuators] = np.stack([-finite, finite], axis=1)
        per = []
        for i in self.starts:
            best = math.inf
            for offset in self.offsets:
                e = 0.0
                for k in self._steps(i, strength, latency, offset):
                    s, j = k - i, k + 1
                    if s < self.config.burn_in:
                        continue
                    e += (np.mean(((d.qpos[io.joint_q] - log["q"][j]) / SCALES["q"]) ** 2)
                          + np.mean(((d.qvel[io.joint_d] - log["dq"][j]) / SCALES["dq"]) ** 2)
                          + np.mean(((io.base_linvel(d) - self.linvel[j]) / SCALES["linvel"]) ** 2)
                          + np.mean(((io.base_gyro(d) - log["gyro"][j]) / SCALES["gyro"]) ** 2))
                best = min(best, e / (h - self.config.burn_in) if np.isfinite(e) else 1e12)
            per.append(best)
        per = np.sort(per)
        keep = max(1, int(round(len(per) * (1.0 - self.config.trim))))
        return float(per[:keep].mean())


def _search(f, lo: float, hi: float, grid: int, tol: float, log: bool = True) -> float:
    """Minimize ``f`` over [lo, hi]: a grid (log-spaced with ``log``, else linear), then golden-section inside the best
    cell (in log space with ``log``) to width ``tol`` (relative with ``log``, else absolute)."""
    to, back = (math.log, math.exp) if log else (float, float)
    xs = [back(v) for v in np.linspace(to(lo), to(hi), grid)]
    es = [f(x) for x in xs]
    b = int(np.argmin(es))
    a, c = to(xs[max(0, b - 1)]), to(xs[min(grid - 1, b + 1)])
    x1, x2 = c - GOLDEN * (c - a), a + GOLDEN * (c - a)
    f1, f2 = f(back(x1)), f(back(x2))
    while c - a > tol:
        if f1 <= f2:
            c, x2, f2 = x2, x1, f1
            x1 = c - GOLDEN * (c - a)
            f1 = f(back(x1))
        else:
            a, x1, f1 = x1, x2, f2
            x2 = a + GOLDEN * (c - a)
            f2 = f(back(x2))
    best = min([(es[b], xs[b]), (f1, back(x1)), (f2, back(x2))])
    return float(best[1])


def identify(spec: DeploySpec, model: mujoco.MjModel, log: dict, config: IdentifyConfig = IdentifyConfig()) -> Identified:
    """The floor friction (and, with ``config.strength`` / ``latency`` / ``payload``, the motor strength, the loop's
    latency and a payload on the root body) that best explain ``log``.

    ``model``: the spec's MJCF, changed in place and left at the fit; ``log``:
    :func:`~unilab_robot.steplog.load_log`'s arrays. :class:`IdentifyError` in one line when the log cannot be
    identified from.
    """
    missing = [k for k in ("t", "mode", "fresh", "state_tick", "quat", "gyro", "q", "dq", "obs", "q_des", "kp", "kd")
               if k not in log]
    if missing:
        raise IdentifyError(f"the log lacks columns {', '.join(missing)}: pass the .npz `unilab robot run --log` wrote")
    if log["q"].shape[1] != len(spec.action.joint_names):
        raise IdentifyError(f"the log has {log['q'].shape[1]} joints, the spec {len(spec.action.joint_names)}: pass the "
                            f"policy the log was recorded with")
    replay = Replay(spec, model, log, config)
    evals: list[Evaluation] = []
    fit = {"friction": 1.0, "strength": 1.0, "latency": 0, "payload": 0.0}

    def at(name):
        def f(x):
            p = {**fit, name: x}
            evals.append(Evaluation(p["friction"], p["strength"], p["latency"], p["payload"], replay.error(**p)))
            return evals[-1].error
        return f

    def friction():
        fit["friction"] = _search(at("friction"), *config.friction_range, config.grid, config.tol)

    friction()
    if config.latency:
        fit["latency"] = min(range(config.latency_steps(spec) + 1), key=at("latency"))
    if config.payload:
        fit["payload"] = _search(at("payload"), *config.payload_range, config.grid, config.payload_tol, log=False)
    if config.strength:
        fit["strength"] = _search(at("strength"), *config.strength_range, config.grid, config.tol)
    if config.latency or config.payload or config.strength:
        friction()
    error = replay.error(**fit)
    return Identified(fit["friction"], fit["strength"], error, len(replay.starts), fit["latency"],
                      fit["latency"] * float(model.opt.timestep), fit["payload"], evals)
