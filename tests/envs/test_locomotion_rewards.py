"""The 17 weighted locomotion terms and the positive clip (the generated ``write_rewards``), against a hand-computed step."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.envs import locomotion_records as rec
from unilab_envs.locomotion.ground import flat_ground
from unilab_envs.locomotion.observation_kernel import plan_observation
from unilab_envs.locomotion.reward_kernel import step_kernel
from unilab_envs.locomotion.rewards import REWARD_NAMES, TERMINATION, RewardScales
from unilab_envs.locomotion.terms import LEGGED_TERMS

NO_OBSERVATION = plan_observation((), (), {})  # write_rewards alone is called here

# one step of one env, by hand: base (vx, vy, vz, wx, wy, wz, gx, gy, gz, height)
BASE = (0.5, 0.0, 0.5, 0.1, 0.2, 0.3, 0.1, 0.2, -0.9, 0.25)
SUMS = (2.0, 0.5, 0.1, 0.3, 0.05)  # torque^2, action rate^2, pose, |deviation|, limit violation
FEET = (0.2, 1.0, 0.01)  # air reward, slip, phase error
SCALES = np.array([1.0, 1.0, -1.0, -1.0, -1.0, -10.0, -0.1, -1.0, -1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -30.0, 1.0, 1.0])


def _run(moving, fell, **params):
    p = rec.params(**params)
    weights = SCALES * p.dt
    terms, reward = np.zeros((1, 17), np.float32), np.zeros(1, np.float32)
    step_kernel(LEGGED_TERMS, (True,) * 16, NO_OBSERVATION).write_rewards(0, terms, reward, weights, np.zeros((16, 1)), weights[-1] / p.dt, rec.physics(),
                                            rec.robot(), rec.legs(), flat_ground(), p, rec.commands(), p.float32_math, BASE,
                                            SUMS, FEET, moving, fell, 0.25, 0.09, 0.0, 1.0)  # fmt: skip
    return terms[0].astype(np.float64), float(reward[0])


def test_each_term_is_its_weight_times_its_value():
    terms, _ = _run(moving=True, fell=False)
    dt = 0.02
    values = (math.exp(-0.25 / 0.25), math.exp(-0.09 / 0.25), 0.25, 0.01 + 0.04, 0.01 + 0.04, (0.25 - 0.3) ** 2,
              2.0, 0.5, 0.1, 0.2, math.exp(-0.01 / 0.01), 1.0, 0.05, 0.0, 0.0, 1.0)  # fmt: skip
    np.testing.assert_allclose(terms[:16], SCALES[:16] * dt * np.array(values), rtol=1e-6, atol=1e-9)


def test_a_yaw_only_tracking_width_changes_the_yaw_term_alone():
    wide, _ = _run(moving=True, fell=False)
    narrow, _ = _run(moving=True, fell=False, yaw_tracking_sigma=0.05, inv_yaw_tracking_sigma=20.0)
    assert narrow[1] == pytest.approx(1.0 * 0.02 * math.exp(-0.09 / 0.05), rel=1e-6)  # yaw error^2 0.09
    np.testing.assert_array_equal(np.delete(narrow, [1, 16]), np.delete(wide, [1, 16]))


def test_the_config_gives_the_kernels_its_yaw_width_or_the_shared_one():
    from unilab_envs.locomotion.config import kernel_records
    from unilab_envs.tasks.g1_joystick import G1JoystickConfig

    shared, _, _ = kernel_records(G1JoystickConfig())
    assert shared.yaw_tracking_sigma == shared.tracking_sigma == 0.25
    own, _, _ = kernel_records(G1JoystickConfig(yaw_tracking_sigma=0.05))
    assert (own.yaw_tracking_sigma, own.inv_yaw_tracking_sigma, own.tracking_sigma) == (0.05, 20.0, 0.25)
    with pytest.raises(ValueError, match="yaw_tracking_sigma must be > 0"):
        G1JoystickConfig(yaw_tracking_sigma=0.0).validate()


def test_positive_clip_lifts_a_negative_step_to_zero():
    # slow and sloppy, not moving: the stand-still deviation counts, the air time does not
    terms, reward = _run(moving=False, fell=False)
    assert terms[9] == 0.0 and terms[13] == pytest.approx(-1.0 * 0.02 * 0.3)
    shaped = terms[:16].sum()  # by hand: 0.04867 of bonuses against 0.0505 of penalties
    assert shaped == pytest.approx(-0.00183, abs=2e-5)
    assert terms[16] == pytest.approx(-shaped, rel=1e-6) and reward == pytest.approx(0.0, abs=1e-7)
    assert reward == pytest.approx(terms.sum(), abs=1e-6)


@pytest.mark.parametrize("clip_termination", [True, False])
def test_the_fall_penalty_inside_or_outside_the_clip(clip_termination):
    terms, reward = _run(moving=True, fell=True, clip_termination=clip_termination)
    assert terms[TERMINATION] == pytest.approx(-30.0 * 0.02) and terms[15] == 0.0  # no alive bonus on a fall
    shaped = terms[:16].sum() - (0.0 if clip_termination else terms[TERMINATION])
    assert terms[16] == pytest.approx(max(0.0, -shaped), rel=1e-6)
    # inside the clip the fall costs nothing net (reward 0); outside, it costs its full penalty
    assert reward == pytest.approx(0.0 if clip_termination else -0.6, abs=1e-6)
    assert reward == pytest.approx(terms.sum(), abs=1e-6)


def test_scales_are_checked_finite_and_weighted_by_dt():
    assert REWARD_NAMES[-1] == "positive_clip" and len(REWARD_NAMES) == 17
    np.testing.assert_array_equal(RewardScales(alive=2.0).weights(0.02)[REWARD_NAMES.index("alive")], 0.04)
    with pytest.raises(ValueError, match="reward_scales.pose must be finite, got nan"):
        RewardScales(pose=float("nan")).validate()
