"""Loading a task's MJCF and looking up named objects with clear errors."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np


def mjcf_file(path: str | Path) -> Path:
    """``path`` as a ``Path``; raises ``FileNotFoundError`` (saying what to pass) when no file is there."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"model_path {str(path)!r} does not exist; pass the path of an MJCF (.xml) file")
    return path


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
            raise ValueError(f"joint {name!r} must be driven by exactly one actuator, found {matches.size}")
        out.append(matches[0])
    return np.asarray(out, dtype=np.int64)


def free_joint_of(model: mujoco.MjModel, body: str) -> tuple[int, int]:
    """``(qpos address, dof address)`` of the free joint of ``body``."""
    body_id = object_ids(model, mujoco.mjtObj.mjOBJ_BODY, (body,), "body")[0]
    for j in range(model.njnt):
        if model.jnt_bodyid[j] == body_id and model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            return int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j])
    raise ValueError(f"body {body!r} has no free joint; the task needs a floating base")
