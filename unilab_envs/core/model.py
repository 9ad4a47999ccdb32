"""Loading a task's MJCF, looking up named objects with clear errors, and making the actuators of
a task's joints position servos (:func:`servo_joint_actuators`: position actuators as they are,
torque actuators converted with the task's PD gains, anything else refused)."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from unilab_envs.core.config import ConfigError
from unilab_robot.assets import mjcf_file


def load_model(path: str | Path, sim_dt: float) -> mujoco.MjModel:
    """Compile the MJCF at ``path`` and set its physics timestep to ``sim_dt``."""
    path = mjcf_file(path)
    try:
        model = mujoco.MjModel.from_xml_path(str(path))
    except ValueError as error:
        raise ValueError(f"could not compile MJCF {str(path)!r}: {error}") from error
    model.opt.timestep = sim_dt
    return model


def object_ids(model: mujoco.MjModel, kind: mujoco.mjtObj, names: tuple[str, ...], what: str) -> np.ndarray:
    """Ids of the named objects; a missing name raises with the names the model has."""
    ids = []
    for name in names:
        index = mujoco.mj_name2id(model, kind, name)
        if index < 0:
            raise ValueError(
                f"the model has no {what} named {name!r}; a model for this task must follow MuJoCo Menagerie's naming "
                f"(expected {what}s {list(names)})"
            )
        ids.append(index)
    return np.asarray(ids, dtype=np.int64)


def actuators_for_joints(model: mujoco.MjModel, joint_ids: np.ndarray) -> np.ndarray:
    """For each joint, the id of the actuator that drives it."""
    trn_joint = model.actuator_trnid[:, 0]
    out = []
    for jid in joint_ids:
        matches = np.flatnonzero((trn_joint == jid) & (model.actuator_trntype == mujoco.mjtTrn.mjTRN_JOINT))
        if matches.size != 1:
            name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, int(jid))
            raise ValueError(f"joint {name!r} must be driven by exactly one actuator with a joint transmission "
                             f"(<position joint={name!r}> or <motor joint={name!r}>), found {matches.size}; "
                             f"tendon, site and body transmissions are not supported")
        out.append(matches[0])
    return np.asarray(out, dtype=np.int64)


def free_joint_of(model: mujoco.MjModel, body: str) -> tuple[int, int]:
    """``(qpos address, dof address)`` of the free joint of ``body``."""
    body_id = object_ids(model, mujoco.mjtObj.mjOBJ_BODY, (body,), "body")[0]
    for j in range(model.njnt):
        if model.jnt_bodyid[j] == body_id and model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            return int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j])
    raise ValueError(f"body {body!r} has no free joint; the task needs a floating base")


# --- the actuators of a task's joints ------------------------------------------------------
#
# A task writes joint-angle targets into ``ctrl``. MuJoCo's force law for a one-input,
# one-output actuator on a hinge or slide joint (docs: Computation > Actuation model) is
#
#     p   = gain * ctrl + b0 + b1 * l + b2 * dl/dt,    l = gear * q,  dl/dt = gear * dq/dt
#     tau = gear * clamp(p, forcerange)                 (qfrc_actuator; p is actuator_force)
#
# A position actuator (``<position kp kv>``: gain kp, bias [0, -kp, -kv]) with gear 1 gives
# tau = kp (ctrl - q) - kv dq/dt: ctrl is the joint target, as the tasks use it. A torque
# actuator (``<motor>``: gain 1, no bias) gives tau = gear * ctrl. :func:`servo_joint_actuators`
# rewrites the latter, in the compiled model, into the former with the task's gains and gear 1:
#
#     gear = 1, gain = kp, bias = [0, -kp, -kd]          =>  tau = p = kp (ctrl - q) - kd dq/dt
#     forcerange = the motor's joint-torque range: gear * gain * ctrlrange, intersected with
#                  gear * forcerange (each sorted) and the joint's actuatorfrcrange; a motor with
#                  none of the three is refused (an unlimited servo would ask for any torque, and
#                  the safety guard's torque limit would be infinite). Unitree's own G1 MJCF
#                  declares its <motor>s so, with the limits on the joints (actuatorfrcrange).
#     ctrlrange  = the joint's range (unlimited for an unlimited joint)
#     armature, damping (actuator-space, reflected by gear^2 at the joint) *= gear^2
#
# Keeping the motor's gear g instead would need gain kp/g and bias [0, -kp/g^2, -kd/g^2], and
# actuator_force would read tau/g; gear 1 makes actuator_force the joint torque (N m), which
# the torque terms and the privileged observation read, as on the shipped models. MuJoCo
# evaluates the servo at every physics substep (and implicitly in the implicitfast
# integrator), so the batched physics and the kernels are unchanged.

#: what :func:`servo_joint_actuators` accepts, for the error messages
SUPPORTED_ACTUATORS = (
    "position actuators (<position>, or <general> with gaintype fixed, biastype affine, biasprm [0, -kp, -kv], "
    "gear 1), used as they are, and torque actuators (<motor>, or <general> with gaintype fixed and biastype none, "
    "no dynamics), run as PD position servos with the task's pd_kp / pd_kd; each on one hinge or slide joint "
    "(joint=...), with one control"
)
POSITION, MOTOR = "position", "motor"
_FILTERS = (int(mujoco.mjtDyn.mjDYN_NONE), int(mujoco.mjtDyn.mjDYN_FILTER), int(mujoco.mjtDyn.mjDYN_FILTEREXACT))
_JOINTS_1DOF = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))


def actuator_name(model: mujoco.MjModel, actuator: int) -> str:
    """The actuator's name, or ``#id`` when it has none."""
    return mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, int(actuator)) or f"#{int(actuator)}"


