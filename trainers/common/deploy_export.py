"""The deploy spec beside an exported policy: ``deploy_spec.json`` and a copy in the ONNX metadata.

``unilab export`` calls :func:`attach_deploy_spec` after it wrote ``policy.onnx``: the spec
is built from the run's task and task keywords (its ``config.yaml``), checked against the
ONNX input/output sizes, written atomically beside the policy, and stored in the ONNX
file's ``metadata_props`` under :data:`unilab_envs.deploy.ONNX_METADATA_KEY`. A run with an
``obs_history`` gets the spec's ``history`` section (:func:`run_history`), so the robot side
stacks the same frames the policy was trained on. A joystick policy's spec always carries
the safety guard (:func:`run_safety`): the ``safety:`` section of the profile the run trained
under, else the defaults, resolved on the task's model into the numbers the guard uses and
stated in the section's ``source``. A motion-tracking policy's spec names its clips by file name:
:func:`copy_motion_clips` copies the motion files beside it. :func:`run_spec` is the spec a fresh
export writes.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

from trainers.common.atomic import atomic_write
from unilab_robot.deploy.spec import ONNX_METADATA_KEY, SPEC_FILENAME, DeploySpec, Precision
from unilab_robot.profiles import Profile, resolve


def _run_config(run_folder: Path) -> dict[str, Any] | None:
    """A run's config: its ``config.yaml`` (bundled PPO or SB3), else its ``checkpoint.pt``'s, or ``None``."""
    path = Path(run_folder) / "config.yaml"
    checkpoint = Path(run_folder) / "checkpoint.pt"
    if path.is_file():
        cfg = yaml.safe_load(path.read_text()) or {}
    elif checkpoint.is_file():
        import torch

        cfg = torch.load(checkpoint, map_location="cpu", weights_only=True).get("config") or {}
    else:
        return None
    return cfg if isinstance(cfg, dict) else None


def run_task(run_folder: Path) -> tuple[str, dict[str, Any]] | None:
    """``(task id, task keywords)`` from a run's ``config.yaml`` (bundled PPO or SB3), else from
    its ``checkpoint.pt`` (a folder that holds only a checkpoint), or ``None``. The id is as the run
    was given it: ``"module:Id"`` for a task registered by the user's module, which
    :func:`~trainers.common.envs.import_task_module` imports again."""
    cfg = _run_config(run_folder)
    if not cfg or not cfg.get("task"):
        return None
    kwargs = cfg.get("env_kwargs") if "env_kwargs" in cfg else cfg.get("env")
    return str(cfg["task"]), dict(kwargs or {})


def run_history(run_folder: Path) -> dict[str, Any] | None:
    """The ``obs_history`` a run's policy reads (``{groups: [...], length: K}``, its config), or ``None``."""
    cfg = _run_config(run_folder)
    return (cfg or {}).get("obs_history") or None


def run_recurrent(run_folder: Path) -> Any:
    """The deploy spec's ``recurrent`` section of a run whose policy has a hidden state (its config's
    ``policy.recurrent``, ``policy.recurrent_hidden``), or ``None`` (a feed-forward policy)."""
    policy = (_run_config(run_folder) or {}).get("policy") or {}
    if not policy.get("recurrent"):
        return None
    from unilab_robot.deploy.spec import Recurrent

    return Recurrent(kind=str(policy["recurrent"]), size=int(policy["recurrent_hidden"]))


def run_profile(run_folder: Path) -> Profile | None:
    """The sim-to-real profile a run trained under (its config's ``sim2real``: a name, a path or a mapping),
    resolved once (:func:`unilab_robot.profiles.resolve`), or ``None`` (the bare env). A profile that no
    longer resolves raises :class:`~unilab_robot.config.ConfigError` or ``FileNotFoundError`` (one line)."""
    sim2real = (_run_config(run_folder) or {}).get("sim2real")
    return resolve(sim2real) if sim2real else None


