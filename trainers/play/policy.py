"""The policy ``unilab play`` runs: a run folder's ``policy.onnx`` and deploy spec, found and loaded."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from unilab_envs.deploy import SPEC_FILENAME, DeploySpec, SpecError, load_spec

POLICY_FILENAME = "policy.onnx"


class PlayError(ValueError):
    """What was given to ``unilab play`` cannot be played; the message says what to do."""


@dataclasses.dataclass(frozen=True)
class PolicyBundle:
    """A policy to play: its ONNX file, its deploy spec and the folder holding them."""

    onnx: Path
    spec: DeploySpec
    folder: Path


def find_policy(path: str | Path, spec_path: str | Path | None = None) -> PolicyBundle:
    """The ``policy.onnx`` and deploy spec of a run folder (or an ``.onnx`` file); :class:`PlayError` if absent.

    The spec is ``spec_path`` when given, else ``deploy_spec.json`` beside the policy, else
    the copy in the ONNX metadata. A spec of another task than the policy's is refused.
    """
    path = Path(path)
    if not path.exists():
        raise PlayError(f"{path} does not exist: pass a folder holding policy.onnx (a run after `unilab export`, "
                        f"or policies/go1_joystick)")
    onnx = path if path.is_file() else path / POLICY_FILENAME
    if onnx.suffix != ".onnx" or not onnx.is_file():
        hint = f"run `unilab export {path}` first" if (path / "checkpoint.pt").exists() or (path / "model.zip").exists() \
            else "pass a run folder after `unilab export RUN`, or the .onnx file"
        raise PlayError(f"{path} holds no {POLICY_FILENAME}: {hint}")
    folder = onnx.parent
    try:
        if spec_path is not None:
            spec = load_spec(spec_path)
        elif (folder / SPEC_FILENAME).is_file():
            spec = load_spec(folder / SPEC_FILENAME)
        else:
            _require_deployable_task(folder)
            spec = load_spec(onnx)
        embedded = None
        try:
            embedded = load_spec(onnx)
        except SpecError:
            pass  # a policy exported before deploy specs: trust the given spec, sizes are checked below
        if embedded is not None:
            spec.require_task(embedded.task.id)
        _import_task_groups(spec)
    except SpecError as e:
        raise PlayError(str(e)) from None
    return PolicyBundle(onnx, spec, folder)


def _import_task_groups(spec) -> None:
    """A spec of a task outside this package (id ``"module:Id"``) whose observation has groups of the task's own:
    import that module, whose declarations register their NumPy builders (``unilab_envs.core.obs_groups``)."""
    from unilab_envs.deploy.reference import GROUP_BUILDERS

    from trainers.common.envs import import_task_module

    if ":" in spec.task.id and any(g.name not in GROUP_BUILDERS for g in spec.observation.groups):
        try:
            import_task_module(spec.task.id)
        except ValueError as e:
            raise SpecError(f"the spec's observation has groups of the task's own, whose builders its module declares: {e}") from None


def _require_deployable_task(folder: Path) -> None:
    """A run on a task without a deploy spec (not a UniLab task: its ONNX carries no spec) gets told so,
    rather than to re-export. Asks the task (:func:`unilab_envs.deploy.from_task.deploy_spec_for`)."""
    from unilab_envs.deploy.from_task import NoDeploySpec, deploy_spec_for

    from trainers.common.deploy_export import run_task
    from trainers.common.envs import import_task_module

    found = run_task(folder)
    if found is None:
        return
    try:
        import_task_module(found[0])
        deploy_spec_for(found[0], **{k: v for k, v in found[1].items() if k != "num_threads"})
    except NoDeploySpec:
        raise SpecError(f"{found[0]} has no deploy spec yet (unilab play runs tasks on unilab_envs.core.task.Task "
                        f"whose deploy_facts() says what the robot side needs): watch this policy in the training "
                        f"stack with `unilab eval {folder} --video`") from None
    except ValueError as e:  # the task's own word (its deploy_facts, an unknown group)
        raise SpecError(f"{found[0]} has no deploy spec: {e}") from None


class OnnxPolicy:
    """``policy.onnx`` on onnxruntime (CPU, one thread): ``policy(obs) -> action``, float32."""

    def __init__(self, path: Path, spec: DeploySpec) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        inp, out = self.session.get_inputs()[0], self.session.get_outputs()[0]
        self.input_name, self.output_name = inp.name, out.name
        obs_dim, act_dim = inp.shape[-1], out.shape[-1]
        try:
            spec.require_sizes(int(obs_dim), int(act_dim), str(path))
        except SpecError as e:
            raise PlayError(str(e)) from None

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return self.session.run([self.output_name], {self.input_name: obs.reshape(1, -1)})[0][0]
