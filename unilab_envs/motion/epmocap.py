"""A reader of ``EPMOCAP1`` files (the ``envpool-assets`` wheel's CMU clips, ``mocap_*.bin``).

Layout (little-endian, read from the bytes and ``mocap.json``)::

    b"EPMOCAP1"  u32 clip_count
    per clip:    u32 len, id (utf-8)   u32 frames   f64 dt   u32 array_count
      per array: u32 len, name (utf-8) u32 width    float32[frames * width] (row-major, frame-major)

The arrays are dm_control's fitted CMU-humanoid states: ``position`` (T, 3) and ``quaternion``
(T, 4, w x y z) of the root, ``joints`` (T, 56) in the CMU humanoid's joint order, plus velocities,
body positions and end-effectors we do not use.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = b"EPMOCAP1"


@dataclass(frozen=True)
class MocapClip:
    """One clip of an ``EPMOCAP1`` file."""

    name: str
    dt: float
    arrays: dict  # name -> (T, width) float32

    @property
    def num_frames(self) -> int:
        return int(self.arrays["joints"].shape[0])


def read_epmocap(path: str | Path) -> dict[str, MocapClip]:
    """Every clip of an ``EPMOCAP1`` file, by id; ``ValueError`` (one line) if the bytes are not one."""
    b = Path(path).read_bytes()
    if b[:8] != MAGIC:
        raise ValueError(f"{path}: not an EPMOCAP1 file (starts with {b[:8]!r})")
    off = 8

    def take(fmt: str):
        nonlocal off
        vals = struct.unpack_from("<" + fmt, b, off)
        off += struct.calcsize("<" + fmt)
        return vals

    def text() -> str:
        nonlocal off
        (n,) = take("I")
        s = b[off:off + n].decode("utf-8")
        off += n
        return s

    clips = {}
    try:
        (count,) = take("I")
        for _ in range(count):
            name = text()
            frames, dt, narr = take("IdI")
            arrays = {}
            for _ in range(narr):
                key = text()
                (width,) = take("I")
                arrays[key] = np.frombuffer(b, np.float32, frames * width, off).reshape(frames, width)
                off += 4 * frames * width
            clips[name] = MocapClip(name, float(dt), arrays)
    except (struct.error, ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: truncated or corrupt EPMOCAP1 file at byte {off} ({e})") from None
    if off != len(b):
        raise ValueError(f"{path}: {len(b) - off} bytes after the last clip")
    return clips
