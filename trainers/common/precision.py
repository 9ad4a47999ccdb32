"""Reduced-precision export: an fp32 ``policy.onnx`` as fp16 or int8, checked against fp32.

``unilab export RUN --precision fp16|int8`` exports the fp32 policy as always, converts it
with the standard ONNX tooling and measures what the conversion costs in actions:

* **fp16**: ``onnxconverter_common.float16.convert_float_to_float16`` with
  ``keep_io_types=True`` (the converter onnxruntime's float16 guide points to): weights
  and activations in float16, ``obs`` still float32 in and ``actions`` float32 out under
  the same names, so a deploy program runs it unchanged (checked after conversion).
  ``Min``/``Max`` (the final action clip) are taken off the converter's default float32
  block list: left on it, onnxconverter-common 1.16 casts the graph output back to
  float16 when a blocked op produces it. onnxruntime's own copy of the converter
  (``onnxruntime.transformers.float16``) keeps the output float32 but leaves the graph
  unsorted (``onnx.checker`` refuses it), so it is not used.
* **int8**: ``onnxruntime.quantization.quantize_dynamic`` after its
  ``quant_pre_process``: the ``Gemm``/``MatMul`` weights stored as 8-bit integers per
  output channel, activations quantized per call from their own range
  (``DynamicQuantizeLinear``), so no calibration data set is needed and nothing about
  the observation distribution is baked into the file. Static quantization would also
  fix the activation scales from calibration observations: for a small MLP at batch 1
  that saves little and ties the model to the states the calibration visited. Weights
  are ``QUInt8`` (u8 activations x u8 weights): onnxruntime's u8 x s8 kernels can
  saturate on x86 CPUs without VNNI (AVX2, older AVX-512), so an error measured on the
  exporting machine would not hold on such a robot computer; on the shipped policies
  u8 per-channel weights were also as accurate as s8 (max 0.017-0.025 vs 0.019-0.030
  of the action range).

:func:`record_observations` runs the fp32 policy in the run's task for a few hundred
steps; :func:`action_error` runs both models on those observations and reports the max
and mean absolute action difference as a fraction of the action range (``high - low``,
2 for ``[-1, 1]``). A run trained under a sim-to-real profile is deployed on noisy,
delayed, lost observations, so its observations are recorded twice: on the bare task and
under the run's own profile (its config's ``sim2real``, curricula at full strength, as
``unilab eval`` runs it); both errors are reported and stored, and the bound applies to the
worse. :func:`reduce_precision` refuses (:class:`PrecisionError`) to write a model whose
max error exceeds the bound (:data:`DEFAULT_BOUNDS`) unless forced.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from unilab_robot.deploy.spec import PRECISIONS  # ("fp32", "fp16", "int8")
from unilab_robot.profiles import Profile

from .atomic import atomic_write

#: default bound on the max absolute action error, as a fraction of the action range.
#: Measured on the shipped Go1, G1 and Go1-real policies (docs/results/export_precision.md):
#: fp16 at most 0.0013, int8 at most 0.017-0.025; the bounds leave ~8x (fp16) and ~2x
#: (int8) headroom over the worst case. 0.05 of the range is 0.05 rad (2.9 degrees) of a
#: Go1 joint target in one step, the most we let a conversion move it unasked.
DEFAULT_BOUNDS = {"fp16": 0.01, "int8": 0.05}

#: observations recorded for the check: ``num_envs`` envs x ``steps`` control steps
RECORD_ENVS, RECORD_STEPS = 8, 100


#: how each precision is made, as ``unilab export`` prints it
HOW = {"fp32": "as trained",
       "fp16": "onnxconverter-common float16, float32 input/output",
       "int8": "onnxruntime dynamic quantization, uint8 weights per channel"}


class PrecisionError(ValueError):
    """A reduced-precision model moves actions by more than the bound; the message says what to do."""


#: the observations a check records on the task without a profile
BARE = "bare task"


@dataclasses.dataclass(frozen=True)
class ActionError:
    """Max and mean absolute action difference to fp32, as fractions of the action range."""

    max: float
    mean: float
    samples: int   # observations compared
    on: str = BARE  # where they were recorded: the bare task, or "sim2real <profile>"

    def summary(self, precision: str, bound: float | None = None) -> str:
        text = (f"{precision} vs fp32 on {self.samples} recorded observations ({self.on}): action error max "
                f"{self.max:.4f}, mean {self.mean:.5f} of the action range")
        return text + (f" (bound {bound:g})" if bound is not None else "")


def _quiet_session(path: str | Path, threads: int = 1):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def run_onnx(path_or_session: Any, obs: np.ndarray, batch: int = 1024) -> np.ndarray:
    """The model's actions for ``obs`` ``[n, obs_dim]`` (float32), in batches."""
    session = path_or_session if hasattr(path_or_session, "run") else _quiet_session(path_or_session)
    name, out = session.get_inputs()[0].name, session.get_outputs()[0].name
    obs = np.asarray(obs, dtype=np.float32)
    return np.concatenate([session.run([out], {name: obs[i:i + batch]})[0] for i in range(0, len(obs), batch)])


