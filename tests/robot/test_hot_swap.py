"""Hot swap in the running runtime (unilab_robot/swap.py): a candidate is swapped in between two control steps,
the step log says which policy acted at each step, a mismatched candidate is refused in one line while the old policy
keeps acting, rollback restores the previous policy, and the candidate is opened and warmed up on the loader's thread,
so the control thread only ever runs it for the steps it acts on. (How long the swap step takes is a measurement, not a
test: ``unilab robot lockstep --swap`` reports it beside its neighbours, docs/robot_bridge.md; a bound on it here failed
on a busy machine while proving nothing the thread check does not.)

The candidate is the shipped G1 policy with one node appended, ``actions + DELTA``, so at every step the policy acting
is known by hand: its action is the shipped policy's action on the logged observation, plus DELTA or not."""

from __future__ import annotations

import json
import shutil
import threading

import numpy as np
import pytest

from robot_support import G1_POLICY, Lines, g1_model, lockstep, shifted_policy
from unilab_robot.control import ask, serve
from unilab_robot.lockstep import run_lockstep
from unilab_robot.motors import robot_def
from unilab_robot.runtime import RobotRuntime, RuntimeConfig
from unilab_robot.sim import SimRobot
from unilab_robot.steplog import MODES, StepLog, load_log
from unilab_robot.swap import HotSwap, OnnxSession
from unilab_robot.wire import LocalBus

DELTA = 0.0625  # exact in float32
POLICY = MODES.index("policy")


def _candidate(tmp_path, name, delta=DELTA, edit=None):
    """A copy of the shipped policy folder whose ONNX adds ``delta`` to every action; ``edit(spec_dict)`` changes its spec."""
    return shifted_policy(G1_POLICY, tmp_path / name, delta, edit)


def _runtime(g1, tmp_path):
    spec, _ = g1
    bus, lines = LocalBus(), Lines()
    sim = SimRobot(spec, g1_model(spec), robot_def("g1"), bus.endpoint(), say=lines)
    first = OnnxSession(f"{G1_POLICY}/policy.onnx", spec.observation.size, spec.action.size)
    rt = RobotRuntime(spec, g1_model(spec), first, robot_def("g1"), bus.endpoint(),
                      RuntimeConfig(damping_s=0.1, move_s=0.2, command="fixed", fixed_command=(0.5, 0.0, 0.0)), say=lines)
    rt.swap = HotSwap(spec, first, G1_POLICY, events=tmp_path / "log.swaps.jsonl", say=lines)
    rt.log = StepLog(tmp_path / "log", rt.log_groups())
    return sim, rt, lines, first


def _acted_by(log, first):
    """Per policy-mode step: the logged action minus the shipped policy's action on the logged observation."""
    rows = np.flatnonzero(log["mode"] == POLICY)
    return rows, np.array([log["action"][i] - first(log["obs"][i]) for i in rows])


