"""The batched kernels of a locomotion task, composed from the shared pieces.

- ``compute``: after physics, one fused ``prange`` pass per env: :func:`env_quantities`
  (joint sums, gait phase, feet), the reward terms, :func:`finish_env` (termination,
  command resampling), the observation groups' writers; and ``observe``: the observations
  of rows ``ids`` after a reset. Both are generated from the task's reward terms and
  observation groups (:mod:`unilab_envs.locomotion.reward_kernel`).
- :func:`reset_envs`: random starts for rows ``ids`` (already at the keyframe).

Every argument past the env's own outputs is a named record
(:mod:`unilab_envs.locomotion.records`).
Each ``prange`` iteration takes a block of :data:`ROWS_PER_BLOCK` envs and hands it to a
plain ``@njit`` function (not inlined) that loops over them: inside a ``prange`` loop
Numba drops writes made through an array field of a tuple argument (numba/numba#7135,
#10338), while through a function call they land. A block, not an env, per call keeps
the call's cost (the records are passed by value) off the per-env path.

These functions are compiled with ``_nrt=False``: they allocate nothing, and without
Numba's reference counting each read of a record's array field costs no atomic
increment and decrement (with it the kernels ran ~2x slower than with plain array arguments).
"""

from __future__ import annotations

import numba as nb

from unilab_envs.core.prefetch import PREFETCH_DISTANCE, prefetch_row
from unilab_envs.locomotion.base import above_ground, base_state, has_fallen, velocity_errors
from unilab_envs.locomotion.commands import is_moving, resample_due, sample_command
from unilab_envs.locomotion.feet import step_foot
from unilab_envs.locomotion.gait import advance_phase
from unilab_envs.locomotion.ground import base_ground, track_walk
from unilab_envs.locomotion.joints import joint_sums
from unilab_envs.locomotion.precision import phase_sin_cos
from unilab_envs.locomotion.reset import randomize_start

ROWS_PER_BLOCK = 32  # envs per call of a block function


@nb.njit(inline="always", cache=True)
def blocks(n):
    """Number of :data:`ROWS_PER_BLOCK`-env blocks covering ``n`` rows."""
    return (n + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK


@nb.njit(inline="always", cache=True)
def env_quantities(i, physics, robot, legs, ground, params, f32):
    """Env ``i``'s state after physics, before its reward: the gait and the feet advanced one step.

    Returns ``(base, sums, feet, moving, fell, lin_error, yaw_error, sin_phase, cos_phase)``:
    ``base`` is :func:`~unilab_envs.locomotion.base.base_state`'s tuple (height above the
    ground), ``sums`` :func:`~unilab_envs.locomotion.joints.joint_sums`'s, ``feet`` the summed
    ``(air_reward, slip, phase_error)`` of the feet.
    """
    prefetch_row(physics.qpos, i + PREFETCH_DISTANCE)  # qpos / qvel are rows of the batch state, far apart
    prefetch_row(physics.qvel, i + PREFETCH_DISTANCE)
    base = above_ground(base_state(i, physics.qpos, physics.qvel, robot.root_q, robot.root_d), base_ground(i, physics, robot, ground))
    moving = is_moving(legs.command, i)
    sums = joint_sums(i, physics, robot, legs)

    legs.phase[i] = advance_phase(legs.phase[i], params.gait_step)
    phase = legs.phase[i]
    sin_phase, cos_phase = phase_sin_cos(phase, f32)
    air_reward = 0.0
    slip = 0.0
    phase_error = 0.0
    for f in range(robot.foot_ids.shape[0]):
        air, foot_slip, error = step_foot(i, f, physics, robot, legs, params, ground, moving, phase, sin_phase, cos_phase, f32)
        air_reward += air
        slip += foot_slip
        phase_error += error

    fell = has_fallen(base[8], base[9], params)
    lin_error, yaw_error = velocity_errors(legs.command, i, base[0], base[1], base[5])
    return base, sums, (air_reward, slip, phase_error), moving, fell, lin_error, yaw_error, sin_phase, cos_phase


@nb.njit(inline="always", cache=True)
def finish_env(i, terminated, episode_step, rng, physics, robot, legs, ground, params, commands, fell):
    """Env ``i``'s step after its reward: termination, walk tracking, command redraw."""
    terminated[i] = fell
    track_walk(i, physics, robot, ground, legs.command, params.dt)
    if resample_due(episode_step[i], commands):
        sample_command(i, legs.command, rng, commands)


@nb.njit(cache=True)
def reset_envs(ids, rng, physics, robot, legs, reset, commands):
    """Random starts for rows ``ids`` (see :func:`~unilab_envs.locomotion.reset.randomize_start`)."""
    for i in ids:
        randomize_start(i, rng, physics, robot, legs, reset, commands)
