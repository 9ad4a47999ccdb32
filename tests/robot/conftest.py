"""Shared pieces of the robot-bridge tests: the shipped G1 policy, a lock-step loop of runtime and simulated robot."""

from __future__ import annotations

import pytest

G1_POLICY = "policies/g1_joystick_real"


@pytest.fixture(scope="session")
def g1():
    """``(spec, policy)`` of the shipped G1 ``_real`` policy (onnxruntime)."""
    from trainers.play.policy import OnnxPolicy, find_policy

    bundle = find_policy(G1_POLICY)
    return bundle.spec, OnnxPolicy(bundle.onnx, bundle.spec)


def g1_model(spec):
    from trainers.play.model import load_play_model

    return load_play_model(spec)


class Lines(list):
    """A ``say`` callback that keeps the lines."""

    def __call__(self, line: str) -> None:
        self.append(line)


def lockstep(runtime, sim, seconds: float, t0: float = 0.0, sim_alive=lambda t: True) -> float:
    """:func:`unilab_envs.robot.lockstep.run_lockstep` (one virtual clock, the in-process wire)."""
    from unilab_envs.robot.lockstep import run_lockstep

    return run_lockstep(runtime, sim, seconds, t0, sim_alive)
