"""The robot-bridge tests' fixture: the shipped G1 ``_real`` policy (the shared helpers: robot_support.py)."""

from __future__ import annotations

import pytest

from robot_support import G1_POLICY


@pytest.fixture(scope="session")
def g1():
    """``(spec, policy)`` of the shipped G1 ``_real`` policy (onnxruntime)."""
    from unilab_robot.policy import OnnxPolicy, find_policy

    bundle = find_policy(G1_POLICY)
    return bundle.spec, OnnxPolicy(bundle.onnx, bundle.spec)
