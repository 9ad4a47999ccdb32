"""The pre-refactor locomotion step kernel, kept only as ``benchmarks/reward_terms_ratio.py``'s reference.

Before the reward was generated from named terms (:mod:`unilab_envs.locomotion.reward_kernel`),
a legged task's ``compute`` was one hand-fused Numba kernel with its 17 reward columns
written out in ``write_rewards``. The four functions below are verbatim copies of
``compute``, ``step_block`` and ``step_env`` from ``unilab_envs/locomotion/kernels.py``
and ``write_rewards`` from ``unilab_envs/locomotion/rewards.py`` at commit 72bbc56; the
helpers they call are imported from the package (base state, feet, gait, ground, precision),
where they are unchanged, or from ``benchmarks/legacy_observation.py`` (joint sums and the
observation writers, since moved onto declared groups). Nothing in the package uses this
module: do not extend it, and delete it with the benchmark.

``compute(obs, privileged_obs, reward_terms, reward, terminated, episode_step, rng,
layout, physics, robot, legs, ground, params, commands, weights)`` takes a
``LocomotionTask``'s records and its ``(17,)`` weights (the built-in terms only).
"""

from __future__ import annotations

import numba as nb

from unilab_envs.core.prefetch import PREFETCH_DISTANCE, prefetch_row
from unilab_envs.locomotion.base import above_ground, base_state, has_fallen, velocity_errors
from unilab_envs.locomotion.commands import is_moving, resample_due, sample_command
from unilab_envs.locomotion.feet import step_foot
from unilab_envs.locomotion.gait import advance_phase
from unilab_envs.locomotion.ground import base_ground, track_walk
from unilab_envs.locomotion.kernels import ROWS_PER_BLOCK, blocks
from unilab_envs.locomotion.precision import exp_kernel, phase_sin_cos, weighted_square

from benchmarks.legacy_observation import joint_sums, write_base_obs, write_height_scan


# --- 72bbc56:unilab_envs/locomotion/rewards.py -----------------------------------------------
@nb.njit(inline="always", cache=True)
def write_rewards(i, reward_terms, reward, weights, clip_scale, params, base, lin_error, yaw_error, sums, feet, moving, fell, f32):
    """Weigh env ``i``'s term values into ``reward_terms[i]`` and ``reward[i]`` (see the module docstring).

    ``sums`` is :func:`~unilab_envs.locomotion.joints.joint_sums`'s tuple, ``feet`` the
    summed ``(air_reward, slip, phase_error)`` of the feet; ``clip_scale`` is
    ``weights[-1] / dt``; ``f32`` is ``params.float32_math``, passed as a compile-time constant.
    """
    _, _, vz, wx, wy, _, gx, gy, _, height = base
    torque_sq, action_rate, pose, deviation, limits = sums
    air_reward, slip, phase_error = feet
    t0 = weights[0] * exp_kernel(lin_error, params.tracking_sigma, params.inv_tracking_sigma, f32)
    t1 = weights[1] * exp_kernel(yaw_error, params.yaw_tracking_sigma, params.inv_yaw_tracking_sigma, f32)
    t2 = weighted_square(weights[2], vz, f32)
    t3 = weights[3] * (wx * wx + wy * wy)
    t4 = weights[4] * (gx * gx + gy * gy)
    t5 = weights[5] * (height - params.base_height_target) ** 2
    t6 = weights[6] * torque_sq
    t7 = weights[7] * action_rate
    t8 = weights[8] * pose
    t9 = weights[9] * air_reward if moving else 0.0
    t10 = weights[10] * exp_kernel(phase_error, params.feet_phase_width, params.inv_feet_phase_width, f32)
    t11 = weights[11] * slip
    t12 = weights[12] * limits
    t13 = 0.0 if moving else weights[13] * deviation
    t14 = weights[14] if fell else 0.0
    t15 = 0.0 if fell else weights[15]
    shaped = t0 + t1 + t2 + t3 + t4 + t5 + t6 + t7 + t8 + t9 + t10 + t11 + t12 + t13
    if params.clip_termination:
        shaped += t14
    shaped += t15
    t16 = clip_scale * max(0.0, -shaped)
    total = shaped + t16
    if not params.clip_termination:
        total += t14
    reward_terms[i, 0], reward_terms[i, 1], reward_terms[i, 2], reward_terms[i, 3], reward_terms[i, 4] = t0, t1, t2, t3, t4
    reward_terms[i, 5], reward_terms[i, 6], reward_terms[i, 7], reward_terms[i, 8], reward_terms[i, 9] = t5, t6, t7, t8, t9
    reward_terms[i, 10], reward_terms[i, 11], reward_terms[i, 12], reward_terms[i, 13], reward_terms[i, 14] = t10, t11, t12, t13, t14
    reward_terms[i, 15], reward_terms[i, 16] = t15, t16
    reward[i] = total


