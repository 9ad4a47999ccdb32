"""Choosing MuJoCo's OpenGL backend on a machine without a display.

``MUJOCO_GL`` must be set before ``mujoco`` is imported, and a backend whose
library is missing makes ``import mujoco`` itself fail, so we only pick one
that can load: EGL (GPU drivers or Mesa's ``libegl1``), else OSMesa
(``libosmesa6``, software), else none (rendering then raises when used).
"""

from __future__ import annotations

import ctypes.util


def headless_gl_backend() -> str | None:
    """``"egl"``, ``"osmesa"`` or ``None``: the first whose library this machine has."""
    if ctypes.util.find_library("EGL"):
        return "egl"
    if ctypes.util.find_library("OSMesa"):
        return "osmesa"
    return None
