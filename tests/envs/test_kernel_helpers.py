"""The shared kernel helpers: software prefetch of batch-state rows, float32 transcendentals and the
weighted reward-term sum."""

from __future__ import annotations

import math

import numba as nb
import numpy as np
import pytest

from unilab_envs.core.prefetch import prefetch_row
from unilab_envs.core.quat import advance_phase, exp_f32, projected_gravity, rotate_inverse, sin_cos_f32


@nb.njit
def _row_sums_with_prefetch(rows, ahead):
    out = np.zeros(rows.shape[0])
    for i in range(rows.shape[0]):
        prefetch_row(rows, i + ahead)  # past the end for the last rows: must be a no-op
        s = 0.0
        for j in range(rows.shape[1]):
            s += rows[i, j]
        out[i] = s
    return out


@nb.njit
def _row_sums(rows):
    out = np.zeros(rows.shape[0])
    for i in range(rows.shape[0]):
        s = 0.0
        for j in range(rows.shape[1]):
            s += rows[i, j]
        out[i] = s
    return out


@pytest.mark.parametrize("ahead", [0, 2, 1000])
def test_prefetch_row_changes_nothing_on_strided_state_like_rows(ahead):
    # rows of a wide "state" array, 2,856 bytes apart, read at an unaligned offset: like batch.bind("qpos")
    state = np.random.default_rng(0).normal(size=(50, 357))
    before = state.copy()
    qpos = state[:, 3:39]
    np.testing.assert_array_equal(_row_sums_with_prefetch(qpos, ahead), _row_sums(qpos))
    np.testing.assert_array_equal(state, before)


def test_prefetch_row_on_an_empty_array_is_a_no_op():
    assert _row_sums_with_prefetch(np.zeros((0, 5)), 2).shape == (0,)


@nb.njit
def _exp_all(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = exp_f32(x[i])
    return out


@nb.njit
def _sin_cos_all(x):
    out = np.empty((x.shape[0], 2))
    for i in range(x.shape[0]):
        out[i, 0], out[i, 1] = sin_cos_f32(x[i])
    return out


def test_exp_f32_is_as_exact_as_float32():
    x = np.concatenate([-np.logspace(-8, 2, 2000), [0.0]])
    got = _exp_all(x)
    assert got.dtype == np.float64
    # float32 rounds x itself by 2^-24 relative, so exp's relative error grows with |x|; the atol is float32's subnormals
    bound = 2.0**-23 * (1.0 + np.abs(x)) * np.exp(x) + 1e-37
    assert np.all(np.abs(got - np.exp(x)) <= bound)
    assert _exp_all(np.array([0.0]))[0] == 1.0


def test_sin_cos_f32_over_a_few_gait_turns():
    x = np.linspace(0.0, 4 * math.pi, 5001)
    got = _sin_cos_all(x)
    np.testing.assert_allclose(got[:, 0], np.sin(x), atol=1e-6)
    np.testing.assert_allclose(got[:, 1], np.cos(x), atol=1e-6)
    np.testing.assert_allclose(got[:, 0] ** 2 + got[:, 1] ** 2, 1.0, atol=1e-6)


@nb.njit
def _gravity_and_rotation(q, v):
    return projected_gravity(q), rotate_inverse(q, v[0], v[1], v[2])


def test_quaternion_helpers_match_hand_computed_rotations():
    # 90 degrees about z: world x is body -y, gravity stays straight down
    half = math.sqrt(0.5)
    gravity, v = _gravity_and_rotation(np.array([half, 0.0, 0.0, half]), np.array([1.0, 0.0, 0.0]))
    np.testing.assert_allclose(gravity, (0.0, 0.0, -1.0), atol=1e-12)
    np.testing.assert_allclose(v, (0.0, -1.0, 0.0), atol=1e-12)
    # 90 degrees about x (rolled onto the side): gravity points along body -y
    gravity, _ = _gravity_and_rotation(np.array([half, half, 0.0, 0.0]), np.zeros(3))
    np.testing.assert_allclose(gravity, (0.0, -1.0, 0.0), atol=1e-12)


def test_prefetch_row_emits_the_llvm_prefetch_hint():
    rows = np.zeros((4, 357))[:, 3:39]
    _row_sums_with_prefetch(rows, 2)
    ir = _row_sums_with_prefetch.inspect_llvm(_row_sums_with_prefetch.signatures[0])
    assert "@llvm.prefetch" in ir


@nb.njit
def _advance_all(phase, step):
    out = np.empty_like(phase)
    for i in range(phase.shape[0]):
        out[i] = advance_phase(phase[i], step)
    return out


@pytest.mark.parametrize("step", [0.0, 0.157, 2.0, 2 * math.pi - 1e-9])
def test_advance_phase_has_the_bits_of_the_modulo(step):
    phase = np.random.default_rng(1).uniform(0.0, 2 * math.pi, 10_000)
    phase[:3] = 0.0, np.nextafter(2 * math.pi, 0.0), 2 * math.pi - step  # edges: the wrap lands exactly on 2pi
    got = _advance_all(phase, step)
    np.testing.assert_array_equal(got, (phase + step) % (2 * math.pi))
    assert np.all((got >= 0.0) & (got < 2 * math.pi))