def run_estimator(run_folder: Path) -> tuple[str, ...] | None:
    """The groups a run's learned state estimator estimates (its config's ``policy.estimator.targets``), or ``None``."""
    policy = (_run_config(run_folder) or {}).get("policy")  # an SB3 run names its policy class here ("MlpPolicy")
    estimator = policy.get("estimator") if isinstance(policy, dict) else None
    return tuple(estimator.get("targets") or ()) if isinstance(estimator, dict) else None


#: the ``source`` of a spec's safety section when the run trained without a guard
DEFAULT_SAFETY_SOURCE = ("defaults (the run trained without a safety section): SafetyConfig's defaults on the "
                         "training model's joint ranges, actuator force and control ranges and the task's fall angle")


def run_safety(run_folder: Path) -> tuple[dict[str, Any], str]:
    """``(safety section, where it came from)`` for a run's deploy spec.

    The ``safety:`` section of the sim-to-real profile the run trained under (its config), so
    play and the robot run the guard the policy learned under; else ``{}`` (the defaults),
    with :data:`DEFAULT_SAFETY_SOURCE`.
    """
    try:
        profile = run_profile(Path(run_folder))
    except (ValueError, TypeError, OSError):  # a profile that is gone: the defaults, said so
        profile = None
    if profile is None or "safety" not in profile.sections:
        return {}, DEFAULT_SAFETY_SOURCE
    name = profile.name or profile.source.get("extends", "inline")
    source = f"the safety section of the run's sim-to-real profile ({name}, as the run resolved it)"
    return profile.sections["safety"], source


def embed_spec(onnx_path: Path, spec: DeploySpec) -> None:
    """Store the spec's JSON in the ONNX file's metadata (replacing an older one), atomically."""
    import onnx

    model = onnx.load(str(onnx_path))
    graph_in = model.graph.input[0].type.tensor_type.shape.dim[-1].dim_value
    graph_out = model.graph.output[0].type.tensor_type.shape.dim[-1].dim_value
    spec.require_sizes(int(graph_in), int(graph_out), str(onnx_path))
    _require_estimate(model, spec, str(onnx_path))
    kept = [(p.key, p.value) for p in model.metadata_props if p.key != ONNX_METADATA_KEY]
    del model.metadata_props[:]
    for key, value in kept + [(ONNX_METADATA_KEY, spec.to_json())]:
        model.metadata_props.add(key=key, value=value)
    atomic_write(Path(onnx_path), lambda tmp: onnx.save(model, tmp))


def _require_estimate(model, spec: DeploySpec, where: str) -> None:
    """The graph has the output the spec's ``estimator`` section names, as wide as it says (``ValueError`` if not);
    a spec without the section asks nothing."""
    if spec.estimator is None:
        return
    widths = {o.name: o.type.tensor_type.shape.dim[-1].dim_value for o in model.graph.output}
    name, size = spec.estimator.output, spec.estimator.size
    if widths.get(name) != size:
        raise ValueError(f"{where} has no {size}-wide output {name!r} (its outputs: {widths}), which the deploy spec's "
                         f"estimator section names; export the run's policy with `unilab export RUN`")


def copy_motion_clips(spec: DeploySpec, folder: str | Path) -> list[Path]:
    """Copy a motion-tracking spec's clips (``spec.motion.paths``) into ``folder`` under the file names the spec
    gives them, so the robot side finds them beside ``deploy_spec.json``; the copies (none for other specs)."""
    if spec.motion is None:
        return []
    out = []
    for name, source in zip(spec.motion.clips, spec.motion.paths):
        target = Path(folder) / name
        if not target.exists() or not target.samefile(source):
            atomic_write(target, lambda tmp, source=source: shutil.copyfile(source, tmp))
        out.append(target)
    return out


def _write_beside(onnx_path: Path, spec: DeploySpec) -> Path:
    """``deploy_spec.json`` (and a motion policy's clips) beside ``onnx_path``; the JSON path."""
    copy_motion_clips(spec, onnx_path.parent)
    out = onnx_path.parent / SPEC_FILENAME
    atomic_write(out, lambda tmp: Path(tmp).write_text(spec.to_json()))
    return out