def actuator_type(model: mujoco.MjModel, actuator: int) -> str:
    """The MJCF element the compiled actuator most likely came from, and its raw types (for messages)."""
    a = int(actuator)
    gain, bias, dyn = int(model.actuator_gaintype[a]), int(model.actuator_biastype[a]), int(model.actuator_dyntype[a])
    trn = int(model.actuator_trntype[a])
    b1, b2 = model.actuator_biasprm[a, 1], model.actuator_biasprm[a, 2]
    G, B, D = mujoco.mjtGain, mujoco.mjtBias, mujoco.mjtDyn
    if gain == G.mjGAIN_FIXED and bias == B.mjBIAS_NONE and dyn == D.mjDYN_NONE:
        shortcut = "<motor>"
    elif gain == G.mjGAIN_FIXED and bias == B.mjBIAS_AFFINE and dyn == D.mjDYN_INTEGRATOR:
        shortcut = "<intvelocity>"
    elif gain == G.mjGAIN_FIXED and bias == B.mjBIAS_AFFINE and dyn == D.mjDYN_FILTER and b1 == 0 and b2 == 0:
        shortcut = "<cylinder>"
    elif gain == G.mjGAIN_FIXED and bias == B.mjBIAS_AFFINE and b1 == 0 and b2 < 0:
        shortcut = "<velocity>"
    elif gain == G.mjGAIN_FIXED and bias == B.mjBIAS_AFFINE and b1 < 0:
        shortcut = "<position>"
    elif gain == G.mjGAIN_AFFINE and bias == B.mjBIAS_NONE:
        shortcut = "<damper>"
    elif gain == G.mjGAIN_MUSCLE:
        shortcut = "<muscle>"
    elif trn == mujoco.mjtTrn.mjTRN_BODY:
        shortcut = "<adhesion>"
    else:
        shortcut = "<general>"
    names = (mujoco.mjtGain(gain).name, mujoco.mjtBias(bias).name, mujoco.mjtDyn(dyn).name, mujoco.mjtTrn(trn).name)
    return f"{shortcut} ({', '.join(n.split('_', 1)[1].lower() for n in names)})"


