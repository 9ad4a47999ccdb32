"""Saving and restoring the state of a batched env: the protocol behind exact resume.

Every stateful layer (the base env, its task, each sim-to-real wrapper) offers::

    state = env.get_state()   # a dict of NumPy arrays and plain values (nested per layer)
    env.set_state(state)      # write it back into an env built the same way

A state holds copies, never views, and round-trips through ``torch.save`` /
``torch.load(weights_only=True)`` once its arrays are turned into tensors
(``trainers.common.checkpoint.to_tensors``). ``set_state`` writes into the live
arrays in place, so kernels and views that hold them stay valid; it raises
:class:`StateError` when the state was saved from a different task, number of envs
or wrapper stack.

The helpers here do the copying and the checking for the layers.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import mujoco
import mujoco.batch
import numpy as np

__all__ = ["StateError", "copy_attributes", "restore_attributes", "batch_state", "restore_batch_state"]

#: model fields whose derived constants ``mj_setConst`` recomputes
_SETCONST_INPUTS = frozenset(mujoco.MjModel._setconst_inputs)


class StateError(ValueError):
    """A saved env state that does not fit the env it is loaded into."""


def copy_attributes(owner: Any, names: Iterable[str]) -> dict[str, Any]:
    """``{name: copy of owner.name}`` for arrays, ``{name: value}`` for plain bools and ints."""
    out: dict[str, Any] = {}
    for name in names:
        value = getattr(owner, name)
        out[name] = value.copy() if isinstance(value, np.ndarray) else value
    return out


def restore_attributes(owner: Any, names: Iterable[str], saved: Mapping[str, Any], what: str) -> None:
    """Write ``saved[name]`` into ``owner.name`` for each name (arrays in place).

    Raises :class:`StateError` naming ``what`` when a name is missing or an array's
    shape differs (the state came from another configuration).
    """
    names = tuple(names)
    missing = [n for n in names if n not in saved]
    if missing:
        raise StateError(f"{what}: the saved state lacks {', '.join(missing)}; it was saved from a differently "
                         "configured env (build the env as it was when the state was saved)")
    for name in names:
        live, value = getattr(owner, name), saved[name]
        if isinstance(live, np.ndarray):
            value = np.asarray(value)
            if value.shape != live.shape:
                raise StateError(f"{what}: {name} has shape {value.shape} in the saved state but {live.shape} in this "
                                 "env (another number of envs or another configuration)")
            live[...] = value
        else:
            setattr(owner, name, type(live)(value))


def batch_state(batch: mujoco.batch.Batch) -> dict[str, Any]:
    """Every simulation's integration state, warning counters and per-simulation model fields.

    ``state``: the ``(N, nstate)`` mjSTATE_INTEGRATION rows (time, qpos, qvel, act,
    warm start, ctrl, applied forces, mocap, ...), which determine the next step
    bit-exactly. ``model``: the fields that ``Batch.expand`` made per-simulation (what
    domain randomization wrote).
    """
    model = {}
    for name in mujoco.batch.MODEL_FIELDS:
        values = batch.expanded(name)
        if values is not None:
            model[name] = np.array(values)
    return {"state": batch.state.copy(), "warning": batch.warning.copy(), "model": model}


def restore_batch_state(batch: mujoco.batch.Batch, saved: Mapping[str, Any]) -> None:
    """Inverse of :func:`batch_state` on a batch of the same model and size."""
    rows = np.asarray(saved["state"])
    if rows.shape != batch.state.shape:
        raise StateError(f"physics state has shape {rows.shape} in the saved state but {batch.state.shape} in this env "
                         "(another model or number of envs)")
    batch.state[...] = rows
    batch.warning[...] = np.asarray(saved["warning"])
    model = saved.get("model", {})
    for name, values in model.items():
        batch.expand(name)[...] = np.asarray(values)
    if _SETCONST_INPUTS.intersection(model):
        batch.set_const()  # derived constants (subtree masses, invweights) follow the restored fields
