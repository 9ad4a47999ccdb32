"""The gate before a hot swap (unilab_robot/gate.py) and the profile built from an identification
(unilab_robot/identified.py): a candidate that falls more often than the running policy on the same held-out
simulated episodes is not handed to the runtime; one that falls no more often is; the fine-tuning profile widens the
identified friction by its stated error and keeps the base profile's other sections.

The worse candidate is the shipped Go1 policy with every action pushed by 0.6 rad (the legs folded off their
gait), known to fall; the equal one is the shipped policy itself."""

from __future__ import annotations

import json

import numpy as np
import pytest

from robot_support import shifted_policy
from unilab_robot.gate import World, acting_folder, decide
from unilab_robot.identified import IdentifiedError, identified_profile, load_fit

GO1_POLICY = "policies/go1_joystick_real"


def _pushed(tmp_path, delta):
    """The shipped Go1 policy folder whose ONNX adds ``delta`` rad to every action."""
    return shifted_policy(GO1_POLICY, tmp_path / f"pushed_{delta}", delta)


def _fit(tmp_path, **values):
    path = tmp_path / "fit.json"
    path.write_text(json.dumps({"friction": 0.25, "strength": 1.0, "latency_steps": 0, "latency_ms": 0.0,
                                "payload_kg": 0.0, **values}))
    return path


def test_decide_accepts_no_more_falls_and_says_both_rates():
    v = decide(3, 3, 32, "floor friction 0.2", 90000)
    assert v.accepted and v.line.startswith("gate passed: the candidate falls in 9.4% of 32 held-out")
    v = decide(4, 3, 32, "floor friction 0.2", 90000)
    assert not v.accepted
    assert v.line == ("rejected: the candidate falls in 12.5% of 32 held-out simulated episodes (floor friction 0.2; "
                      "seed 90000), the running policy in 9.4%; not swapped, the running policy keeps running")


def test_world_from_a_fit_splits_the_loop_latency_between_the_two_ways(tmp_path):
    w = World.from_fit(load_fit(_fit(tmp_path, friction=0.3, latency_ms=16.0, payload_kg=2.0)))
    assert (w.floor_friction, w.latency_ms, w.payload_kg) == (0.3, 8.0, 2.0)
    assert w.describe() == "floor friction 0.3, payload +2 kg, latency 8 ms each way"
    with pytest.raises(ValueError, match="floor friction must be > 0"):
        World(floor_friction=0.0)


def test_identified_profile_widens_the_fit_and_keeps_the_rest(tmp_path):
    from wrappers.sim2real import load_profile

    p = identified_profile("go1_real", load_fit(_fit(tmp_path)), spread=0.2)
    assert p == {"extends": "go1_real", "domain_randomization": {"friction": [0.2, 0.3]}}
    resolved, base = load_profile(p), load_profile("go1_real")
    assert resolved["domain_randomization"] == {**base["domain_randomization"], "friction": [0.2, 0.3]}
    assert {k: v for k, v in resolved.items() if k != "domain_randomization"} == \
           {k: v for k, v in base.items() if k != "domain_randomization"}
    inline = {"extends": "go1_real", "domain_randomization": {"kp_scale": [0.8, 1.2]}}
    p = identified_profile(inline, load_fit(_fit(tmp_path, payload_kg=3.0)), spread=0.1)
    assert p["domain_randomization"] == {"kp_scale": [0.8, 1.2], "friction": [0.225, 0.275], "added_mass": [2.0, 4.0]}
    assert inline["domain_randomization"] == {"kp_scale": [0.8, 1.2]}  # the caller's mapping is not changed
    with pytest.raises(IdentifiedError, match="give --sim2real PROFILE too"):
        identified_profile(None, {"friction": 0.3})
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(IdentifiedError, match="has no positive 'friction'"):
        load_fit(tmp_path / "bad.json")
    with pytest.raises(IdentifiedError, match="does not exist"):
        load_fit(tmp_path / "missing.json")


def test_adapt_builds_its_profile_from_the_fit(tmp_path, capsys):
    """`unilab adapt --identified` refuses without a base profile, in one line, before any folder is made."""
    from trainers.cli import main

    assert main(["adapt", GO1_POLICY, "--sim2real", "none", "--identified", str(_fit(tmp_path)),
                 "--out", str(tmp_path / "out")]) == 2
    assert "give --sim2real PROFILE too" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_acting_folder_from_the_status_line():
    assert acting_folder("policy 1 (/a/b (c)) acting at step 40; previous: 0; candidate ready: none") == "/a/b (c)"
    with pytest.raises(ValueError, match="pass --against FOLDER"):
        acting_folder("policy 0 (started with) acting at step 3; previous: none; candidate ready: none")


def test_swap_with_a_gate_hands_over_only_what_passes(tmp_path, capsys):
    """`unilab robot swap --gate FIT.json` against a running runtime's control channel: the worse candidate is
    rejected (exit 3) and never loaded; the shipped policy itself passes and is loaded."""
    from trainers.cli import main
    from unilab_robot.policy import find_policy
    from unilab_robot.control import serve
    from unilab_robot.swap import HotSwap

    spec = find_policy(GO1_POLICY).spec
    swap = HotSwap(spec, lambda obs: np.zeros(12), GO1_POLICY, say=lambda line: None)
    server = serve(swap, 0)
    fit = _fit(tmp_path, friction=0.6)
    try:
        port = str(server.server_address[1])
        args = ["--port", port, "--gate", str(fit), "--gate-episodes", "3", "--gate-seed", "5"]
        assert main(["robot", "swap", str(_pushed(tmp_path, 0.6)), *args]) == 3
        out, err = capsys.readouterr()
        assert out.startswith("rejected: the candidate falls in ") and "(floor friction 0.6; seed 5)" in out
        assert "tripped" not in err  # the held-out episodes' falls are counted, not said one by one
        assert swap.status().endswith("candidate ready: none")
        assert main(["robot", "swap", GO1_POLICY, *args]) == 0
        captured = capsys.readouterr()
        assert "gate passed" in captured.err and captured.out.startswith("ready: policy 1")
    finally:
        server.shutdown()
        server.server_close()


def test_lockstep_counts_episodes_before_and_after_a_swap(tmp_path, capsys):
    """2 s on the gantry, then 1 s episodes: episode 1 ends at 3 s, before the swap asked at 3.5 s; episode 2 is the
    one the swap lands in (neither side); episodes 3 and 4 are the candidate's."""
    from trainers.cli import main

    assert main(["robot", "lockstep", GO1_POLICY, "--episodes", "4", "--episode-s", "1", "--swap", GO1_POLICY,
                 "--swap-at", "3.5", "--log", str(tmp_path / "log")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["before_swap"] == {"episodes": 1, "falls": 0} and out["after_swap"] == {"episodes": 2, "falls": 0}
    assert out["swap"]["swapped"]  # its step times are measured, not bounded here (tests/robot/test_hot_swap.py)