def _refusal(model: mujoco.MjModel, actuator: int) -> str | None:
    """Why the actuator cannot take joint targets (``None`` when it is a position or torque actuator)."""
    a = int(actuator)
    if model.actuator_ctrlnum[a] != 1 or model.actuator_outnum[a] != 1:
        return f"it has {model.actuator_ctrlnum[a]} controls and {model.actuator_outnum[a]} force outputs"
    if model.actuator_ctrladr[a] != a:
        return f"its control is ctrl[{model.actuator_ctrladr[a]}], not ctrl[{a}] (a multi-input actuator comes before it)"
    if int(model.actuator_trntype[a]) != mujoco.mjtTrn.mjTRN_JOINT:
        return "its transmission is not a joint"
    if int(model.jnt_type[model.actuator_trnid[a, 0]]) not in _JOINTS_1DOF:
        return "its joint is not a hinge or slide joint"
    if model.actuator_plugin[a] >= 0:
        return "it is a plugin"
    if int(model.actuator_gaintype[a]) != mujoco.mjtGain.mjGAIN_FIXED:
        return "its gain is not fixed"
    gain, gear = model.actuator_gainprm[a, 0], model.actuator_gear[model.actuator_outadr[a], 0]
    bias, dyn = int(model.actuator_biastype[a]), int(model.actuator_dyntype[a])
    if bias == mujoco.mjtBias.mjBIAS_AFFINE:
        b = model.actuator_biasprm[a, :3]
        if dyn not in _FILTERS or not (gain > 0 and b[0] == 0 and np.isclose(b[1], -gain) and b[2] <= 0):
            return f"it is not a position servo (gain {gain:g}, biasprm {b.tolist()}; a position servo has [0, -kp, -kv])"
        if gear != 1:
            return f"its gear is {gear:g}: its ctrl is {gear:g} x the joint target; give it gear 1"
        return None
    if bias == mujoco.mjtBias.mjBIAS_NONE:
        if dyn != mujoco.mjtDyn.mjDYN_NONE:
            return "a torque actuator with activation dynamics cannot become a servo"
        if gain == 0 or gear == 0:
            return "its gain or gear is 0"
        if model.actuator_delay[a] > 0:
            return f"it has a control delay ({model.actuator_delay[a]:g} s)"
        if abs(gear) != 1 and np.any(model.actuator_dampingpoly[a] != 0):
            return f"it has polynomial damping with gear {gear:g}; give it gear 1"
        return None
    return "its bias is neither affine (a servo) nor none (a torque actuator)"


def actuator_kind(model: mujoco.MjModel, actuator: int) -> str:
    """:data:`POSITION` or :data:`MOTOR`; ``ValueError`` naming the actuator, its type and what is supported."""
    reason = _refusal(model, actuator)
    if reason is not None:
        raise ValueError(f"actuator {actuator_name(model, actuator)!r} is a {actuator_type(model, actuator)} actuator "
                         f"the task cannot drive: {reason}. Supported: {SUPPORTED_ACTUATORS}")
    return POSITION if int(model.actuator_biastype[int(actuator)]) == mujoco.mjtBias.mjBIAS_AFFINE else MOTOR


def motor_torque_range(model: mujoco.MjModel, actuator: int) -> tuple[float, float] | None:
    """The joint torque (force, on a slide joint) range of a torque actuator; ``None`` when unlimited.

    ``gear * gain * ctrlrange`` (when ctrl-limited) intersected with ``gear * forcerange``
    (when force-limited), each sorted (a negative gear flips a range), and with the joint's
    ``actuatorfrcrange`` (when the joint has one: MuJoCo clamps the joint's actuator force to it).
    """
    a = int(actuator)
    gear, gain = float(model.actuator_gear[model.actuator_outadr[a], 0]), float(model.actuator_gainprm[a, 0])
    low, high, limited = -np.inf, np.inf, False
    c, joint = int(model.actuator_ctrladr[a]), int(model.actuator_trnid[a, 0])
    for on, scale, bounds in ((model.actuator_ctrllimited[c], gear * gain, model.actuator_ctrlrange[c]),
                              (model.actuator_forcelimited[a], gear, model.actuator_forcerange[a]),
                              (model.jnt_actfrclimited[joint], 1.0, model.jnt_actfrcrange[joint])):
        if on:
            lo, hi = sorted(scale * np.asarray(bounds, dtype=np.float64))
            low, high, limited = max(low, lo), min(high, hi), True
    return (float(low), float(high)) if limited else None


def unlimited_motor_message(model: mujoco.MjModel, actuator: int) -> str:
    """The one line that refuses a ``<motor>`` with no torque limit anywhere: what is missing and the keywords."""
    joint = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, int(model.actuator_trnid[int(actuator), 0]))
    return (f"actuator {actuator_name(model, actuator)!r} is a <motor> with no torque limit (no forcerange or "
            f"ctrlrange, and its joint {joint!r} has no actuatorfrcrange), so its servo could ask for any torque; "
            f"set forcerange=\"-T T\" on the motor or actuatorfrcrange=\"-T T\" on joint {joint!r} (N m)")


