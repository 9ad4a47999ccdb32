"""The height scan's sample grid: plain NumPy, shared by the env (:mod:`.lookup`'s kernels read it)
and the torch- and Numba-free deploy reference (:mod:`unilab_robot.deploy.height_scan`)."""

from __future__ import annotations

import numpy as np


def scan_points(nx: int = 17, ny: int = 11, spacing: float = 0.1) -> np.ndarray:
    """A centred ``nx`` x ``ny`` grid of xy offsets, ``(nx*ny, 2)`` float64, x-major
    (point ``k = i*ny + j`` is ``((i - (nx-1)/2)*spacing, (j - (ny-1)/2)*spacing)``).

    The defaults are legged_gym's 1.6 m x 1.0 m scan (187 points).
    """
    if nx < 1 or ny < 1 or not spacing > 0:
        raise ValueError(f"scan_points needs nx >= 1, ny >= 1 and spacing > 0, got nx={nx}, ny={ny}, "
                         f"spacing={spacing}")
    xs = (np.arange(nx) - 0.5 * (nx - 1)) * spacing
    ys = (np.arange(ny) - 0.5 * (ny - 1)) * spacing
    grid = np.empty((nx, ny, 2), dtype=np.float64)
    grid[:, :, 0] = xs[:, None]
    grid[:, :, 1] = ys[None, :]
    return grid.reshape(nx * ny, 2)
