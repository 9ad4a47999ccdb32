"""Writing evaluation videos (MP4 with imageio-ffmpeg, else a GIF)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np


def write_video(frames: list[np.ndarray], path: Path, fps: int) -> Path:
    """Write ``frames`` to ``path``; an ``.mp4`` without an ffmpeg backend becomes a ``.gif``. Returns the path written."""
    import imageio.v2 as imageio

    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".mp4":
        try:
            imageio.mimwrite(path, frames, fps=fps, macro_block_size=1)
            return path
        except Exception as e:  # noqa: BLE001 - no ffmpeg backend
            gif = path.with_suffix(".gif")
            warnings.warn(f"cannot write MP4 ({type(e).__name__}; install imageio-ffmpeg); writing {gif}", stacklevel=2)
            path = gif
    imageio.mimwrite(path, frames, duration=1000.0 / fps, loop=0)
    return path
