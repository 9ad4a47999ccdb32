"""Facts about the UR5e-like arm, beside its MJCF.

Names follow MuJoCo Menagerie's ``universal_robots_ur5e`` so a task also runs on
that model (a model without a mocap ``target`` body just shows no marker).
"""

from pathlib import Path

MJCF_PATH = Path(__file__).with_name("ur5e.xml")
BASE_BODY = "base"
JOINT_NAMES = (
    "shoulder_pan_joint",
    "shoulder_lift_joint",
    "elbow_joint",
    "wrist_1_joint",
    "wrist_2_joint",
    "wrist_3_joint",
)
EE_SITE = "attachment_site"
HOME_KEYFRAME = "home"
#: mocap body that shows the reach target (optional in a user's model)
TARGET_BODY = "target"
#: UR5e DH parameters (m): d1, a2, a3, d4, d5, d6
DH = {"d1": 0.1625, "a2": -0.425, "a3": -0.3922, "d4": 0.1333, "d5": 0.0997, "d6": 0.0996}
#: the arm faces +y at home (azimuth pi/2 in the world frame)
FRONT_AZIMUTH = 1.5707963267948966
#: PD gains in JOINT_NAMES order: kp (N m/rad) and kd (N m s/rad) of ur5e.xml's position actuators,
#: the servos a torque-actuated (<motor>) arm is run with (config ``pd_kp`` / ``pd_kd``)
PD_KP = (2000.0, 2000.0, 2000.0, 500.0, 500.0, 500.0)
PD_KD = (150.0, 150.0, 150.0, 25.0, 25.0, 25.0)
