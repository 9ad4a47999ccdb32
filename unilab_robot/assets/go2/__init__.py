"""Facts about the Go2-like quadruped, beside its MJCF (sources in go2.xml's header).

Names follow MuJoCo Menagerie's ``unitree_go2`` so a task also runs on that model. The joint
order is Unitree's SDK motor order for the Go2 (``FR_0 .. RL_2``: legs FR, FL, RR, RL, each
hip, thigh, calf), the order of ``unilab_robot.motors.GO2_12``.
"""

from pathlib import Path

MJCF_PATH = Path(__file__).with_name("go2.xml")
ROOT_BODY = "base"
IMU_SITE = "imu"
LEGS = ("FR", "FL", "RR", "RL")
JOINT_NAMES = tuple(f"{leg}_{part}_joint" for leg in LEGS for part in ("hip", "thigh", "calf"))
FOOT_NAMES = LEGS
HOME_KEYFRAME = "home"
#: diagonal trot pairs: FR+RL in phase, FL+RR half a period later
TROT_PHASE_OFFSETS = (0.0, 3.141592653589793, 3.141592653589793, 0.0)
#: PD gains in JOINT_NAMES order: kp (N m/rad) and kd (N m s/rad) of go2.xml's position actuators,
#: the servos a torque-actuated (<motor>) Go2 model is run with (config ``pd_kp`` / ``pd_kd``)
PD_KP = (35.0,) * 12
PD_KD = (0.5,) * 12
#: torque limits (N m) in JOINT_NAMES order: hip and thigh 23.7, calf 45.43 (go2.xml's forcerange)
TORQUE_LIMITS = (23.7, 23.7, 45.43) * 4
#: joint speed limits (rad/s) in JOINT_NAMES order, the URDF's: hip and thigh 30.1, calf 15.7.
#: Facts for the robot side; the position servos of go2.xml do not enforce them.
JOINT_SPEED_LIMITS = (30.1, 30.1, 15.7) * 4
