"""Identification from the robot's own log: the floor friction (and optionally the motor strength) that explain it.

The runtime's step log (:mod:`unilab_envs.robot.steplog`) holds, at every control step, what the
robot reported (joint ``q`` / ``dq``, the IMU's quaternion and gyro, and, in the observation, the
base velocity the state estimator gave) and the command it was sent (``q_des``, ``kp``, ``kd``).
:func:`identify` replays those commands in MuJoCo from the logged states and asks which
parameters make the simulation predict what the robot did next:

* **windows**: from every ``stride``-th row, ``horizon`` consecutive control steps in policy mode
  with a fresh state each, no dropped state (``state_tick`` advancing by the spec's substeps) and
  no jump (a reset: a joint moving more than ``max_joint_step`` rad in one step), the base not
  held (a gantry: gyro and base velocity exactly 0);
* **start state**: the logged joints, IMU quaternion, gyro and base-frame velocity; the base
  height is not logged (a robot does not measure it), so it is set by leg kinematics: the lowest
  point of the collision geoms (boxes, spheres, capsules) sits as deep in the floor as it does
  when the model stands still at its home pose (measured once: soft contacts give way a little);
* **replay**: each step's logged command through the motor driver's law
  (:class:`~unilab_envs.robot.driver.MotorDriver`; motor strength ``s`` scales ``kp``, ``kd`` and
  the torque limit), ``substeps`` physics steps per control step;
* **error**: at every step of the window, the squared prediction error of joint positions (scale
  0.05 rad), joint velocities (1 rad/s), base velocity (0.1 m/s) and gyro (0.2 rad/s), each
  divided by its scale, averaged per window; the windows' errors are averaged after dropping the
  worst ``trim`` fraction (a fall or a push the model cannot explain);
* **search**: the floor friction on a log-spaced grid over ``friction_range``, then
  golden-section search in log friction inside the best grid cell, to ``tol`` relative width;
  with ``strength``, the strength likewise at that friction, then the friction again.

The floor's friction is set with a higher geom priority than everything else, so it is the
contact's sliding friction whatever the feet's own (:func:`set_floor_friction`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import mujoco
import numpy as np

from unilab_envs.deploy import PolicyIO
from unilab_envs.deploy.reference import rotation_matrix
from unilab_envs.deploy.spec import DeploySpec
from unilab_envs.robot.driver import MotorDriver
from unilab_envs.robot.steplog import MODES

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
    trim: float = 0.1
    max_joint_step: float = 0.5
    burn_in: int = 0

    def __post_init__(self) -> None:
        lo, hi = self.friction_range
        slo, shi = self.strength_range
        if not (0 < lo < hi and 0 < slo < shi):
            raise IdentifyError(f"friction and strength ranges must be 0 < low < high, got {self.friction_range} "
                                f"and {self.strength_range}")
        if self.horizon < 1 or self.stride < 1 or self.max_windows < 1 or self.grid < 3 or not 0 <= self.trim < 1:
            raise IdentifyError("horizon, stride and max_windows must be >= 1, grid >= 3 and trim in [0, 1)")


@dataclass
class Identified:
    """What :func:`identify` found: the parameters, the error there, and every evaluation it made."""

    friction: float
    strength: float
    error: float
    windows: int
    evaluations: list = field(default_factory=list)  # (friction, strength, error)

    def summary(self) -> dict:
        """JSON-ready: the fit and the grid's errors."""
        return {"friction": round(self.friction, 4), "strength": round(self.strength, 4), "error": round(self.error, 5),
                "windows": self.windows, "evaluations": len(self.evaluations),
                "curve": [[round(f, 4), round(s, 4), round(e, 5)] for f, s, e in self.evaluations]}


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


