"""Reset randomization: where a robot starts an episode, around its keyframe."""

from __future__ import annotations

import math

import numba as nb

from unilab_envs.core.rng import uniform_range
from unilab_envs.locomotion.commands import sample_command


@nb.njit(inline="always", cache=True)
def randomize_start(i, rng, physics, robot, legs, reset, commands):
    """Env ``i`` (already at the keyframe) gets a random start; its task state starts afresh.

    Draws, in this order from env ``i``'s stream: base x, y offsets (+-``xy_range``), a
    yaw in [-pi, pi), each joint's offset from home (+-``joint_range``, clipped to the
    model's range), the base linear velocity (+-``base_velocity`` per axis), the gait
    phase in [0, 2pi) and a command. Feet start in contact with no air time.
    """
    qpos, qvel, rq, rd = physics.qpos, physics.qvel, robot.root_q, robot.root_d
    qpos[i, rq] += uniform_range(rng, i, -reset.xy_range, reset.xy_range)
    qpos[i, rq + 1] += uniform_range(rng, i, -reset.xy_range, reset.xy_range)
    yaw = uniform_range(rng, i, -math.pi, math.pi)
    qpos[i, rq + 3] = math.cos(0.5 * yaw)
    qpos[i, rq + 4] = 0.0
    qpos[i, rq + 5] = 0.0
    qpos[i, rq + 6] = math.sin(0.5 * yaw)
    for j in range(robot.joint_q.shape[0]):
        value = robot.home[j] + uniform_range(rng, i, -reset.joint_range, reset.joint_range)
        qpos[i, robot.joint_q[j]] = min(max(value, robot.hard_low[j]), robot.hard_high[j])
    for d in range(3):
        qvel[i, rd + d] = uniform_range(rng, i, -reset.base_velocity, reset.base_velocity)
    for j in range(robot.joint_q.shape[0]):
        legs.last_action[i, j] = 0.0
        legs.previous_action[i, j] = 0.0
    legs.phase[i] = uniform_range(rng, i, 0.0, 2.0 * math.pi)
    for f in range(robot.foot_ids.shape[0]):
        legs.contact[i, f] = True
        legs.air_time[i, f] = 0.0
        legs.foot_height[i, f] = 0.0
        for d in range(3):
            legs.previous_foot_pos[i, f, d] = 0.0
    sample_command(i, legs.command, rng, commands)
