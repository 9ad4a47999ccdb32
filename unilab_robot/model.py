"""The ``MjModel`` ``unilab play`` steps: the spec's MJCF (or ``--model-path``), with its terrain."""

from __future__ import annotations

from pathlib import Path

import mujoco

from unilab_robot.assets import ASSETS_DIR
from unilab_robot.deploy import DeploySpec, SpecError
from unilab_robot.deploy.height_scan import play_model
from unilab_robot.policy import PlayError


def load_play_model(spec: DeploySpec, model_path: str | None = None) -> mujoco.MjModel:
    """The model to play, at the spec's physics step; :class:`PlayError` when it cannot be built.

    ``model_path``: another MJCF with the spec's joint, actuator and body names (a Menagerie
    robot); else the spec's MJCF, else the package's MJCF with the spec's joint and actuator
    names (a UniLab task on its own model: :func:`packaged_model_path`).
    A spec with a terrain section gets that terrain in place of the model's floor
    (:func:`unilab_robot.deploy.height_scan.play_model`).
    """
    xml = model_path or spec.model.mjcf
    if xml is None:  # a UniLab task on its own packaged MJCF: the one with the spec's names
        try:
            xml = str(packaged_model_path(spec))
        except SpecError as e:
            raise PlayError(f"{e}; pass --model-path FILE.xml") from None
    if not Path(xml).is_file():
        raise PlayError(f"model {xml} does not exist; pass the path of an MJCF (.xml) file")
    try:
        model = play_model(spec, str(xml))
    except SpecError as e:  # a terrain section this UniLab cannot build
        raise PlayError(str(e)) from None
    except ValueError as e:
        raise PlayError(f"could not compile MJCF {xml}: {' '.join(str(e).split())}") from None
    model.opt.timestep = spec.timing.physics_dt
    return model


def packaged_model_path(spec: DeploySpec) -> Path:
    """The package's MJCF a spec without ``model.mjcf`` was exported on, found from the spec itself: the
    one whose joint and actuator names, in model order, are the spec's ``model`` names. Compiles the
    package's few MJCFs (milliseconds); imports no task, so no Numba (``unilab play``'s path).
    :class:`SpecError` when none matches."""
    names = (tuple(spec.model.joint_names), tuple(spec.model.actuator_names))
    for xml in sorted(ASSETS_DIR.glob("*/*.xml")):
        try:
            model = mujoco.MjModel.from_xml_path(str(xml))
        except ValueError:  # a fragment another file includes
            continue
        if names == (_names(model, mujoco.mjtObj.mjOBJ_JOINT, model.njnt),
                     _names(model, mujoco.mjtObj.mjOBJ_ACTUATOR, model.nu)):
            return xml
    raise SpecError(f"the deploy spec of {spec.task.id} names no MJCF (model.mjcf) and none of this package's "
                    f"has its joint and actuator names")


def _names(model: mujoco.MjModel, kind: mujoco.mjtObj, count: int) -> tuple[str, ...]:
    return tuple(mujoco.mj_id2name(model, kind, i) or "" for i in range(count))
