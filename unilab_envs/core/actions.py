"""Validation of an action batch, shared by the envs and the action wrappers."""

from __future__ import annotations

from typing import Any

import numpy as np


def validate_actions(actions: Any, expected_shape: tuple[int, int]) -> np.ndarray:
    """Return ``actions`` as a C-contiguous float32 ``expected_shape`` array, or raise.

    Raises ``ValueError`` for a wrong shape or NaN/inf entries (naming the env
    rows) and ``TypeError`` for a non-float dtype. A float32 C-contiguous array
    of the right shape passes without a copy.
    """
    if not (type(actions) is np.ndarray and actions.dtype == np.float32 and actions.shape == expected_shape and actions.flags.c_contiguous):
        actions = np.asarray(actions)
        if actions.shape != expected_shape:
            raise ValueError(f"actions must have shape {expected_shape} (num_envs, action size), got {actions.shape}")
        if not np.issubdtype(actions.dtype, np.floating):
            raise TypeError(f"actions must be floating point (float32 preferred), got dtype {actions.dtype}")
        actions = np.ascontiguousarray(actions, dtype=np.float32)
    if not np.isfinite(actions).all():
        rows = np.flatnonzero(~np.isfinite(actions).all(axis=1))
        raise ValueError(
            f"actions contain NaN or inf in envs {rows[:8].tolist()}{' ...' if rows.size > 8 else ''}; "
            "check the policy output (a diverged network or a missing clip) before stepping"
        )
    return actions
