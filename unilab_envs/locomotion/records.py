"""The named records the locomotion kernels take instead of long positional argument lists.

Each is a ``typing.NamedTuple``: Numba passes it into ``@njit`` kernels as a typed tuple
(fields read by name, no magic indices), Python builds it once per task (the static
ones) or once per :meth:`bind` (the live ones). Shapes use ``N`` envs, ``J`` joints and
``F`` feet.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Robot(NamedTuple):
    """Where the robot lives in the model, and its fixed poses (built once per task)."""

    root_q: int  # qpos address of the floating base (x, y, z, qw, qx, qy, qz)
    root_d: int  # qvel address of the floating base (vx, vy, vz, wx, wy, wz), world frame
    joint_q: np.ndarray  # (J,) int64 qpos addresses of the actuated joints, action order
    joint_d: np.ndarray  # (J,) int64 qvel addresses
    actuator_ids: np.ndarray  # (J,) int64 position actuator of each joint
    foot_ids: np.ndarray  # (F,) int64 rows of ``Physics.foot_xpos`` that are the feet
    foot_offset: float  # m subtracted from a foot's z to give its height (a sphere foot's radius; 0 for a sole site)
    home: np.ndarray  # (J,) joint angles of the home pose: the zero of the actions and of ``joint_pos``
    pose_weights: np.ndarray  # (J,) weights of the squared deviations in the ``pose`` term
    soft_low: np.ndarray  # (J,) soft joint limits of the ``joint_limits`` term
    soft_high: np.ndarray  # (J,)
    hard_low: np.ndarray  # (J,) model joint ranges, the clip of the reset pose
    hard_high: np.ndarray  # (J,)
    phase_offsets: np.ndarray  # (F,) gait phase of each foot (rad)
    phase_offsets_cos_sin: np.ndarray  # (F, 2) cos and sin of ``phase_offsets``


class Physics(NamedTuple):
    """Live views of the batch (``batch.bind``): read after each physics step."""

    qpos: np.ndarray  # (N, nq)
    qvel: np.ndarray  # (N, nv)
    foot_xpos: np.ndarray  # (N, nobj, 3) world positions of geoms or sites, feet at ``Robot.foot_ids``
    actuator_force: np.ndarray  # (N, nu)


class Legs(NamedTuple):
    """Per-env task state carried from step to step (all ``(N, ...)``, written in place)."""

    last_action: np.ndarray  # (N, J) clipped action of this step
    previous_action: np.ndarray  # (N, J) clipped action of the step before
    command: np.ndarray  # (N, 3) (vx, vy, yaw rate) command
    phase: np.ndarray  # (N,) gait phase in [0, 2pi)
    contact: np.ndarray  # (N, F) bool, foot in contact at the last step
    air_time: np.ndarray  # (N, F) s since the foot left the ground
    foot_height: np.ndarray  # (N, F) m above z = 0
    previous_foot_pos: np.ndarray  # (N, F, 3) world foot positions at the last step


class Commands(NamedTuple):
    """How velocity commands are drawn: uniform per axis, all zero (standing), or forward only (straight)."""

    ranges: np.ndarray  # (3, 2) (low, high) of vx, vy, yaw rate
    zero_probability: float  # chance that a draw is the zero command
    resample_steps: int  # control steps between draws within an episode
    straight_probability: float = 0.0  # chance that a moving draw keeps vx only (vy = yaw rate = 0)


class Reset(NamedTuple):
    """Spread of the initial state around the keyframe (uniform, +-)."""

    xy_range: float  # m of base position
    joint_range: float  # rad of joint angle (clipped to the model's range)
    base_velocity: float  # m/s of each base linear velocity component


class Params(NamedTuple):
    """Scalars of the reward, gait and termination terms, and the options where robots differ."""

    dt: float  # control period (s)
    inv_dt: float  # 1 / dt
    tracking_sigma: float  # width of the velocity-tracking kernels exp(-error^2 / sigma)
    inv_tracking_sigma: float
    yaw_tracking_sigma: float  # width of the yaw-rate kernel (tracking_sigma unless the config sets its own)
    inv_yaw_tracking_sigma: float
    base_height_target: float  # m
    air_time_target: float  # s
    gait_step: float  # gait phase advance per control step (rad)
    swing_height: float  # m, foot-height target at the top of a swing
    contact_height: float  # a foot below this height (m) is in contact
    feet_phase_width: float  # m^2, width of the feet_phase kernel exp(-sum of squared height errors / width)
    inv_feet_phase_width: float
    cos_max_tilt: float  # fall: projected gravity z above -cos(max_tilt)
    min_base_height: float  # fall: base below this height (m)
    clip_air_time: bool  # feet_air_time adds clip(air - target, 0, target) (else air - target, unclipped)
    clip_termination: bool  # positive_clip also offsets the termination penalty (else it stays outside the clip)
    float32_math: bool  # see :mod:`unilab_envs.locomotion.precision`


class Ground(NamedTuple):
    """The ground heights are measured from, the height scan's points, and the walk the curriculum judges.

    A flat task's ground (:func:`~unilab_envs.locomotion.ground.flat_ground`) has
    ``flat=True``: heights are world z, as on a plane at z = 0, nothing is looked up, and
    the per-env arrays are empty. A terrain task's holds its heightfield and ``(N, ...)`` arrays.
    The first five fields are those of a :class:`~unilab_envs.terrain.TerrainMap`, so the
    terrain lookups take the ground itself (Numba's parallel loops take no nested records).
    """

    heights: np.ndarray  # (nx, ny) float64 m: the ground at (x0 + ix * spacing, y0 + iy * spacing)
    x0: float
    y0: float
    spacing: float
    inv_spacing: float
    flat: bool  # z = 0 everywhere: no lookup, no scan, no distance tracking
    scan_points: np.ndarray  # (S, 2) float64 xy of the height scan in the base's heading frame (S may be 0)
    spawn_xy: np.ndarray  # (N, 2) where each env's episode started (world xy)
    walked: np.ndarray  # (N,) m from the spawn point at the last step
    commanded_xy: np.ndarray  # (N, 2) m: where exact tracking of the xy velocity commands (along the base's heading) would be, from the spawn point
    depth_image: np.ndarray  # (N, P) float32 the depth camera's latest frames (:class:`~unilab_envs.sensors.DepthCamera`); (0, 0) without one
