"""Facts about the G1-like humanoid, beside its MJCF.

Names follow MuJoCo Menagerie's ``unitree_g1`` (29 dof) so a task also runs on a
Menagerie-style model with the same joint names, root body, IMU site, foot
sites and ``stand`` keyframe.
"""

from pathlib import Path

MJCF_PATH = Path(__file__).with_name("g1.xml")
ROOT_BODY = "pelvis"
IMU_SITE = "imu_in_pelvis"
STAND_KEYFRAME = "stand"

LEG_JOINTS = ("hip_pitch", "hip_roll", "hip_yaw", "knee", "ankle_pitch", "ankle_roll")
WAIST_JOINTS = ("waist_yaw", "waist_roll", "waist_pitch")
ARM_JOINTS = ("shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow", "wrist_roll", "wrist_pitch", "wrist_yaw")

#: the 29 actuated joints, in actuator order: left leg, right leg, waist, left arm, right arm
JOINT_NAMES = (
    tuple(f"left_{j}_joint" for j in LEG_JOINTS)
    + tuple(f"right_{j}_joint" for j in LEG_JOINTS)
    + tuple(f"{j}_joint" for j in WAIST_JOINTS)
    + tuple(f"left_{j}_joint" for j in ARM_JOINTS)
    + tuple(f"right_{j}_joint" for j in ARM_JOINTS)
)
NUM_JOINTS = len(JOINT_NAMES)  # 29

#: standing pose (rad) in JOINT_NAMES order; the ``stand`` keyframe holds the same values
_LEG_STAND = (-0.1, 0.0, 0.0, 0.25, -0.15, 0.0)
STAND_POSE = (
    _LEG_STAND
    + _LEG_STAND
    + (0.0, 0.0, 0.0)
    + (0.2, 0.2, 0.0, 1.28, 0.0, 0.0, 0.0)
    + (0.2, -0.2, 0.0, 1.28, 0.0, 0.0, 0.0)
)
STAND_HEIGHT = 0.788  # pelvis height (m) with the soles on the floor

#: sites at the sole centres, (left, right)
FOOT_SITES = ("left_foot", "right_foot")
#: collision geoms of the feet, (left, right)
FOOT_GEOMS = ("left_foot", "right_foot")
#: a walking gait: the feet half a period apart
WALK_PHASE_OFFSETS = (0.0, 3.141592653589793)

#: weights of the pose-deviation term: legs free to move in pitch, waist and arms held near the pose
POSE_WEIGHTS = (
    (0.01, 1.0, 1.0, 0.01, 0.1, 1.0) * 2
    + (1.0, 1.0, 1.0)
    + (0.5, 1.0, 1.0, 0.5, 1.0, 1.0, 1.0) * 2
)

#: PD gains in JOINT_NAMES order: kp (N m/rad) and kd (N m s/rad) of g1.xml's position actuators,
#: the servos a torque-actuated (<motor>) G1 model is run with (config ``pd_kp`` / ``pd_kd``)
_LEG_KP, _LEG_KD = (150.0, 150.0, 150.0, 250.0, 300.0, 100.0), (3.0, 3.0, 3.0, 5.0, 4.0, 2.0)
_ARM_KP, _ARM_KD = (40.0, 40.0, 40.0, 40.0, 20.0, 20.0, 20.0), (1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5)
PD_KP = _LEG_KP * 2 + (75.0, 75.0, 75.0) + _ARM_KP * 2
PD_KD = _LEG_KD * 2 + (2.0, 2.0, 2.0) + _ARM_KD * 2
