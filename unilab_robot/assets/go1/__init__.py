"""Facts about the Go1-like quadruped, beside its MJCF.

Names follow MuJoCo Menagerie's ``unitree_go1`` so a task also runs on that model.
"""

from pathlib import Path

MJCF_PATH = Path(__file__).with_name("go1.xml")
ROOT_BODY = "trunk"
IMU_SITE = "imu"
LEGS = ("FR", "FL", "RR", "RL")
JOINT_NAMES = tuple(f"{leg}_{part}_joint" for leg in LEGS for part in ("hip", "thigh", "calf"))
FOOT_NAMES = LEGS
HOME_KEYFRAME = "home"
#: diagonal trot pairs: FR+RL in phase, FL+RR half a period later
TROT_PHASE_OFFSETS = (0.0, 3.141592653589793, 3.141592653589793, 0.0)
#: PD gains in JOINT_NAMES order: kp (N m/rad) and kd (N m s/rad) of go1.xml's position actuators,
#: the servos a torque-actuated (<motor>) Go1 model is run with (config ``pd_kp`` / ``pd_kd``)
PD_KP = (35.0,) * 12
PD_KD = (0.5,) * 12
