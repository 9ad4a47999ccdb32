"""The locomotion layer's observation groups: each one's writer, robot-side builder, units and noise.

A legged task lists them by name or as :class:`~unilab_envs.core.obs_groups.ObsGroup`s (its
own among them) in ``policy_groups`` / ``privileged_groups``; the step and observe kernels
write them through these writers (:mod:`unilab_envs.locomotion.observation_kernel`). A writer
reads the quantities of :data:`~unilab_envs.locomotion.observation_kernel.QUANTITIES`. Sizes
named ``"joints"``, ``"feet"``, ``"scan_points"`` and ``"camera_pixels"`` are the robot's joint and
foot counts, the terrain's scan grid and the depth camera's pixels (``depth`` is an image group:
its shape, ``(1, height, width)``, comes from the task's camera config). The default noise scales are MuJoCo Playground's Go1 joystick
``noise_config`` (uniform half-widths, the sim-to-real profiles' ``observation_noise``).
"""

from __future__ import annotations

import numba as nb

from unilab_envs.core.obs_groups import ObsGroup, register_obs_group
from unilab_robot.deploy.reference import GROUP_BUILDERS
from unilab_envs.locomotion.ground import heading
from unilab_envs.terrain.lookup import scan_heights

LAYER = "locomotion"


@nb.njit(inline="always", cache=True)
def write_linvel(out, vx, vy, vz):
    out[0], out[1], out[2] = vx, vy, vz


@nb.njit(inline="always", cache=True)
def write_gyro(out, wx, wy, wz):
    out[0], out[1], out[2] = wx, wy, wz


@nb.njit(inline="always", cache=True)
def write_gravity(out, gx, gy, gz):
    out[0], out[1], out[2] = gx, gy, gz


@nb.njit(inline="always", cache=True)
def write_joint_pos(out, i, physics, robot):
    for j in range(out.shape[0]):
        out[j] = physics.qpos[i, robot.joint_q[j]] - robot.home[j]


@nb.njit(inline="always", cache=True)
def write_joint_vel(out, i, physics, robot):
    for j in range(out.shape[0]):
        out[j] = physics.qvel[i, robot.joint_d[j]]


@nb.njit(inline="always", cache=True)
def write_last_action(out, i, legs):
    for j in range(out.shape[0]):
        out[j] = legs.last_action[i, j]


@nb.njit(inline="always", cache=True)
def write_command(out, i, legs):
    out[0], out[1], out[2] = legs.command[i, 0], legs.command[i, 1], legs.command[i, 2]


@nb.njit(inline="always", cache=True)
def write_phase(out, sin_phase, cos_phase):
    out[0], out[1] = sin_phase, cos_phase


@nb.njit(inline="always", cache=True)
def write_height(out, height):
    out[0] = height


@nb.njit(inline="always", cache=True)
def write_foot_contact(out, i, legs):
    for f in range(out.shape[0]):
        out[f] = 1.0 if legs.contact[i, f] else 0.0


@nb.njit(inline="always", cache=True)
def write_foot_air_time(out, i, legs):
    for f in range(out.shape[0]):
        out[f] = legs.air_time[i, f]


@nb.njit(inline="always", cache=True)
def write_foot_height(out, i, legs):
    for f in range(out.shape[0]):
        out[f] = legs.foot_height[i, f]


@nb.njit(inline="always", cache=True)
def write_actuator_force(out, i, physics, robot):
    for j in range(out.shape[0]):
        out[j] = physics.actuator_force[i, robot.actuator_ids[j]]


@nb.njit(inline="always", cache=True)
def write_height_scan(out, i, physics, robot, ground):
    """Base z minus the ground at each scan point (turned with the base's heading)."""
    rq = robot.root_q
    qpos = physics.qpos
    c, s = heading(qpos[i, rq + 3], qpos[i, rq + 4], qpos[i, rq + 5], qpos[i, rq + 6])
    scan_heights(out, ground, qpos[i, rq], qpos[i, rq + 1], qpos[i, rq + 2], c, s, ground.scan_points)


@nb.njit(inline="always", cache=True)
def write_depth(out, i, ground):
    """The depth camera's latest frame (the task renders it before the kernel runs)."""
    for k in range(out.shape[0]):
        out[k] = ground.depth_image[i, k]


def _group(name, size, units, doc, writer, noise=None, mirror=None):
    return register_obs_group(LAYER, ObsGroup(name, size, units, doc, writer, GROUP_BUILDERS.get(name), noise,
                                              mirror=mirror))


VECTOR, PSEUDOVECTOR = (1.0, -1.0, 1.0), (-1.0, 1.0, -1.0)  # the reflection y -> -y on a vector, an angular velocity


LINVEL = _group("linvel", 3, "m/s", "base linear velocity, base frame", write_linvel, noise=0.1, mirror=VECTOR)
GYRO = _group("gyro", 3, "rad/s", "base angular velocity, base frame", write_gyro, noise=0.2, mirror=PSEUDOVECTOR)
GRAVITY = _group("gravity", 3, "1", "unit gravity direction (0, 0, -1) seen in the base frame", write_gravity, noise=0.05, mirror=VECTOR)
JOINT_POS = _group("joint_pos", "joints", "rad", "joint angles minus action.home, in action.joint_names order", write_joint_pos,
                   noise=0.03, mirror="joints")
JOINT_VEL = _group("joint_vel", "joints", "rad/s", "joint velocities, in action.joint_names order", write_joint_vel, noise=1.5, mirror="joints")
LAST_ACTION = _group("last_action", "joints", "1", "the previous action, clipped to action.clip", write_last_action, mirror="joints")
COMMAND = _group("command", 3, "m/s, m/s, rad/s", "the velocity command (vx, vy, yaw_rate), base frame", write_command,
                 mirror=(1.0, -1.0, -1.0))
PHASE = _group("phase", 2, "1", "sin, cos of the gait phase (gait.frequency)", write_phase, mirror="phase")
HEIGHT = _group("height", 1, "m", "base height above the ground under it", write_height, mirror="invariant")
FOOT_CONTACT = _group("foot_contact", "feet", "1", "1 where a foot touches the ground, else 0", write_foot_contact, mirror="feet")
FOOT_AIR_TIME = _group("foot_air_time", "feet", "s", "time each foot has been off the ground", write_foot_air_time,
                       mirror="feet")
FOOT_HEIGHT = _group("foot_height", "feet", "m", "each foot's height above the ground under it", write_foot_height, mirror="feet")
ACTUATOR_FORCE = _group("actuator_force", "joints", "N m", "actuator torques, in action.joint_names order", write_actuator_force,
                        mirror="joints")
HEIGHT_SCAN = _group("height_scan", "scan_points", "m", "base z minus the ground height at each point of terrain.height_scan's "
                     "grid (turned with the base's heading), x-major", write_height_scan)
DEPTH = _group("depth", "camera_pixels", "m", "the depth camera's latest frame (its intrinsics, pose, rate and range: the "
               "spec's camera section), row-major from the top-left pixel; depth along the optical axis, clipped to "
               "[near, far], far where nothing is in range", write_depth)

#: a legged joystick policy's groups, in the order of the bundled tasks
POLICY_GROUPS = (LINVEL, GYRO, GRAVITY, JOINT_POS, JOINT_VEL, LAST_ACTION, COMMAND, PHASE)
