"""The policy's depth image beside the robot in ``unilab play``'s film and window: a grey inset, near bright, far dark."""

from __future__ import annotations

import numpy as np

INSET_WIDTH_SHARE = 0.3  # of the frame's width
BORDER = 2  # pixels of white around the inset


def depth_to_grey(depth: np.ndarray, near: float, far: float) -> np.ndarray:
    """``uint8`` grey levels of depths (m): 255 at ``near`` down to 0 at ``far`` (and for no data, 0 or less)."""
    share = (np.asarray(depth, dtype=np.float64) - near) / (far - near)
    grey = np.where(depth > 0.0, 255.0 * (1.0 - np.clip(share, 0.0, 1.0)), 0.0)
    return np.rint(grey).astype(np.uint8)


def inset_scale(frame_height: int, frame_width: int, height: int, width: int) -> int:
    """Whole pixels per depth pixel so that the inset is about :data:`INSET_WIDTH_SHARE` of the frame's width
    (and fits its height)."""
    scale = max(1, int(INSET_WIDTH_SHARE * frame_width) // width)
    return min(scale, max(1, (frame_height - 2 * BORDER) // height))


def depth_tile(depth: np.ndarray, height: int, width: int, near: float, far: float, scale: int) -> np.ndarray:
    """The ``height x width`` depth image (row-major, metres) as ``(height * scale, width * scale)`` grey levels."""
    grey = depth_to_grey(np.asarray(depth).reshape(height, width), near, far)
    return np.repeat(np.repeat(grey, scale, axis=0), scale, axis=1)


def with_depth_inset(frame: np.ndarray, depth: np.ndarray, height: int, width: int, near: float, far: float) -> np.ndarray:
    """``frame`` (``(H, W, 3)`` uint8) with the ``height x width`` depth image (row-major, metres) in its top-right
    corner, scaled up by whole pixels to about :data:`INSET_WIDTH_SHARE` of the frame's width."""
    inset = depth_tile(depth, height, width, near, far, inset_scale(frame.shape[0], frame.shape[1], height, width))
    out = frame.copy()
    h, w = inset.shape
    top, left = BORDER, out.shape[1] - w - BORDER
    out[top - BORDER:top + h + BORDER, left - BORDER:left + w + BORDER] = 255
    out[top:top + h, left:left + w] = inset[:, :, None]
    return out


def window_depth_overlay(spec, obs: np.ndarray | None, window_height: int, window_width: int):
    """``(MjrRect, RGB image)`` for ``mujoco.viewer``'s ``set_images``: the depth frame in ``obs`` (the policy's
    last observation) at the window's bottom-right corner (the key help holds the top right), inside a white
    border; ``None`` without a camera or an observation yet."""
    import mujoco

    camera = spec.camera
    if camera is None or obs is None or window_width <= 0 or window_height <= 0:
        return None
    group = next(g for g in spec.observation.groups if g.name == camera.group)
    scale = inset_scale(window_height, window_width, camera.height, camera.width)
    tile = depth_tile(obs[group.start:group.stop], camera.height, camera.width, camera.near, camera.far, scale)
    image = np.full((tile.shape[0] + 2 * BORDER, tile.shape[1] + 2 * BORDER, 3), 255, np.uint8)
    image[BORDER:-BORDER, BORDER:-BORDER] = tile[:, :, None]
    h, w = image.shape[:2]  # MjrRect: left, bottom (OpenGL: from the window's bottom edge), width, height
    return mujoco.MjrRect(max(0, window_width - w), 0, w, h), image
