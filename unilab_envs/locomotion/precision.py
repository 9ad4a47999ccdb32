"""The one place where Go1's and G1's kernels do the same maths at different precision.

``Params.float32_math`` picks, for every quantity that leaves the kernels as float32:

- off (Go1): float64 throughout: ``exp(-e / sigma)``, ``sin(phase + offset)``,
  ``dx / dt``, ``w * (x * x)``;
- on (G1): float32 transcendentals (``exp_f32``, ``sin_cos_f32``), multiplications by
  precomputed reciprocals and left-to-right products: the arithmetic the bench's NumPy
  twin (``trainers/bench/g1_numpy.py``) mirrors.

Both keep each robot's numbers bit for bit as they were before the shared layer.
"""

from __future__ import annotations

import math

import numba as nb

from unilab_envs.core.quat import exp_f32, sin_cos_f32


@nb.njit(inline="always", cache=True)
def exp_kernel(error, width, inv_width, float32_math):
    """``exp(-error / width)`` in (0, 1] for ``error >= 0``."""
    if float32_math:
        return exp_f32(-error * inv_width)
    return math.exp(-error / width)


@nb.njit(inline="always", cache=True)
def phase_sin_cos(phase, float32_math):
    """``(sin, cos)`` of a gait phase."""
    if float32_math:
        return sin_cos_f32(phase)
    return math.sin(phase), math.cos(phase)


@nb.njit(inline="always", cache=True)
def shifted_sin(phase, sin_phase, cos_phase, offset, offset_cos, offset_sin, float32_math):
    """``sin(phase + offset)``: from the phase's sine and cosine (float32 math) or directly."""
    if float32_math:
        return sin_phase * offset_cos + cos_phase * offset_sin
    return math.sin(phase + offset)


@nb.njit(inline="always", cache=True)
def per_dt(delta, dt, inv_dt, float32_math):
    """A finite-difference rate ``delta / dt``."""
    if float32_math:
        return delta * inv_dt
    return delta / dt


@nb.njit(inline="always", cache=True)
def weighted_square(weight, x, float32_math):
    """``weight * x^2``."""
    if float32_math:
        return weight * x * x
    return weight * (x * x)
