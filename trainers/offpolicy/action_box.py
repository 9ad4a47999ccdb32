"""The off-policy learner's actions live in ``[-1, 1]``; the env's in its action box ``[low, high]`` (pure maps).

Arithmetic only, so the same maps serve NumPy arrays (the runner) and torch tensors (the exported actor).
"""

from __future__ import annotations

import numpy as np


def to_box(action: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The learner's action in ``[-1, 1]`` as the env's action box ``[low, high]``."""
    return low + (action + 1.0) * 0.5 * (high - low)


def to_unit(action: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """An action in the env's box ``[low, high]`` as the learner's ``[-1, 1]`` (the inverse of :func:`to_box`)."""
    return 2.0 * (action - low) / (high - low) - 1.0
