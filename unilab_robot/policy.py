"""The policy ``unilab play`` and ``unilab robot`` run: a run folder's ``policy.onnx`` and deploy spec, found and loaded.

:func:`find_policy` reads what is in the folder; the training stack's ``unilab play``
(:func:`trainers.play.policy.find_policy`) passes two hooks that ask the task's code (a run on a task
without a deploy spec, a task's own observation groups), which a robot's computer does not have.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from unilab_robot.deploy import SPEC_FILENAME, DeploySpec, SpecError, load_spec

POLICY_FILENAME = "policy.onnx"


class PlayError(ValueError):
    """What was given to ``unilab play`` cannot be played; the message says what to do."""


@dataclasses.dataclass(frozen=True)
class PolicyBundle:
    """A policy to play: its ONNX file, its deploy spec and the folder holding them."""

    onnx: Path
    spec: DeploySpec
    folder: Path
    #: builders of the spec's observation groups of the task's own (``PolicyIO(..., builders=)``); empty for most
    builders: Mapping[str, Callable] = dataclasses.field(default_factory=dict)


def find_policy(path: str | Path, spec_path: str | Path | None = None, *,
                check_task: Callable[[Path], None] | None = None,
                group_builders: Callable[[DeploySpec], Mapping[str, Callable]] | None = None) -> PolicyBundle:
    """The ``policy.onnx`` and deploy spec of a run folder (or an ``.onnx`` file); :class:`PlayError` if absent.

    The spec is ``spec_path`` when given, else ``deploy_spec.json`` beside the policy, else
    the copy in the ONNX metadata. A spec of another task than the policy's is refused.
    ``check_task(folder)``: called before the ONNX metadata's copy is read (no spec file given or beside
    the policy), to say why a run has none (a :class:`SpecError`). ``group_builders(spec)``: the builders
    of the spec's groups of the task's own (the bundle's ``builders``). Both are the training stack's.
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
            if check_task is not None:
                check_task(folder)
            spec = load_spec(onnx)
        embedded = None
        try:
            embedded = load_spec(onnx)
        except SpecError:
            pass  # a policy exported before deploy specs: trust the given spec, sizes are checked below
        if embedded is not None:
            spec.require_task(embedded.task.id)
        builders = dict(group_builders(spec)) if group_builders is not None else {}
    except SpecError as e:
        raise PlayError(str(e)) from None
    return PolicyBundle(onnx, spec, folder, builders)


class OnnxPolicy:
    """``policy.onnx`` on onnxruntime (CPU, one thread): ``policy(obs) -> action``, float32.

    A recurrent policy (``h_in`` / ``h_out`` in the graph) keeps its hidden state here, one per
    instance (:mod:`unilab_robot.policy_state`); :meth:`reset` zeroes it at an episode's start."""

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
        from unilab_robot.policy_state import check_state, recurrent_state

        self.state = recurrent_state(self.session, self.input_name, self.output_name)
        try:
            check_state(self.state, spec, str(path))
        except SpecError as e:
            raise PlayError(str(e)) from None

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        if self.state is not None:
            return self.state.run(np.asarray(obs, np.float32).reshape(1, -1))[0]
        return self.session.run([self.output_name], {self.input_name: obs.reshape(1, -1)})[0][0]

    def reset(self) -> None:
        """Zero a recurrent policy's hidden state (an episode starts); nothing for a feed-forward one."""
        if self.state is not None:
            self.state.reset()
