"""The runtime and the simulated robot on an in-process wire, one virtual clock: the shipped G1 walks, and the
start-up, the log and the command sources do what docs/robot_bridge.md says."""

from __future__ import annotations

import numpy as np

from robot_support import Lines, g1_model, lockstep
from unilab_robot.deploy.episodes import fell
from unilab_robot.motors import robot_def
from unilab_robot.remote import Remote
from unilab_robot.runtime import RobotRuntime, RuntimeConfig
from unilab_robot.sim import SimConfig, SimRobot
from unilab_robot.steplog import MODES, StepLog, load_log
from unilab_robot.wire import LocalBus


def _pair(g1, sim_config=SimConfig(), runtime_config=RuntimeConfig(), log=None):
    spec, policy = g1
    bus = LocalBus()
    lines = Lines()
    sim = SimRobot(spec, g1_model(spec), robot_def("g1"), bus.endpoint(), sim_config, say=lines)
    rt = RobotRuntime(spec, g1_model(spec), policy, robot_def("g1"), bus.endpoint(), runtime_config, say=lines)
    if log is not None:
        rt.log = StepLog(log, rt.log_groups())
    return sim, rt, lines


def test_g1_walks_through_the_wire_from_the_remote(g1, tmp_path):
    # the remote's left stick pushed 60% forward: vx = 0.6 * 1.0 m/s (the top of the spec's vx range)
    sim, rt, lines = _pair(g1, SimConfig(remote=Remote(ly=0.6)), RuntimeConfig(command="remote"), log=tmp_path / "g1")
    lockstep(rt, sim, 2.1)  # the first state at the 2nd tick, damping 0.5 s, move 1.5 s; the gantry holds the base
    assert rt.mode == "policy" and not sim.on_gantry
    x0 = sim.data.qpos[0]
    lockstep(rt, sim, 5.0, t0=2.1)
    assert not fell(sim.io, sim.data) and lines == []
    speed = (sim.data.qpos[0] - x0) / 5.0
    assert 0.45 < speed < 0.75, speed
    np.testing.assert_allclose(rt.ctl.command, [0.6, 0.0, 0.0])
    log = load_log(rt.log.close())
    assert log["t"].shape == (354,) and log["obs"].shape == (354, 101) and log["q"].shape == (354, 29)
    modes = log["mode"].astype(int)
    assert [MODES[m] for m in np.unique(modes)] == ["damping", "move", "policy"]  # wait: no row (nothing received)
    assert (log["kp"][modes == MODES.index("damping")] == 0).all()
    np.testing.assert_allclose(log["kp"][modes == MODES.index("policy")][0], rt.kp)
    header = (tmp_path / "g1.csv").read_text().splitlines()[0].split(",")
    assert header[:7] == ["t", "lateness_s", "compute_s", "missed", "state_tick", "fresh", "mode"]
    assert len(header) == 7 + 3 + 4 + 3 + 29 * 2 + 101 + 29 + 29 * 3


def test_move_reaches_home_linearly(g1):
    sim, rt, _ = _pair(g1, runtime_config=RuntimeConfig(damping_s=0.2, move_s=1.0, command="fixed"))
    lockstep(rt, sim, 0.24)  # the first state at the tick of 0.02 s: damping until 0.22 s, then the move
    assert rt.mode == "move"
    start = rt._move_from.copy()
    lockstep(rt, sim, 0.5, t0=0.24)  # the last tick at 0.72 s: half-way through the 1 s move
    sent = rt.cmd_msg["motor_cmd"]["q"][:29]
    np.testing.assert_allclose(sent, start + 0.5 * (rt.io.home - start), atol=1e-6)


def test_lockstep_command_counts_episodes_and_falls(tmp_path, capsys):
    import json

    from trainers.cli import main

    assert main(["robot", "lockstep", "policies/g1_joystick_real", "--episodes", "2", "--episode-s", "1",
                 "--summary", str(tmp_path / "s.json")]) == 0
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["episodes"] == 2 and summary["falls"] == 0 and summary["runtime_fault"] is None
    assert summary["sim_time_s"] >= 2.0 + 2.0  # the start-up on the gantry, then two 1 s episodes
    assert json.loads(capsys.readouterr().out) == summary


def test_script_commands_are_drawn_at_the_start_and_each_new_episode(g1):
    sim, rt, _ = _pair(g1, SimConfig(episode_s=1.0), RuntimeConfig(command="script", follow_episodes=True, seed=3))
    lockstep(rt, sim, 2.2)
    first = rt.ctl.command.copy()
    lockstep(rt, sim, 1.0, t0=2.2)  # the simulator's next episode restarts the controller with a new draw
    assert sim.episode == 2 and not np.allclose(rt.ctl.command, first)
    assert not np.allclose(first, 0.0)  # seed 3's first draw is not the zero command (15% of draws are)


def test_a_log_name_with_a_dot_keeps_it(tmp_path):
    """`--log runs/wet_0.2` writes wet_0.2.csv and wet_0.2.npz (not wet_0.csv), and the same log read back by any of
    its names; a name given with .npz or .csv is the same log."""
    import numpy as np

    from unilab_robot.steplog import StepLog, load_log, log_file

    log = StepLog(tmp_path / "wet_0.2", {"q": 2})
    log.write(t=0.5, lateness_s=0, compute_s=0, missed=0, state_tick=4, fresh=1, mode=3, q=[1.0, 2.0])
    assert log.close() == tmp_path / "wet_0.2.npz" and (tmp_path / "wet_0.2.csv").is_file()
    for name in ("wet_0.2", "wet_0.2.npz", "wet_0.2.csv"):
        assert np.array_equal(load_log(tmp_path / name)["q"], [[1.0, 2.0]])
    assert log_file(tmp_path / "x.npz", ".swaps.jsonl") == tmp_path / "x.swaps.jsonl"
