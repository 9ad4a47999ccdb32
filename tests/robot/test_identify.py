"""Identification from the robot's own log (unilab_envs/robot/identify.py): the simulated G1 walks on a floor of
known friction, the runtime logs every step, and replaying the logged commands from the logged states finds it.

Stated error (docs/results/robot_bridge.md): on an 8 s log at 0.5 m/s the fit lands within -0 / +0.25 of a wet
floor's 0.4 (the replay slips a little more than the robot did: its base height comes from leg kinematics) and
within 25% of a dry floor's 1.0; a floor four times more slippery than the fit explains the log far worse."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import Lines, g1_model
from unilab_envs.robot.identify import IdentifyConfig, IdentifyError, identify, set_floor_friction
from unilab_envs.robot.lockstep import run_lockstep
from unilab_envs.robot.motors import robot_def
from unilab_envs.robot.runtime import RobotRuntime, RuntimeConfig
from unilab_envs.robot.sim import SimRobot
from unilab_envs.robot.steplog import StepLog, load_log
from unilab_envs.robot.wire import LocalBus

FAST = IdentifyConfig(grid=7, tol=0.05)


def _walk_log(g1, tmp_path, friction: float, seconds: float = 8.0) -> dict:
    """The runtime's log of the G1 walking at 0.5 m/s on a floor of ``friction`` (2 s start-up on the gantry)."""
    spec, policy = g1
    model = g1_model(spec)
    set_floor_friction(model, friction)
    bus = LocalBus()
    sim = SimRobot(spec, model, robot_def("g1"), bus.endpoint(), say=Lines())
    rt = RobotRuntime(spec, g1_model(spec), policy, robot_def("g1"), bus.endpoint(),
                      RuntimeConfig(command="fixed", fixed_command=(0.5, 0.0, 0.0)), say=Lines())
    rt.log = StepLog(tmp_path / f"walk{friction}", rt.log_groups())
    run_lockstep(rt, sim, seconds)
    return load_log(rt.log.close())


def test_set_floor_friction_wins_every_contact(g1):
    model = g1_model(g1[0])
    set_floor_friction(model, 0.4)
    assert model.geom_friction[0, 0] == 0.4 and model.geom_priority[0] == 1  # geom 0: the floor; the others 0


@pytest.mark.parametrize("friction, low, high", [(0.4, 0.4, 0.65), (1.0, 0.75, 1.25)])
def test_identify_finds_the_floor_friction(g1, tmp_path, friction, low, high):
    spec, _ = g1
    fit = identify(spec, g1_model(spec), _walk_log(g1, tmp_path, friction), FAST)
    assert low <= fit.friction <= high, fit.summary()
    assert fit.windows >= 40 and fit.strength == 1.0
    at = {round(f, 4): e for f, _, e in fit.evaluations}
    assert min(e for f, e in at.items() if f <= fit.friction / 4) > 2 * fit.error  # a much wetter floor: far worse


def test_a_log_without_the_columns_is_one_line(g1, tmp_path):
    spec, _ = g1
    with pytest.raises(IdentifyError, match=r"^the log lacks columns q_des, kp, kd: pass the \.npz"):
        identify(spec, g1_model(spec), {k: np.zeros((3, 1)) for k in ("t", "mode", "fresh", "state_tick", "quat",
                                                                      "gyro", "q", "dq", "obs")})
    with pytest.raises(IdentifyError, match="ranges must be 0 < low < high"):
        IdentifyConfig(friction_range=(0.5, 0.1))
