"""Evaluation videos, for both evaluators: frames collected with a progress bar, written atomically.

Rendering is the slow part of a filmed evaluation (MuJoCo's software renderer takes a
few tenths of a second per 480x360 frame on a CPU machine, so a 1000-step Go1 episode
takes minutes): :class:`VideoRecorder` shows a ``tqdm`` bar while it films, and
:func:`write_video` writes to a temp file in the same folder, then ``os.replace``\\ s it,
so an interrupted or failed write never leaves a partial or empty video behind.

Filming is opt-in (``--video [PATH]`` on ``unilab eval`` and ``unilab play``). A bare
``--video`` writes :func:`default_video_path`: ``runs/<command>/<name>.mp4`` under the
working directory, never into the run or policy folder being evaluated (a shipped
``policies/*`` folder stays as shipped).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

from .atomic import atomic_write


#: where a bare ``--video`` writes, under the working directory: ``runs/eval/<name>.mp4``, ``runs/play/...``
DEFAULT_VIDEO_ROOT = Path("runs")


def default_video_path(command: str, folder: str | Path) -> Path:
    """``runs/<command>/<folder's name>.mp4`` (``.gif`` without imageio-ffmpeg), for a bare ``--video``.

    ``folder`` is the run or policy folder being evaluated; the video is named after it
    but written under :data:`DEFAULT_VIDEO_ROOT`, so filming never adds files to it.
    """
    name = Path(folder).resolve().name or "video"
    return DEFAULT_VIDEO_ROOT / command / f"{name}.{_video_extension()}"


def _video_extension() -> str:
    """``mp4`` when imageio-ffmpeg is installed, else ``gif``."""
    try:
        import imageio_ffmpeg  # noqa: F401
    except ImportError:
        return "gif"
    return "mp4"


def write_video(frames: list[np.ndarray], path: Path, fps: int) -> Path:
    """Write ``frames`` to ``path`` atomically; an ``.mp4`` without an ffmpeg backend becomes a ``.gif``.

    Returns the path written. On any failure (or Ctrl-C) the temp file is removed and
    ``path`` is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".mp4":
        try:
            return _atomic_mimwrite(path, frames, fps=fps, macro_block_size=1)
        except Exception as e:  # noqa: BLE001 - no ffmpeg backend
            gif = path.with_suffix(".gif")
            warnings.warn(f"cannot write MP4 ({type(e).__name__}; install imageio-ffmpeg); writing {gif}", stacklevel=2)
            path = gif
    return _atomic_mimwrite(path, frames, duration=1000.0 / fps, loop=0)


def _atomic_mimwrite(path: Path, frames: list[np.ndarray], **kwargs) -> Path:
    """``imageio.mimwrite`` to a temp file beside ``path`` (same extension, so imageio picks the format)."""
    import imageio.v2 as imageio

    return atomic_write(path, lambda tmp: imageio.mimwrite(tmp, frames, **kwargs))


class VideoRecorder:
    """Frames of one filmed episode, with a progress bar on stderr; :meth:`write` saves them.

    ``recorder.add(env.render())`` appends a frame (a batched render's first image is
    taken) until ``max_frames``; :attr:`full` says when to stop filming.
    """

    def __init__(self, path: str | Path, fps: int, max_frames: int = 1000, progress: bool = True) -> None:
        self.path, self.fps, self.max_frames, self.progress = Path(path), int(fps), int(max_frames), progress
        self.frames: list[np.ndarray] = []
        self._bar = None  # made at the first frame: an evaluation may step a while before it films

    @property
    def full(self) -> bool:
        """Whether ``max_frames`` frames are held."""
        return len(self.frames) >= self.max_frames

    def add(self, render) -> None:
        """Append one rendered frame (an image, or the first image of a batched render)."""
        if self.full:
            return
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(total=self.max_frames, desc=f"filming {self.path.name}", unit="frame",
                             file=sys.stderr, disable=not self.progress, leave=False, dynamic_ncols=True)
        self.frames.append(as_frame(render))
        self._bar.update(1)

    def write(self) -> Path | None:
        """Close the bar and write the video (``None`` when no frame was filmed)."""
        self.close()
        if not self.frames:
            return None
        if self.progress:
            print(f"writing {self.path} ({len(self.frames)} frames)", file=sys.stderr, flush=True)
        return write_video(self.frames, self.path, self.fps)

    def close(self) -> None:
        """Close the progress bar without writing (an evaluation that failed); its last state
        counts every frame filmed (tqdm skips redraws closer than its ``mininterval``)."""
        if self._bar is not None:
            self._bar.refresh()
            self._bar.close()


def as_frame(render) -> np.ndarray:
    """One ``uint8`` image from ``env.render()`` (a vector env may return a list or a batch)."""
    if isinstance(render, (list, tuple)):
        render = render[0]
    render = np.asarray(render)
    if render.ndim == 4:
        render = render[0]
    return render.astype(np.uint8)
