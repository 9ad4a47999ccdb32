"""The policy's depth image beside the robot in ``unilab play``'s film: a grey inset, near bright, far dark."""

from __future__ import annotations

import numpy as np

INSET_WIDTH_SHARE = 0.3  # of the frame's width
BORDER = 2  # pixels of white around the inset


def depth_to_grey(depth: np.ndarray, near: float, far: float) -> np.ndarray:
    """``uint8`` grey levels of depths (m): 255 at ``near`` down to 0 at ``far`` (and for no data, 0 or less)."""
    share = (np.asarray(depth, dtype=np.float64) - near) / (far - near)
    grey = np.where(depth > 0.0, 255.0 * (1.0 - np.clip(share, 0.0, 1.0)), 0.0)
    return np.rint(grey).astype(np.uint8)


def with_depth_inset(frame: np.ndarray, depth: np.ndarray, height: int, width: int, near: float, far: float) -> np.ndarray:
    """``frame`` (``(H, W, 3)`` uint8) with the ``height x width`` depth image (row-major, metres) in its top-right
    corner, scaled up by whole pixels to about :data:`INSET_WIDTH_SHARE` of the frame's width."""
    grey = depth_to_grey(np.asarray(depth).reshape(height, width), near, far)
    scale = max(1, int(INSET_WIDTH_SHARE * frame.shape[1]) // width)
    scale = min(scale, max(1, (frame.shape[0] - 2 * BORDER) // height))
    inset = np.repeat(np.repeat(grey, scale, axis=0), scale, axis=1)
    out = frame.copy()
    h, w = inset.shape
    top, left = BORDER, out.shape[1] - w - BORDER
    out[top - BORDER:top + h + BORDER, left - BORDER:left + w + BORDER] = 255
    out[top:top + h, left:left + w] = inset[:, :, None]
    return out
