"""The deploy spec's ``estimator`` section: built from the task's declarations, read back, and what it refuses."""

import dataclasses

import pytest

from unilab_envs.deploy_spec import deploy_spec_for
from unilab_robot.deploy.spec import ObsGroup, SpecError, spec_from_json, validate

GO1 = "UniLab/Go1Joystick-v0"


def test_the_section_names_the_estimated_groups_with_their_units_and_reads_back():
    spec = deploy_spec_for(GO1, critic_only_groups=["linvel"], estimator=["linvel"])
    e = spec.estimator
    assert (e.size, e.output) == (3, "estimate")
    assert e.groups == (ObsGroup("linvel", 0, 3, "m/s", "base linear velocity, base frame"),)
    assert spec_from_json(spec.to_json()) == spec
    assert "estimator" not in deploy_spec_for(GO1, critic_only_groups=["linvel"]).to_dict()  # none: as before


def test_what_the_section_refuses():
    with pytest.raises(SpecError, match=r"estimates 'linvel', which Go1Joystick does not declare as a privileged"):
        deploy_spec_for(GO1, estimator=["linvel"])  # the policy observes linvel itself
    spec = deploy_spec_for(GO1, critic_only_groups=["linvel"], estimator=["linvel"])
    observed = dataclasses.replace(spec.estimator, groups=(ObsGroup("gyro", 0, 3, "rad/s", "x"),))
    with pytest.raises(SpecError, match=r"the observation already holds \['gyro'\]"):
        validate(dataclasses.replace(spec, estimator=observed))
    gap = dataclasses.replace(spec.estimator, size=4)
    with pytest.raises(SpecError, match="estimator groups end at 3, but its size is 4"):
        validate(dataclasses.replace(spec, estimator=gap))
