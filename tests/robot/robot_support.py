"""Shared pieces of the robot-bridge tests: the shipped G1 policy's folder, its model, a ``say`` that keeps lines, a
lock-step loop of runtime and simulated robot, a policy folder with its actions shifted.

A module of its own (not ``conftest``): the test modules import it by this unique name, so they find it whichever
other ``conftest.py`` pytest loaded last."""

from __future__ import annotations

G1_POLICY = "policies/g1_joystick_real"


def g1_model(spec):
    from unilab_robot.model import load_play_model

    return load_play_model(spec)


class Lines(list):
    """A ``say`` callback that keeps the lines."""

    def __call__(self, line: str) -> None:
        self.append(line)


def lockstep(runtime, sim, seconds: float, t0: float = 0.0, sim_alive=lambda t: True) -> float:
    """:func:`unilab_robot.lockstep.run_lockstep` (one virtual clock, the in-process wire)."""
    from unilab_robot.lockstep import run_lockstep

    return run_lockstep(runtime, sim, seconds, t0, sim_alive)


def shifted_policy(policy: str, out, delta: float, edit=None):
    """A copy of the policy folder ``policy`` at ``out`` whose ONNX adds ``delta`` to every action (so which policy
    acted is known by hand, or the legs are pushed off their gait); ``edit(spec_dict)`` changes its deploy spec."""
    import json

    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    out.mkdir()
    m = onnx.load(f"{policy}/policy.onnx")
    old = m.graph.output[0].name
    spec = json.loads(open(f"{policy}/deploy_spec.json").read())
    m.graph.initializer.append(numpy_helper.from_array(np.full(spec["action"]["size"], delta, np.float32), "test_delta"))
    for node in m.graph.node:
        node.output[:] = [o if o != old else "pre_delta" for o in node.output]
    m.graph.node.append(helper.make_node("Add", ["pre_delta", "test_delta"], [old]))
    onnx.save(m, str(out / "policy.onnx"))
    if edit is not None:
        edit(spec)
    (out / "deploy_spec.json").write_text(json.dumps(spec))
    return out