def build_spec(task: str, env_kwargs: dict[str, Any] | None = None, precision: Precision | None = None,
               safety: tuple[dict[str, Any], str] | dict[str, Any] | None = None,
               history: dict[str, Any] | None = None, estimator: tuple[str, ...] | None = None) -> DeploySpec:
    """``task``'s deploy spec with the sections :func:`attach_deploy_spec` documents."""
    import dataclasses

    from trainers.common.envs import import_task_module
    from unilab_envs.deploy_spec import deploy_spec_for

    import_task_module(task)  # "module:Id": the user's module, from the current directory too
    kwargs = {k: v for k, v in (env_kwargs or {}).items() if k != "num_threads"}
    section, source = safety if isinstance(safety, tuple) else (safety, "given to the export")
    spec = deploy_spec_for(task, safety=section, safety_source=source, estimator=estimator, **kwargs)
    if precision is not None:
        spec = dataclasses.replace(spec, precision=precision)
    if history is not None:
        from unilab_robot.deploy.history import history_config, history_section
        from unilab_robot.deploy.spec import validate

        groups = {g.name: (g.start, g.stop) for g in spec.observation.groups}
        spec = dataclasses.replace(spec, history=history_section(groups, spec.observation.size, history_config(history)))
        validate(spec)
    return spec


def attach_deploy_spec(onnx_path: str | Path, task: str, env_kwargs: dict[str, Any] | None = None,
                       precision: Precision | None = None, safety: tuple[dict[str, Any], str] | dict[str, Any] | None = None,
                       history: dict[str, Any] | None = None) -> Path:
    """Build ``task``'s deploy spec, write ``deploy_spec.json`` (and a motion policy's clips,
    :func:`copy_motion_clips`) beside ``onnx_path`` and embed it; returns the JSON path.

    ``precision``: the graph's precision section (``unilab export --precision``; default fp32).
    ``safety``: the guard's section, ``(section, source)`` (:func:`run_safety`) or a section;
    resolved on the task's model (joystick tasks only); default none.
    ``history``: the policy's ``obs_history`` (:func:`run_history`; default none).
    """
    onnx_path = Path(onnx_path)
    spec = build_spec(task, env_kwargs, precision, safety, history)
    embed_spec(onnx_path, spec)
    return _write_beside(onnx_path, spec)


def run_spec(run_folder: str | Path, precision: Precision | None = None) -> DeploySpec | None:
    """The deploy spec ``unilab export`` (and ``unilab ship``) writes for the run in ``run_folder``.

    ``None`` when the run is not on a UniLab task (HalfCheetah ...): such a policy has no
    robot-side contract to write. A UniLab task that cannot say its facts raises
    (:meth:`unilab_envs.core.task.Task.deploy_facts`).
    """
    from unilab_envs.deploy_spec import NoDeploySpec

    found = run_task(Path(run_folder))
    if found is None:
        return None
    task, kwargs = found
    try:
        spec = build_spec(task, kwargs, precision, run_safety(Path(run_folder)), run_history(Path(run_folder)),
                          run_estimator(Path(run_folder)))
    except NoDeploySpec:
        return None
    recurrent = run_recurrent(Path(run_folder))  # a recurrent policy's hidden state (h_in / h_out)
    if recurrent is None:
        return spec
    import dataclasses

    return dataclasses.replace(spec, recurrent=recurrent)


def attach_for_run(onnx_path: str | Path, run_folder: str | Path, precision: Precision | None = None) -> Path | None:
    """Write :func:`run_spec` beside ``onnx_path`` and into its metadata; its path, or ``None`` (no spec)."""
    spec = run_spec(run_folder, precision)
    if spec is None:
        return None
    onnx_path = Path(onnx_path)
    embed_spec(onnx_path, spec)
    return _write_beside(onnx_path, spec)


def safety_line(spec_path: str | Path) -> str:
    """The line ``unilab export`` prints about the guard it wrote into the spec at ``spec_path``: whose numbers."""
    from unilab_robot.deploy.spec import load_spec

    spec = load_spec(spec_path)
    if spec.safety is None:
        return (f"safety guard: none in the spec (the guard maps home_offset joint targets; these actions are "
                f"{spec.action.mode})")
    return f"safety guard in the spec, run by unilab play and PolicyIO by default: {spec.safety.source}"
