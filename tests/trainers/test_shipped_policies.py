"""Every shipped policy (policies/<task>/) still does its task as well as recorded, on the bare task:
a task or wrapper change that breaks a shipped policy, or a reship that regresses its headline, fails
here. The bounds and why: tests/trainers/shipped.py; the *_real policies under their robots'
profiles: test_shipped_real_policies.py."""

import pytest
from tests.trainers.shipped import HEADLINES, POLICIES, shortfalls

SHIPPED = sorted(p.parent.name for p in POLICIES.glob("*/checkpoint.pt"))
BARE = [name for name in SHIPPED if not name.endswith("_real")]


def test_the_readme_policies_are_shipped():
    assert {"go1_joystick", "g1_joystick"} <= set(SHIPPED)


def test_every_shipped_policy_has_a_headline():
    assert set(SHIPPED) == set(HEADLINES), "add the policy's recorded headline to tests/trainers/shipped.py"


@pytest.mark.parametrize("name", BARE)
def test_a_shipped_policy_keeps_its_headline(name):
    assert not shortfalls(name, HEADLINES[name])