def motor_to_servo(model: mujoco.MjModel, actuator: int, kp: float, kd: float) -> None:
    """Rewrite torque actuator ``actuator`` in place into a PD position servo on its joint (see the comment above)."""
    a, out = int(actuator), int(model.actuator_outadr[int(actuator)])
    joint, c = int(model.actuator_trnid[a, 0]), int(model.actuator_ctrladr[a])
    gear = float(model.actuator_gear[out, 0])
    torque = motor_torque_range(model, a)
    model.actuator_gear[out] = (1.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    model.actuator_armature[a] *= gear * gear
    model.actuator_damping[a] *= gear * gear
    model.actuator_gainprm[a] = 0.0
    model.actuator_gainprm[a, 0] = kp
    model.actuator_biastype[a] = mujoco.mjtBias.mjBIAS_AFFINE
    model.actuator_biasprm[a] = 0.0
    model.actuator_biasprm[a, 1:3] = (-kp, -kd)
    model.actuator_ctrllimited[c] = bool(model.jnt_limited[joint])
    model.actuator_ctrlrange[c] = model.jnt_range[joint] if model.jnt_limited[joint] else (0.0, 0.0)
    model.actuator_forcelimited[a] = torque is not None
    model.actuator_forcerange[a] = torque if torque is not None else (0.0, 0.0)


def servo_joint_actuators(model: mujoco.MjModel, actuator_ids, kp, kd, *, gains: str = "pd_kp / pd_kd") -> tuple[str, ...]:
    """Make every actuator in ``actuator_ids`` a position servo on its joint; their kinds, in order.

    Position actuators stay as the model has them (:data:`POSITION`); torque actuators
    become PD servos with ``kp[i]``, ``kd[i]`` and the motor's torque limits
    (:func:`motor_torque_range`: its own, else its joint's ``actuatorfrcrange``; :data:`MOTOR`,
    changed in place, then ``mj_setConst``); a torque actuator with no limit at all, and
    anything else, raise ``ValueError`` naming the actuator and what to change. ``kp`` / ``kd`` hold one value per actuator
    (``gains`` names them in the messages: the task's config keys).
    """
    ids = [int(a) for a in np.asarray(actuator_ids).ravel()]
    kp, kd = np.asarray(kp, dtype=np.float64).ravel(), np.asarray(kd, dtype=np.float64).ravel()
    if kp.size != len(ids) or kd.size != len(ids):
        raise ConfigError(f"{gains} need one gain per driven joint ({len(ids)}, in action order), got {kp.size} and {kd.size}")
    require_gains(kp.tolist(), kd.tolist(), gains)
    kinds = tuple(actuator_kind(model, a) for a in ids)  # refuse before changing anything
    for a, kind in zip(ids, kinds):
        if kind == MOTOR and motor_torque_range(model, a) is None:
            raise ValueError(unlimited_motor_message(model, a))
    if MOTOR not in kinds:
        return kinds
    for i, (a, kind) in enumerate(zip(ids, kinds)):
        if kind == MOTOR:
            motor_to_servo(model, a, float(kp[i]), float(kd[i]))
    mujoco.mj_setConst(model, mujoco.MjData(model))  # actuator_acc0 / length0 of the new gear
    return kinds


def require_gains(kp, kd, names: str = "pd_kp / pd_kd") -> None:
    """Config check of PD gains: equally long, non-empty, ``kp > 0`` and ``kd >= 0`` (:class:`ConfigError` otherwise).

    Their count is checked against the driven joints when the task loads its model
    (:func:`servo_joint_actuators`).
    """
    kp, kd = tuple(kp), tuple(kd)
    if not kp or len(kp) != len(kd):
        raise ConfigError(f"{names} must be two equally long tuples, one gain per joint in action order; "
                          f"got {len(kp)} and {len(kd)} values")
    if not (all(float(k) > 0 for k in kp) and all(float(d) >= 0 for d in kd)):
        raise ConfigError(f"{names} must be > 0 / >= 0, got {list(kp)} / {list(kd)}")