# --- 72bbc56:unilab_envs/locomotion/kernels.py -----------------------------------------------
@nb.njit(inline="always", cache=True)
def step_env(i, obs, privileged_obs, reward_terms, reward, terminated, episode_step, rng,
             layout, physics, robot, legs, ground, params, commands, weights, clip_scale, f32):  # fmt: skip
    """Env ``i``'s share of :func:`compute` (``clip_scale = weights[-1] / dt``, ``f32 = params.float32_math``)."""
    prefetch_row(physics.qpos, i + PREFETCH_DISTANCE)  # qpos / qvel are rows of the batch state, far apart
    prefetch_row(physics.qvel, i + PREFETCH_DISTANCE)
    base = above_ground(base_state(i, physics.qpos, physics.qvel, robot.root_q, robot.root_d), base_ground(i, physics, robot, ground))
    moving = is_moving(legs.command, i)
    sums = joint_sums(i, obs, privileged_obs, layout, physics, robot, legs)

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
    write_rewards(i, reward_terms, reward, weights, clip_scale, params, base, lin_error, yaw_error, sums,
                  (air_reward, slip, phase_error), moving, fell, f32)  # fmt: skip
    terminated[i] = fell
    track_walk(i, physics, robot, ground, legs.command, params.dt)

    if resample_due(episode_step[i], commands):
        sample_command(i, legs.command, rng, commands)
    write_base_obs(i, obs, privileged_obs, layout, base, legs.command, sin_phase, cos_phase, legs)
    write_height_scan(i, obs, privileged_obs, layout, physics, robot, ground)


@nb.njit(cache=True, _nrt=False)
def step_block(lo, hi, obs, privileged_obs, reward_terms, reward, terminated, episode_step, rng,
               layout, physics, robot, legs, ground, params, commands, weights, clip_scale):  # fmt: skip
    """:func:`step_env` for envs ``lo:hi``.

    One inlined copy of the env step per precision, each with the flag as a constant, so
    the per-term precision choices fold away at compile time.
    """
    if params.float32_math:
        for i in range(lo, hi):
            step_env(i, obs, privileged_obs, reward_terms, reward, terminated, episode_step, rng,
                     layout, physics, robot, legs, ground, params, commands, weights, clip_scale, True)  # fmt: skip
    else:
        for i in range(lo, hi):
            step_env(i, obs, privileged_obs, reward_terms, reward, terminated, episode_step, rng,
                     layout, physics, robot, legs, ground, params, commands, weights, clip_scale, False)  # fmt: skip


@nb.njit(parallel=True, cache=True, _nrt=False)
def compute(obs, privileged_obs, reward_terms, reward, terminated, episode_step, rng,
            layout, physics, robot, legs, ground, params, commands, weights):  # fmt: skip
    """One control step's observations ``(N, O)``, ``(N, P)``, reward terms ``(N, 17)``, reward and terminations."""
    clip_scale = weights[weights.shape[0] - 1] / params.dt
    n = obs.shape[0]
    for b in nb.prange(blocks(n)):
        step_block(b * ROWS_PER_BLOCK, min(n, (b + 1) * ROWS_PER_BLOCK), obs, privileged_obs, reward_terms, reward,
                   terminated, episode_step, rng, layout, physics, robot, legs, ground, params, commands, weights, clip_scale)  # fmt: skip