def test_swap_between_steps_then_rollback(g1, tmp_path):
    sim, rt, lines, first = _runtime(g1, tmp_path)
    t = lockstep(rt, sim, 0.5)  # 25 ticks; policy mode from ~0.32 s
    answer = rt.swap.request(_candidate(tmp_path, "plus"), wait=True)
    assert answer.startswith("ready: policy 1 from") and "acts from the next control step" in answer
    t = lockstep(rt, sim, 0.2, t0=t)  # 10 ticks of policy 1
    assert rt.swap.request_rollback() == "rolling back to policy 0 at the next control step"
    lockstep(rt, sim, 0.2, t0=t)  # 10 ticks of policy 0 again
    log = load_log(rt.log.close())
    n = len(log["t"])
    # 25 + 10 + 10 ticks, the first one before any state arrived (no row): 44 rows; the swap at row 24 (the 26th
    # tick, the first after the request), the rollback 10 rows later
    assert n == 44
    np.testing.assert_array_equal(log["policy"], [0] * 24 + [1] * 10 + [0] * 10)
    np.testing.assert_array_equal(np.flatnonzero(log["swap"] == 1), [24])
    np.testing.assert_array_equal(np.flatnonzero(log["swap"] == 2), [34])
    rows, diff = _acted_by(log, first)
    expect = np.where(log["policy"][rows] == 1, DELTA, 0.0)
    np.testing.assert_allclose(diff, np.repeat(expect[:, None], 29, axis=1), atol=1e-5)
    events = [json.loads(x) for x in (tmp_path / "log.swaps.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["start", "ready", "swap", "rollback"]
    assert events[2]["policy"] == 1 and events[3]["policy"] == 0 and len(events[2]["sha256"]) == 64
    assert lines == []


@pytest.mark.parametrize("edit, reason", [
    (lambda s: s["action"].update(joint_names=[s["action"]["joint_names"][1], s["action"]["joint_names"][0]]
                                  + s["action"]["joint_names"][2:]),
     "action joint 0 is 'left_hip_roll_joint', the running policy's is 'left_hip_pitch_joint'"),
    (lambda s: s["action"].update(kp=[2 * k for k in s["action"]["kp"]]), "its deploy spec's action.kp differs"),
])
def test_mismatched_candidate_is_refused_and_the_old_policy_keeps_acting(g1, tmp_path, edit, reason):
    sim, rt, lines, first = _runtime(g1, tmp_path)
    t = lockstep(rt, sim, 0.4)
    answer = rt.swap.request(_candidate(tmp_path, "bad", edit=edit), wait=True)
    assert answer.startswith("refused: ") and reason in answer and answer.endswith("policy 0 keeps running")
    assert "\n" not in answer and lines == [f"hot swap {answer}"]
    lockstep(rt, sim, 0.2, t0=t)
    log = load_log(rt.log.close())
    assert (log["policy"] == 0).all() and (log["swap"] == 0).all()
    rows, diff = _acted_by(log, first)
    assert len(rows) > 10
    np.testing.assert_allclose(diff, 0.0, atol=1e-5)


def test_rollback_without_a_previous_policy_and_a_folder_without_a_policy(g1, tmp_path):
    spec, _ = g1
    swap = HotSwap(spec, lambda obs: np.zeros(29), say=Lines())
    assert swap.request_rollback() == "refused: no previous policy to roll back to; policy 0 keeps running"
    (tmp_path / "empty").mkdir()
    answer = swap.request(tmp_path / "empty", wait=True)
    assert answer == (f"refused: {tmp_path / 'empty'}: {tmp_path / 'empty'} holds no policy.onnx and deploy_spec.json: "
                      f"pass a folder `unilab export` wrote; policy 0 keeps running")


class _ThreadNoting(OnnxSession):
    """An :class:`OnnxSession` that notes the thread it was opened on and the thread of each inference."""

    made: list[_ThreadNoting] = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.opened_on, self.ran_on = threading.current_thread().name, []
        _ThreadNoting.made.append(self)

    def __call__(self, obs):
        self.ran_on.append(threading.current_thread().name)
        return super().__call__(obs)


def test_the_candidate_loads_and_warms_up_off_the_control_thread(g1, tmp_path, monkeypatch):
    """The candidate loads while the loop runs: it is opened and warmed up on the loader's thread, the swap lands at
    a step boundary, and from there the control thread runs it once per step, as it ran the policy before."""
    monkeypatch.setattr("unilab_robot.swap.OnnxSession", _ThreadNoting)
    monkeypatch.setattr(_ThreadNoting, "made", [])
    sim, rt, lines, first = _runtime(g1, tmp_path)
    t = lockstep(rt, sim, 0.4)
    assert rt.swap.request(_candidate(tmp_path, "plus"), wait=False).startswith("loading ")
    t = run_lockstep(rt, sim, 2.0, t0=t, until=lambda: rt.policy_id == 1)
    lockstep(rt, sim, 0.1, t0=t)
    log = load_log(rt.log.close())
    at = int(np.flatnonzero(log["swap"] == 1)[0])
    assert (log["policy"][:at] == 0).all() and (log["policy"][at:] == 1).all()
    [candidate] = _ThreadNoting.made
    control = threading.current_thread().name
    assert candidate.opened_on == "unilab-hot-swap" != control
    warmup = rt.swap.warmup
    assert warmup > 0 and candidate.ran_on[:warmup] == ["unilab-hot-swap"] * warmup  # before it could act
    acted = int((log["mode"][at:] == POLICY).sum())  # the steps it acted on, the swap step the first
    assert acted > 0 and candidate.ran_on[warmup:] == [control] * acted


def test_control_channel_on_loopback(g1, tmp_path):
    spec, _ = g1
    swap = HotSwap(spec, lambda obs: np.zeros(29), say=Lines())
    server = serve(swap, 0)
    try:
        host, port = server.server_address
        assert host == "127.0.0.1"
        assert ask(port, f"swap {_candidate(tmp_path, 'plus')}").startswith("ready: policy 1")
        swap.boundary()
        assert ask(port, "status").startswith("policy 1 (")
        assert ask(port, "rollback") == "rolling back to policy 0 at the next control step"
        assert ask(port, "jump").startswith("refused: unknown request 'jump'")
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(ConnectionError, match="no runtime answers on 127.0.0.1"):
        ask(port, "status", timeout=2)


def test_lockstep_command_measures_a_swap(tmp_path, capsys):
    from trainers.cli import main

    # start-up 2 s on the gantry, the swap asked at 2.5 s, one 1 s episode: 3 s of virtual time after the first tick
    assert main(["robot", "lockstep", G1_POLICY, "--episodes", "1", "--episode-s", "1", "--swap",
                 str(_candidate(tmp_path, "plus")), "--swap-at", "2.5", "--log", str(tmp_path / "log")]) == 0
    swap = json.loads(capsys.readouterr().out)["swap"]
    assert swap["swapped"] and swap["period_ms"] == 20.0 and swap["swap_row"] >= 2.5 / 0.02 - 1
    # measured, not bounded (the machine's load is not the swap's): the swap step beside the others, the misses counted
    assert swap["swap_step_ms"] > 0 and swap["others_ms_p50"] > 0 and swap["missed"] >= 0
    log = load_log(tmp_path / "log")
    assert (log["policy"][:swap["swap_row"]] == 0).all() and (log["policy"][swap["swap_row"]:] == 1).all()


def test_control_commands_without_a_runtime_say_what_to_do(capsys):
    from trainers.cli import main

    assert main(["robot", "rollback", "--port", "1"]) == 2
    assert capsys.readouterr().err.strip() == ("unilab robot: no runtime answers on 127.0.0.1:1 (ConnectionRefusedError): "
                                               "start `unilab robot run ... --control-port 1` first")
    assert main(["robot", "lockstep", G1_POLICY, "--swap", "x"]) == 2
    assert "add --log PATH" in capsys.readouterr().err
