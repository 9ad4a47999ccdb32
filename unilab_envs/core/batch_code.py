"""One compiled kernel for one env and for a batch: one env runs the code a batch runs.

MuJoCo's batch hands the tasks strided row views of its state (``batch.bind("qpos")``). With two or
more rows NumPy flags such a view non-contiguous and Numba types it ``array(float64, 2d, A)``. With
one row (one env: ``gym.make``, ``num_envs=1``) NumPy flags the same view C-contiguous (the stride of
a one-long axis is never checked), Numba types it ``array(float64, 2d, C)``, and would compile and
cache every kernel a second time for it.

:func:`batch_type` is the type an argument has in a batch: a one-row array over MuJoCo's batch typed
as the same view with more rows (its rows one row of the batch's buffer apart; its own strides cannot
say it: a view of a state field with more than one axis per env is reshaped to the strides of a
contiguous array), in tuples and named tuples too; everything else as Numba types it. So a state
field (``qpos``, ``ctrl``, ``mocap_pos``) is ``A`` for one env as in a batch, and an output field
(``xpos``, ``actuator_force``: contiguous rows) ``C`` in both.

:func:`share_batch_code` compiles a kernel for the batch types of a call's arguments (a load when
Numba's cache has them) and registers that code for the arguments' own types, so this call and every
later one with those types runs it with no compile of its own: code built for any strides, fed the
same values. A batch's arguments already have their batch types, so a batch runs exactly what it ran
before. :func:`batch_kernel` does it at a kernel's first call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numba
import numpy as np
from numba.core import types


def batch_type(value: Any) -> types.Type:
    """Numba's type of ``value`` as an argument, a one-row view of MuJoCo's batch typed as it is with
    more rows (:func:`batch_rows`)."""
    if isinstance(value, tuple):  # as Numba types a tuple or named tuple: from its elements' types
        return types.BaseTuple.from_types([batch_type(v) for v in value], type(value))
    rows = batch_rows(value)
    return numba.typeof(value if rows is None else rows)


def batch_rows(value: Any) -> np.ndarray | None:
    """A two-row view (to type, never to read) of ``value`` when it is a one-row array over MuJoCo's
    batch (``batch.bind``: the first axis is the env's, its rows a row of the batch's buffer apart);
    ``None`` for anything else."""
    if not isinstance(value, np.ndarray) or value.ndim == 0 or value.shape[0] != 1:
        return None
    buffer = value
    while isinstance(buffer.base, np.ndarray):
        buffer = buffer.base
    if type(buffer.base).__module__.partition(".")[0] != "mujoco":
        return None
    return np.lib.stride_tricks.as_strided(value, (2, *value.shape[1:]), (buffer.strides[0], *value.strides[1:]))


def share_batch_code(dispatcher, args: Sequence[Any]) -> None:
    """Make ``dispatcher(*args)`` run the code compiled for the batch types of ``args`` (see the module
    docstring); nothing when they are their own batch types or the dispatcher has code for them already."""
    own = tuple(numba.typeof(a) for a in args)
    batch = tuple(batch_type(a) for a in args)
    if batch == own or own in dispatcher.overloads:
        return
    dispatcher.compile(batch)
    code = dispatcher.overloads[batch]
    dispatcher.add_overload(code._replace(signature=code.signature.replace(args=own)))


def batch_kernel(dispatcher) -> Callable:
    """``dispatcher`` (a Numba kernel called from Python) whose first call shares a batch's code
    (:func:`share_batch_code`); later calls go straight to it. Make one per task: its arguments keep their types."""
    first = True

    def call(*args):
        nonlocal first
        if first:
            share_batch_code(dispatcher, args)
            first = False
        return dispatcher(*args)

    call.__doc__ = dispatcher.__doc__
    return call


def compiled_codes(dispatcher) -> int:
    """How many specializations ``dispatcher`` compiled or loaded (code shared by :func:`share_batch_code`
    counts once)."""
    return len({id(code.entry_point) for code in dispatcher.overloads.values()})
