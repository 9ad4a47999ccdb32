"""Runtime and simulated robot on one virtual clock, over the in-process bus: the same messages, CRC, motor
driver, link and controller as over DDS, without the wall clock (deterministic, faster than real time).

Used by the tests and by ``unilab robot lockstep`` to count falls over many episodes.
"""

from __future__ import annotations

from unilab_robot.runtime import RobotRuntime
from unilab_robot.sim import SimRobot


def run_lockstep(runtime: RobotRuntime, sim: SimRobot, seconds: float, t0: float = 0.0,
                 sim_alive=lambda t: True, until=lambda: False) -> float:
    """Tick ``runtime`` every control period and step ``sim`` ``substeps`` times after each tick, from clock ``t0``
    for ``seconds`` (or until ``until()``); returns the clock at the end. ``sim_alive(t)`` False: the robot is silent."""
    spec = runtime.spec
    dt, sub = spec.timing.control_dt, spec.timing.substeps
    n = int(round(seconds / dt))
    k = 0
    while k < n and not until():
        now = t0 + k * dt
        runtime.tick(now)
        for i in range(sub):
            if sim_alive(now):
                sim.step(now + i * sim.dt)
        k += 1
    return t0 + k * dt
