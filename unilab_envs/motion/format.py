"""The motion file (``.npz``, the BeyondMimic / mjlab layout): its reader, writer and name checks.

They live on the robot side, :mod:`unilab_robot.deploy.motion_file` (a robot playing a clip loads
it with NumPy, without this package), and are re-exported here under their old names; the layout
table is in that module's docstring and in docs/motion.md.
"""

from unilab_robot.deploy.motion_file import (  # noqa: F401 (re-exported)
    ARRAY_KEYS, NAME_KEYS, MotionClip, MotionFormatError, fit_to_model, load_motion, make_clip, model_names,
    save_motion,
)

__all__ = ["ARRAY_KEYS", "NAME_KEYS", "MotionClip", "MotionFormatError", "fit_to_model", "load_motion", "make_clip",
           "model_names", "save_motion"]
