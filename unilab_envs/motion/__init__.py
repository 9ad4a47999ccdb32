"""Reference motions for the G1: the motion file format, CMU retargeting, kinematic playback.

- :mod:`unilab_envs.motion.format`: the ``.npz`` layout of the BeyondMimic / mjlab family
  (``fps``, ``joint_pos`` ... ``body_ang_vel_w``, plus joint and body names), its writer and a
  loader that checks the names against a model (docs/motion.md); it lives on the robot side
  (:mod:`unilab_robot.deploy.motion_file`), as does the resampling (:mod:`unilab_envs.motion.reference`).
- :mod:`unilab_envs.motion.clips`: the retargeted CMU clips shipped in ``assets/motions``.
- :mod:`unilab_envs.motion.playback`: a clip's ``joint_pos`` stepped through a MuJoCo model kinematically.
- :mod:`unilab_envs.motion.retarget`: CMU humanoid -> G1 (needs the ``motion`` extra's wheel, only there).
"""

from unilab_envs.motion.format import MotionClip, MotionFormatError, load_motion, save_motion

__all__ = ["MotionClip", "MotionFormatError", "load_motion", "save_motion"]
