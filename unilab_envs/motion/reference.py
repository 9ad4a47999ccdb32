"""The batched reference of a motion-tracking task: every clip resampled to the control rate, end to end.

The resampling and :class:`MotionReference` live on the robot side,
:mod:`unilab_robot.deploy.motion_reference` (a robot playing a clip resamples it the same way,
without this package), re-exported here; :func:`cached_reference` is the task's once-per-process
copy of them.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from unilab_robot.deploy.motion_reference import (  # noqa: F401 (re-exported)
    MotionReference, lerp_frames, load_reference, resample_clip, resample_times, slerp, slerp_frames,
)

__all__ = ["MotionReference", "cached_reference", "lerp_frames", "load_reference", "resample_clip", "resample_times",
           "slerp", "slerp_frames"]


@lru_cache(maxsize=4)
def cached_reference(paths: tuple[str, ...], model_path: str, rate: float) -> MotionReference:
    """:func:`load_reference` against the MJCF at ``model_path``, once per process (the arrays are shared:
    treat them as read-only)."""
    import mujoco

    reference = load_reference(paths, mujoco.MjModel.from_xml_path(str(model_path)), rate)
    for value in vars(reference).values():
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return reference
