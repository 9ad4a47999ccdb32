"""Foot terms: contact, air time, slip and the gait-phase clearance error, one foot at a time.

A foot is in contact while its height (z minus ``Robot.foot_offset`` minus the ground
under it, :mod:`unilab_envs.locomotion.ground`) is below
``Params.contact_height``. ``step_foot`` updates the foot's state in place and returns
its contributions to three reward terms:

- ``feet_air_time``: at touchdown, the air time minus its target (clipped to
  ``[0, target]`` when ``Params.clip_air_time``: short steps are not punished);
- ``feet_slip``: squared planar speed of a foot in contact;
- ``feet_phase``: squared error between the foot height and the gait's swing target.
"""

from __future__ import annotations

import numba as nb

from unilab_envs.locomotion.gait import swing_target
from unilab_envs.locomotion.ground import ground_at
from unilab_envs.locomotion.precision import per_dt, shifted_sin


@nb.njit(inline="always", cache=True)
def touchdown_reward(air_time, target, clip):
    """Air-time reward of a foot landing after ``air_time`` s."""
    if clip:
        return max(0.0, min(air_time - target, target))
    return air_time - target


@nb.njit(inline="always", cache=True)
def step_foot(i, f, physics, robot, legs, params, ground, moving, phase, sin_phase, cos_phase, float32_math):
    """Advance foot ``f`` of env ``i`` by one control step; return ``(air_reward, slip, phase_error)``.

    ``float32_math`` is ``params.float32_math``, passed as a compile-time constant by the kernels.
    """
    g = robot.foot_ids[f]
    px, py, pz = physics.foot_xpos[i, g, 0], physics.foot_xpos[i, g, 1], physics.foot_xpos[i, g, 2]
    h = pz - robot.foot_offset - ground_at(ground, px, py)
    legs.foot_height[i, f] = h
    in_contact = h < params.contact_height
    first_contact = in_contact and not legs.contact[i, f] and legs.air_time[i, f] > 0.0
    legs.air_time[i, f] += params.dt
    air_reward = 0.0
    slip = 0.0
    if first_contact:
        air_reward = touchdown_reward(legs.air_time[i, f], params.air_time_target, params.clip_air_time)
    if in_contact:
        legs.air_time[i, f] = 0.0
        fvx = per_dt(px - legs.previous_foot_pos[i, f, 0], params.dt, params.inv_dt, float32_math)
        fvy = per_dt(py - legs.previous_foot_pos[i, f, 1], params.dt, params.inv_dt, float32_math)
        slip = fvx * fvx + fvy * fvy
    legs.contact[i, f] = in_contact
    legs.previous_foot_pos[i, f, 0], legs.previous_foot_pos[i, f, 1], legs.previous_foot_pos[i, f, 2] = px, py, pz
    cs = robot.phase_offsets_cos_sin
    s = shifted_sin(phase, sin_phase, cos_phase, robot.phase_offsets[f], cs[f, 0], cs[f, 1], float32_math)
    target = swing_target(s, moving, params.swing_height)
    return air_reward, slip, (h - target) ** 2


@nb.njit(inline="always", cache=True)
def place_feet(i, physics, robot, legs, ground):
    """After a reset: take the feet's current positions and heights as their last ones."""
    for f in range(robot.foot_ids.shape[0]):
        g = robot.foot_ids[f]
        for d in range(3):
            legs.previous_foot_pos[i, f, d] = physics.foot_xpos[i, g, d]
        x, y = physics.foot_xpos[i, g, 0], physics.foot_xpos[i, g, 1]
        legs.foot_height[i, f] = physics.foot_xpos[i, g, 2] - robot.foot_offset - ground_at(ground, x, y)