def action_bounds(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """The action space bounds written into an exported policy (``action_low`` / ``action_high`` metadata)."""
    import json

    import onnx

    meta = {p.key: p.value for p in onnx.load(str(path), load_external_data=False).metadata_props}
    if "action_low" not in meta or "action_high" not in meta:
        raise ValueError(f"{path} has no action_low / action_high metadata: re-export it with `unilab export RUN`")
    return np.asarray(json.loads(meta["action_low"]), float), np.asarray(json.loads(meta["action_high"]), float)


def action_error(reference: str | Path, candidate: str | Path, obs: np.ndarray, on: str = BARE) -> ActionError:
    """:class:`ActionError` of ``candidate`` against ``reference`` (both ONNX) on ``obs`` (recorded ``on``)."""
    low, high = action_bounds(reference)
    span = np.where(high - low > 0, high - low, 1.0)
    span = np.where(np.isfinite(span), span, 1.0)  # unbounded dims: absolute error
    diff = np.abs(run_onnx(candidate, obs).astype(np.float64) - run_onnx(reference, obs).astype(np.float64)) / span
    return ActionError(max=float(diff.max()), mean=float(diff.mean()), samples=int(len(obs)), on=on)


def record_observations(policy: str | Path, task: str, env_kwargs: dict | None = None, num_envs: int = RECORD_ENVS,
                        steps: int = RECORD_STEPS, seed: int = 0, obs_history: Any = None,
                        sim2real: Any = None) -> np.ndarray:
    """Observations ``[num_envs * steps, obs_dim]`` (float32) of ``policy`` (an ONNX file) acting in ``task``.

    The deterministic policy runs ``steps`` control steps in ``num_envs`` envs of the run's
    task and task keywords (episodes reset as in training; ended ones restart), with the
    run's ``obs_history`` (the policy's input) when it has one, under the sim-to-real
    profile ``sim2real`` when given (the observations the policy gets: noisy, delayed, lost).
    """
    from .envs import make_vec_env, without_curricula

    session = _quiet_session(policy)
    env = make_vec_env(task, num_envs, dict(env_kwargs or {}), obs_history=obs_history,
                       sim2real=None if sim2real is None else without_curricula(sim2real))
    try:
        obs, _ = env.reset(seed=seed)
        seen = []
        for _ in range(steps):
            obs = np.asarray(obs, dtype=np.float32).reshape(num_envs, -1)
            seen.append(obs)
            obs, *_ = env.step(run_onnx(session, obs))
    finally:
        env.close()
    return np.concatenate(seen)


@contextlib.contextmanager
def _quiet_root_logger():
    """onnxruntime.quantization logs advice at WARNING on the root logger; keep the CLI's output ours."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)


def convert(fp32: str | Path, out: str | Path, precision: str) -> Path:
    """Write ``fp32`` (an exported policy) at ``precision`` to ``out``; metadata kept, names and float32 I/O kept."""
    import onnx

    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    fp32, out = Path(fp32), Path(out)
    source = onnx.load(str(fp32))
    meta = [(p.key, p.value) for p in source.metadata_props]

    def write(tmp: str) -> None:
        if precision == "fp32":
            model = source
        elif precision == "fp16":
            from onnxconverter_common import float16

            # Min/Max (the action clip) off the default block list: blocked, the converter
            # (1.16) casts the graph output back to float16; onnxruntime runs them in fp16
            keep32 = [op for op in float16.DEFAULT_OP_BLOCK_LIST if op not in ("Min", "Max")]
            model = float16.convert_float_to_float16(source, keep_io_types=True, op_block_list=keep32)
        else:
            from onnxruntime.quantization import QuantType, quantize_dynamic
            from onnxruntime.quantization.shape_inference import quant_pre_process

            with tempfile.TemporaryDirectory() as work, _quiet_root_logger():
                pre = Path(work) / "pre.onnx"
                quant_pre_process(str(fp32), str(pre))
                quantize_dynamic(pre, Path(work) / "int8.onnx", weight_type=QuantType.QUInt8, per_channel=True)
                model = onnx.load(str(Path(work) / "int8.onnx"))
        del model.metadata_props[:]
        for key, value in meta:
            model.metadata_props.add(key=key, value=value)
        onnx.checker.check_model(model)
        _require_same_interface(source, model, precision)
        onnx.save(model, tmp)

    return atomic_write(out, write)


def _require_same_interface(source, model, precision: str) -> None:
    """The converted graph keeps the input and output names and their float32 type (the runtime contract)."""
    def io(m):
        return [(v.name, v.type.tensor_type.elem_type) for v in (*m.graph.input, *m.graph.output)]

    if io(model) != io(source):
        raise RuntimeError(f"the {precision} conversion changed the policy's inputs/outputs from {io(source)} to "
                           f"{io(model)} (name, ONNX elem type); export fp32")


@dataclasses.dataclass(frozen=True)
class PrecisionReport:
    precision: str
    error: ActionError | None   # the worse of ``errors`` (the bound applies to it); None for fp32
    bound: float | None
    errors: tuple[ActionError, ...] = ()  # one per observation set (bare task, the run's profile)

    def summary(self) -> str:
        """The lines ``unilab export --precision`` prints: each observation set's error, and the bound on the worse."""
        if self.error is None:
            return f"precision: {self.precision}"
        over = self.error.max > self.bound
        measured = self.errors or (self.error,)
        worse = f"; the bound applies to the worse ({self.error.on})" if len(measured) > 1 else ""
        return (f"precision: {self.precision} ({HOW[self.precision]}), bound {self.bound:g}{worse}"
                + ("; OVER the bound, written because of --force" if over else "")
                + "".join(f"\n  {e.summary(self.precision)}" for e in measured))

    def spec_section(self):
        """The deploy spec's ``precision`` section (:class:`unilab_envs.deploy.spec.Precision`): the worse
        error as ``max_action_error`` / ``mean_action_error``, each observation set's in ``measured``."""
        from unilab_robot.deploy.spec import Precision, PrecisionSample

        e = self.error
        if e is None:
            return Precision(self.precision)
        measured = tuple(PrecisionSample(on=x.on, max_action_error=round(x.max, 6), mean_action_error=round(x.mean, 7),
                                         samples=x.samples) for x in (self.errors or (e,)))
        return Precision(self.precision, max_action_error=round(e.max, 6), mean_action_error=round(e.mean, 7),
                         samples=sum(x.samples for x in measured), bound=self.bound, measured=measured)


def profile_label(profile: Profile) -> str:
    """How a profile's observation set is named in the report and the spec: ``sim2real <name>``."""
    if profile.name is not None:
        return f"sim2real {profile.name}"
    extends = profile.source.get("extends")
    return f"sim2real {extends} (the run's profile)" if extends else "sim2real (the run's inline profile)"


def reduce_precision(fp32: str | Path, out: str | Path, precision: str, task: str | None,
                     env_kwargs: dict | None = None, bound: float | None = None, force: bool = False,
                     obs: np.ndarray | None = None, obs_history: Any = None, sim2real: Any = None) -> PrecisionReport:
    """Convert ``fp32`` to ``precision`` at ``out`` after checking its actions against fp32.

    The observations are ``obs`` when given, else recorded by running the fp32 policy in
    ``task`` (:func:`record_observations`): on the bare task, and also under ``sim2real``
    (the run's profile: a ``Profile``, name, path or mapping, resolved once) when given.
    Raises :class:`PrecisionError` (and writes nothing) when the max action error on either
    set exceeds ``bound`` (default :data:`DEFAULT_BOUNDS`) unless ``force``.
    """
    if precision == "fp32":
        convert(fp32, out, "fp32")
        return PrecisionReport("fp32", None, None)
    from .onnx_export import STATE_INPUT

    if STATE_INPUT in {i.name for i in _quiet_session(fp32).get_inputs()}:  # its error would need whole episodes
        raise PrecisionError(f"--precision {precision} of a recurrent policy (h_in / h_out) is not supported yet; "
                             "export it as fp32")
    bound = DEFAULT_BOUNDS[precision] if bound is None else float(bound)
    if obs is not None:
        sets = {BARE: obs}
    else:
        if task is None:
            raise PrecisionError(f"cannot check the {precision} model: the run names no task to record observations "
                                 f"in; export fp32 (the default)")
        sets = {BARE: record_observations(fp32, task, env_kwargs, obs_history=obs_history)}
        if sim2real is not None:
            from .envs import without_curricula

            profile = without_curricula(sim2real)  # resolved once: the set's name and the envs it is recorded in
            sets[profile_label(profile)] = record_observations(fp32, task, env_kwargs, obs_history=obs_history,
                                                               sim2real=profile)
    with tempfile.TemporaryDirectory() as work:
        candidate = convert(fp32, Path(work) / f"policy_{precision}.onnx", precision)
        errors = tuple(action_error(fp32, candidate, o, on) for on, o in sets.items())
        error = max(errors, key=lambda e: e.max)
        if error.max > bound and not force:
            raise PrecisionError(
                f"the {precision} model's actions differ from fp32 by up to {error.max:.4f} of the action range "
                f"(mean {error.mean:.5f}, {error.samples} recorded observations: {error.on}), over the bound {bound:g}; "
                f"nothing was written. Export fp32 or fp16 instead, raise the bound with --max-action-error "
                f"if that error is acceptable for this robot, or write it anyway with --force")
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        atomic_write(out, lambda tmp: Path(tmp).write_bytes(candidate.read_bytes()))
    return PrecisionReport(precision, error, bound, errors)


def reduce_run_precision(fp32: str | Path, out: str | Path, run_folder: str | Path, precision: str,
                         bound: float | None = None, force: bool = False) -> PrecisionReport:
    """:func:`reduce_precision` with the observations recorded in ``run_folder``'s task (its ``config.yaml``),
    bare and under the run's sim-to-real profile when it trained under one. A profile that no longer
    resolves (a file gone, an unknown name) is a :class:`PrecisionError` saying so, before anything is recorded."""
    from .deploy_export import run_history, run_task

    found = run_task(Path(run_folder))
    task, env_kwargs = found if found is not None else (None, None)
    return reduce_precision(fp32, out, precision, task, env_kwargs, bound=bound, force=force,
                            obs_history=run_history(Path(run_folder)),
                            sim2real=_profile_to_check_under(Path(run_folder), precision))


def _profile_to_check_under(run_folder: Path, precision: str) -> Profile | None:
    """The run's sim-to-real profile (:func:`~trainers.common.deploy_export.run_profile`), or a
    :class:`PrecisionError` that says it does not resolve and what to do."""
    from .deploy_export import run_profile

    try:
        return run_profile(run_folder)
    except (ValueError, TypeError, OSError) as e:
        raise PrecisionError(f"cannot check the {precision} model under the run's sim-to-real profile: {e}. Restore "
                             f"that profile or correct `sim2real` in {run_folder / 'config.yaml'}, or export fp32 "
                             f"(the default); nothing was written") from None
