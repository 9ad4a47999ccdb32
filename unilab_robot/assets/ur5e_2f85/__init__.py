"""Facts about the UR5e + 2F-85-like gripper scene (table and cube), beside its MJCF.

Names follow MuJoCo Menagerie's ``universal_robots_ur5e`` and ``robotiq_2f85`` so the
grasp task also runs on a user's combined model (``model_path=``) that has them: the
arm joints with one position actuator each, the site ``pinch`` between the pads, the
pad bodies ``left_pad`` / ``right_pad``, the actuator ``fingers_actuator`` (low ctrl
open, high closed), a body ``cube`` with a free joint, and a keyframe ``home`` with
the gripper pointing down.
"""

from pathlib import Path

from unilab_robot.assets.ur5e import JOINT_NAMES, PD_KD, PD_KP  # noqa: F401  (the arm's joints and PD gains)

MJCF_PATH = Path(__file__).with_name("scene.xml")
HOME_KEYFRAME = "home"
PINCH_SITE = "pinch"
PAD_BODIES = ("left_pad", "right_pad")
GRIPPER_ACTUATOR = "fingers_actuator"
OBJECT_BODY = "cube"
#: the table top is the plane z = 0 (the arm stands on it); its extent (m) in x and y
TABLE_TOP_Z = 0.0
TABLE_X = (-0.6, 0.6)
TABLE_Y = (-0.3, 0.9)