def windows(log: dict, spec: DeploySpec, config: IdentifyConfig) -> np.ndarray:
    """Start rows of the replay windows (see the module's docstring); :class:`IdentifyError` when none qualifies."""
    n, h = len(log["t"]), config.horizon
    ok = (log["mode"] == MODES.index("policy")) & (log["fresh"] > 0)
    step = np.zeros(n, bool)
    step[1:] = (np.diff(log["state_tick"]) == spec.timing.substeps) & \
               (np.abs(np.diff(log["q"], axis=0)).max(axis=1) <= config.max_joint_step)
    lin = _linvel(log, spec)
    held = (np.abs(log["gyro"]).max(axis=1) == 0) & (np.abs(lin).max(axis=1) == 0)
    starts = [i for i in range(0, n - h, config.stride)
              if ok[i:i + h + 1].all() and step[i + 1:i + h + 1].all() and not held[i:i + h + 1].any()]
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
        self.depth = self._settled_depth()

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

    def _start(self, i: int) -> None:
        self._place(i)
        mujoco.mj_kinematics(self.model, self.data)
        self.data.qpos[self.io.root_q + 2] = self.depth - self._lowest()  # the lowest point as deep as when standing
        mujoco.mj_forward(self.model, self.data)

    def error(self, friction: float, strength: float = 1.0) -> float:
        """The trimmed mean over the windows of the scaled squared multi-step prediction error."""
        m, d, io, log, h = self.model, self.data, self.io, self.log, self.config.horizon
        set_floor_friction(m, friction)
        tau = self.tau_max * strength
        finite = np.where(np.isfinite(tau), tau, 0.0)
        m.actuator_forcerange[self.driver.actuators] = np.stack([-finite, finite], axis=1)
        zeros = np.zeros(len(self.driver.actuators))
        per = []
        for i in self.starts:
            self._start(i)
            e = 0.0
            for s in range(h):
                k = i + s
                self.driver.command(d, log["q_des"][k], zeros, zeros, log["kp"][k] * strength, log["kd"][k] * strength)
                for _ in range(self.spec.timing.substeps):
                    mujoco.mj_step(m, d)
                j = k + 1
                if s < self.config.burn_in:
                    continue
                e += (np.mean(((d.qpos[io.joint_q] - log["q"][j]) / SCALES["q"]) ** 2)
                      + np.mean(((d.qvel[io.joint_d] - log["dq"][j]) / SCALES["dq"]) ** 2)
                      + np.mean(((io.base_linvel(d) - self.linvel[j]) / SCALES["linvel"]) ** 2)
                      + np.mean(((io.base_gyro(d) - log["gyro"][j]) / SCALES["gyro"]) ** 2))
            per.append(e / (h - self.config.burn_in) if np.isfinite(e) else 1e12)
        per = np.sort(per)
        keep = max(1, int(round(len(per) * (1.0 - self.config.trim))))
        return float(per[:keep].mean())


def _search(f, lo: float, hi: float, grid: int, tol: float, record) -> float:
    """Minimize ``f`` over [lo, hi]: a log-spaced grid, then golden-section in log space inside the best cell."""
    xs = np.geomspace(lo, hi, grid)
    es = [record(x, f(x)) for x in xs]
    b = int(np.argmin(es))
    a, c = math.log(xs[max(0, b - 1)]), math.log(xs[min(grid - 1, b + 1)])
    x1, x2 = c - GOLDEN * (c - a), a + GOLDEN * (c - a)
    f1, f2 = record(math.exp(x1), f(math.exp(x1))), record(math.exp(x2), f(math.exp(x2)))
    while c - a > tol:
        if f1 <= f2:
            c, x2, f2 = x2, x1, f1
            x1 = c - GOLDEN * (c - a)
            f1 = record(math.exp(x1), f(math.exp(x1)))
        else:
            a, x1, f1 = x1, x2, f2
            x2 = a + GOLDEN * (c - a)
            f2 = record(math.exp(x2), f(math.exp(x2)))
    best = min([(es[b], xs[b]), (f1, math.exp(x1)), (f2, math.exp(x2))])
    return float(best[1])


def identify(spec: DeploySpec, model: mujoco.MjModel, log: dict, config: IdentifyConfig = IdentifyConfig()) -> Identified:
    """The floor friction (and, with ``config.strength``, the motor strength) that best explain ``log``.

    ``model``: the spec's MJCF, changed in place; ``log``: :func:`~unilab_envs.robot.steplog.load_log`'s arrays.
    :class:`IdentifyError` in one line when the log cannot be identified from.
    """
    missing = [k for k in ("t", "mode", "fresh", "state_tick", "quat", "gyro", "q", "dq", "obs", "q_des", "kp", "kd")
               if k not in log]
    if missing:
        raise IdentifyError(f"the log lacks columns {', '.join(missing)}: pass the .npz `unilab robot run --log` wrote")
    if log["q"].shape[1] != len(spec.action.joint_names):
        raise IdentifyError(f"the log has {log['q'].shape[1]} joints, the spec {len(spec.action.joint_names)}: pass the "
                            f"policy the log was recorded with")
    replay = Replay(spec, model, log, config)
    evals: list = []
    strength = 1.0

    def rec(f, s):
        def record(x, e):
            evals.append((f if f is not None else x, s if s is not None else x, e))
            return e
        return record

    friction = _search(lambda mu: replay.error(mu, strength), *config.friction_range, config.grid, config.tol,
                       rec(None, strength))
    if config.strength:
        strength = _search(lambda s: replay.error(friction, s), *config.strength_range, config.grid, config.tol,
                           rec(friction, None))
        friction = _search(lambda mu: replay.error(mu, strength), *config.friction_range, config.grid, config.tol,
                           rec(None, strength))
    return Identified(friction, strength, replay.error(friction, strength), len(replay.starts), evals)
