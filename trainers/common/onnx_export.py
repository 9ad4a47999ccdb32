"""ONNX export of a deterministic policy, shared by the bundled PPO and the SB3 runs.

The exported graph maps a batch of raw observations (``obs``, float32 ``[batch, obs_dim]``,
the training observation normalizer folded in) to the action the env executes
(``actions``, float32 ``[batch, act_dim]``, clipped to the action space bounds). What the
output means is written into the file (``doc_string`` and the ``meaning``,
``action_low``, ``action_high`` metadata), and :func:`describe_onnx` reads it back.

A recurrent policy (``state_size > 0``) has its hidden state as an explicit second input and
output: ``obs, h_in [batch, state_size] -> actions, h_out [batch, state_size]``; ``h_in`` is zero
at an episode's first step and each step's ``h_out`` is the next step's ``h_in`` (metadata
``state_meaning``, ``state_size``).

A policy with a learned state estimator (``estimate_size > 0``, :mod:`trainers.ppo.estimator`) has
its estimate as a second output: ``obs -> actions, estimate [batch, estimate_size]`` (metadata
``estimate_meaning``, ``estimate_size``). The action already reads the estimate inside the graph; a
program that only acts fetches ``actions`` and never needs it.
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

from .atomic import atomic_write

INPUT_NAME, OUTPUT_NAME = "obs", "actions"
STATE_INPUT, STATE_OUTPUT = "h_in", "h_out"  # a recurrent policy's hidden state (state_size > 0)
STATE_MEANING = ("the recurrent policy's hidden state: zeros at an episode's first step, then the h_out of the "
                 "step before")
ESTIMATE_OUTPUT = "estimate"  # a state estimator's estimate (estimate_size > 0)


class ClipToBox(nn.Module):
    """``policy(obs)`` clipped element-wise to ``[low, high]`` (the env's action space)."""

    def __init__(self, policy: nn.Module, low: np.ndarray, high: np.ndarray) -> None:
        super().__init__()
        self.policy = policy
        self.register_buffer("low", torch.as_tensor(np.asarray(low, np.float32)))
        self.register_buffer("high", torch.as_tensor(np.asarray(high, np.float32)))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return torch.maximum(torch.minimum(self.policy(obs), self.high), self.low)


class ClipToBoxRecurrent(ClipToBox):
    """``action, h' = policy(obs, h)`` with the action clipped element-wise to ``[low, high]``."""

    def forward(self, obs: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        action, h = self.policy(obs, h)
        return torch.maximum(torch.minimum(action, self.high), self.low), h


class ClipToBoxWithEstimate(ClipToBox):
    """``action, estimate = (policy(obs) clipped to [low, high], policy.estimate(obs))``: a policy with a state
    estimator (:class:`~trainers.ppo.estimator.EstimatingInferencePolicy`)."""

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return super().forward(obs), self.policy.estimate(obs)


def bounds_text(low: np.ndarray, high: np.ndarray) -> str:
    """``[-1, 1]`` when every dimension shares its bounds, else ``per-dimension bounds``."""
    low, high = np.asarray(low, np.float64).ravel(), np.asarray(high, np.float64).ravel()
    if np.all(low == low[0]) and np.all(high == high[0]):
        return f"[{low[0]:g}, {high[0]:g}]"
    return "per-dimension bounds (metadata action_low / action_high)"


NORMALIZED_INPUT = "raw observation (the training observation normalizer is folded in)"


def export_policy(module: nn.Module, obs_dim: int, path: str | Path, meaning: str, *,
                  action_low: np.ndarray, action_high: np.ndarray, opset: int = 17,
                  input_meaning: str = NORMALIZED_INPUT, state_size: int = 0, estimate_size: int = 0,
                  estimate_meaning: str = "") -> Path:
    """Trace ``module`` (raw obs -> executed action) to ONNX at ``path``, atomically.

    ``meaning`` (what ``actions`` is), ``input_meaning`` (what ``obs`` is) and the action
    bounds are stored in the file. The batch dimension is dynamic. ``state_size > 0``: a
    recurrent ``module(obs, h) -> (action, h')``, exported as ``obs, h_in -> actions, h_out``.
    ``estimate_size > 0``: ``module(obs) -> (action, estimate)``, exported as ``obs -> actions, estimate``
    (``estimate_meaning``: what the estimate is).
    """
    if state_size and estimate_size:
        raise ValueError("a policy with both a hidden state and a state estimator is not exported")
    import onnx

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    module = module.eval().cpu()
    dummy = (torch.zeros(1, obs_dim),) + ((torch.zeros(1, state_size),) if state_size else ())
    names_in = [INPUT_NAME] + ([STATE_INPUT] if state_size else [])
    names_out = [OUTPUT_NAME] + ([STATE_OUTPUT] if state_size else []) + ([ESTIMATE_OUTPUT] if estimate_size else [])
    kwargs = dict(input_names=names_in, output_names=names_out, opset_version=opset,
                  dynamic_axes={name: {0: "batch"} for name in names_in + names_out})
    def write(tmp: str) -> None:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # tracer and deprecation notes about a graph we check in tests
            try:
                torch.onnx.export(module, dummy, tmp, dynamo=False, **kwargs)
            except TypeError:  # a torch without the dynamo flag
                torch.onnx.export(module, dummy, tmp, **kwargs)
        model = onnx.load(tmp)
        _static_action_dim(model, int(np.asarray(action_low).size))
        if state_size:
            _static_state_dim(model, int(state_size))
        if estimate_size:
            _static_width(model, ESTIMATE_OUTPUT, int(estimate_size))
        _outputs_apart(model)
        model.doc_string = meaning
        meta = {"meaning": meaning, "input_meaning": input_meaning,
                "action_low": json.dumps(np.asarray(action_low, float).ravel().tolist()),
                "action_high": json.dumps(np.asarray(action_high, float).ravel().tolist())}
        if state_size:
            meta.update(state_meaning=STATE_MEANING, state_size=str(int(state_size)))
        if estimate_size:
            meta.update(estimate_meaning=estimate_meaning or "the policy's state estimate",
                        estimate_size=str(int(estimate_size)))
        del model.metadata_props[:]
        for key, value in meta.items():
            model.metadata_props.add(key=key, value=value)
        onnx.save(model, tmp)

    return atomic_write(path, write)


def _static_action_dim(model, act_dim: int) -> None:
    """Declare the output ``[batch, act_dim]`` (the tracer may leave the action dim symbolic, e.g. after Max)."""
    dims = model.graph.output[0].type.tensor_type.shape.dim
    if len(dims) == 2:
        dims[1].Clear()
        dims[1].dim_value = act_dim


def _outputs_apart(model) -> None:
    """Give each graph output that a node also reads (a state estimator's ``estimate``, which the actor reads)
    its own ``Identity``: the fp16 converter (``keep_io_types``) casts such an output back to float32 in place,
    and the node reading it then gets float32 among float16 inputs (``unilab export --precision fp16``)."""
    import onnx

    read = {name for node in model.graph.node for name in node.input}
    for out in model.graph.output:
        if out.name not in read:
            continue
        inner = f"{out.name}_inner"
        for node in model.graph.node:
            node.input[:] = [inner if name == out.name else name for name in node.input]
            node.output[:] = [inner if name == out.name else name for name in node.output]
        model.graph.node.append(onnx.helper.make_node("Identity", [inner], [out.name], name=f"{out.name}_output"))


def _static_state_dim(model, state_size: int) -> None:
    """Declare ``h_in`` and ``h_out`` ``[batch, state_size]`` (the tracer leaves ``h_out``'s width symbolic)."""
    for name in (STATE_INPUT, STATE_OUTPUT):
        _static_width(model, name, state_size)


def _static_width(model, name: str, width: int) -> None:
    """Declare the graph input or output ``name`` ``[batch, width]``."""
    for value in (*model.graph.input, *model.graph.output):
        if value.name == name:
            dims = value.type.tensor_type.shape.dim
            dims[1].Clear()
            dims[1].dim_value = width


@dataclasses.dataclass(frozen=True)
class OnnxTensor:
    name: str
    dtype: str
    shape: tuple  # ints and symbolic names ("batch")

    def __str__(self) -> str:
        return f"{self.name} {self.dtype} [{', '.join(str(d) for d in self.shape)}]"


@dataclasses.dataclass(frozen=True)
class OnnxPolicyInfo:
    path: Path
    inputs: tuple[OnnxTensor, ...]
    outputs: tuple[OnnxTensor, ...]
    meaning: str
    input_meaning: str = NORMALIZED_INPUT
    state_meaning: str = STATE_MEANING  # a recurrent policy's h_in / h_out
    estimate_meaning: str = ""  # a state estimator's estimate output

    def summary(self) -> str:
        """The lines ``unilab export`` prints."""
        said = {STATE_INPUT: self.state_meaning, STATE_OUTPUT: self.state_meaning, ESTIMATE_OUTPUT: self.estimate_meaning}
        lines = [f"onnx: {self.path}"]
        lines += [f"  input  {t}: {said.get(t.name) or self.input_meaning}" for t in self.inputs]
        lines += [f"  output {t}: {said.get(t.name) or self.meaning}" for t in self.outputs]
        return "\n".join(lines)


def describe_onnx(path: str | Path) -> OnnxPolicyInfo:
    """Input/output names, dtypes and shapes of an exported policy, and what its output means."""
    import onnx

    model = onnx.load(str(path))

    def tensors(values) -> tuple[OnnxTensor, ...]:
        out = []
        for v in values:
            t = v.type.tensor_type
            shape = tuple(d.dim_param or d.dim_value for d in t.shape.dim)
            out.append(OnnxTensor(v.name, onnx.helper.tensor_dtype_to_np_dtype(t.elem_type).name, shape))
        return tuple(out)

    meta = {p.key: p.value for p in model.metadata_props}
    return OnnxPolicyInfo(Path(path), tensors(model.graph.input), tensors(model.graph.output),
                          meta.get("meaning") or model.doc_string or "the policy's action",
                          meta.get("input_meaning") or NORMALIZED_INPUT, meta.get("state_meaning") or STATE_MEANING,
                          meta.get("estimate_meaning") or "")
