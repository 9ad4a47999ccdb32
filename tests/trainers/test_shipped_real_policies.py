"""The *_real policies keep their headlines under their robots' profiles (go1_real, g1_real,
ur5_grasp_real): 64 episodes each in the default tier; 256 more (other seeds) in the slow tier, whose
bounds 64 episodes cannot hold tightly. The bounds and
why: tests/trainers/shipped.py."""

import dataclasses

import pytest
from tests.trainers.shipped import HEADLINES, POLICIES, Headline, shortfalls

REAL = sorted(p.parent.name for p in POLICIES.glob("*_real/checkpoint.pt"))

#: 256 episodes from seed 1000 (rows 1000..1255, apart from the default tier's 7..70); measured there on
#: 2026-12-05 in the comments (the policies reshipped that day; the Go1 before them fell in 3.1% here)
#: The Go1's <= 4.7% (12 falls) fails a policy falling 3x its ~1.4% over 768 episodes at three seeds
#: (4.3%) about 1 time in 3 and one at 6.3% 5 times in 6; the G1's <= 6.25% (16 falls) fails 3x its
#: ~2.3% over 768 (6.9%) about 3 times in 5, one as good as the shipped about 1 time in 9000.
WIDE = {"go1_joystick_real": dataclasses.replace(HEADLINES["go1_joystick_real"], max_falls=0.047, episodes=256,
                                                 seed=1000),  # 2.3%, 92.3%
        "g1_joystick_real": dataclasses.replace(HEADLINES["g1_joystick_real"], max_falls=0.0625, episodes=256,
                                                seed=1000),  # 2.3%, 88.4%
        "ur5_grasp_real": dataclasses.replace(HEADLINES["ur5_grasp_real"], min_success=0.9, episodes=256,
                                              seed=1000)}  # 95.3%


@pytest.mark.parametrize("name", REAL)
def test_a_real_policy_keeps_its_headline_under_its_robots_profile(name):
    assert not shortfalls(name, HEADLINES[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(WIDE))
def test_a_real_policy_keeps_its_headline_over_256_episodes(name):
    headline: Headline = WIDE[name]
    assert not shortfalls(name, headline)
