"""The bridge over Cyclone DDS, on 127.0.0.1 only: the configuration it runs under, a message round trip,
the two programs walking the shipped G1 as two processes, and the commands without the extra installed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from robot_support import G1_POLICY
from unilab_robot import messages as M
from unilab_robot.crc import crc_ok, stamp_crc
from unilab_robot.dds_config import ENV, DdsConfig

DOMAIN = 100 + os.getpid() % 100  # a domain of this test run's own


def test_config_is_loopback_only():
    c = DdsConfig(domain_id=3)
    xml = c.xml()
    assert c.local_only
    assert '<NetworkInterface address="127.0.0.1" multicast="false"/>' in xml
    assert "<AllowMulticast>false</AllowMulticast>" in xml and '<Peers><Peer address="127.0.0.1"/></Peers>' in xml
    with pytest.raises(ValueError, match="loopback interface reaches only loopback peers"):
        DdsConfig(peers=("192.168.123.161",))
    assert not DdsConfig(interface="enp3s0", peers=("192.168.123.161",)).local_only


def test_runs_under_the_loopback_config_and_round_trips(tmp_path):
    dds = pytest.importorskip("unilab_robot.dds")
    trace = tmp_path / "cyclone.log"
    config = DdsConfig(domain_id=DOMAIN, trace_file=str(trace))
    topics = {M.TOPIC_CMD: M.HG_LOW_CMD}
    a = dds.DdsTransport(config, topics, publish=(M.TOPIC_CMD,), subscribe=())
    b = dds.DdsTransport(config, topics, publish=(), subscribe=(M.TOPIC_CMD,))
    assert os.environ[ENV] == config.xml()
    # what Cyclone itself says it runs with: only lo, multicast off, the one peer 127.0.0.1
    log = trace.read_text()
    assert re.search(r"selected interfaces: lo \([^)]*\)\s*$", log, re.M), log  # lo and nothing else
    assert "Domain/General/AllowMulticast/#text: false" in log
    assert re.findall(r"Peers/Peer\[@Address\]: (\S+)", log) == ["127.0.0.1"]
    msg = M.new_cmd(M.HG)
    msg["motor_cmd"]["q"][:29] = np.linspace(-1, 1, 29)
    stamp_crc(msg)
    got, t0 = [], time.monotonic()
    while not got and time.monotonic() - t0 < 30.0:  # a hang guard (discovery on a busy machine), not a bound
        a.publish(M.TOPIC_CMD, msg)
        time.sleep(0.02)
        got = b.take(M.TOPIC_CMD)
    assert got and crc_ok(got[-1]) and M.to_bytes(got[-1]) == M.to_bytes(msg)
    a.close(), b.close()


def _unilab(*args):
    return [sys.executable, "-c", "import sys; from trainers.cli import main; sys.exit(main())", *args]


#: the runtime's watchdog on the state at 1 s, not its 0.1 s: this test proves the G1 walks over DDS between two
#: processes, and on a machine starved by other work the simulator can be off the CPU for 0.1 s, which latches the
#: runtime's fault (damping) for the rest of the run. That 0.1 s of silence damps is the runtime's own tests' claim,
#: on a virtual clock (tests/robot/test_robot_faults.py: a dead robot, a bad-CRC state). The simulator keeps its
#: 0.1 s: its damping lasts only until the next valid command (a starved runtime costs a few steps of damping), and
#: it is what keeps the robot from counting a fall on stale targets once the runtime has finished.
STARVED_MACHINE_STATE_TIMEOUT_S = "1.0"
#: a runtime that missed more than this share of its 20 ms deadlines was starved (quiet 2-core machine: 0-2 of ~350;
#: beside two busy processes: 152 of 314, and the G1 fell): the wire is still checked, the walk is not judged
STARVED_SHARE = 0.05


def test_g1_walks_with_runtime_and_sim_as_two_processes(tmp_path):
    pytest.importorskip("cyclonedds")
    d = str(DOMAIN + 1)
    sim = subprocess.Popen(_unilab("robot", "sim", G1_POLICY, "--domain", d, "--duration", "9",
                                   "--summary", str(tmp_path / "sim.json")),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run = subprocess.run(_unilab("robot", "run", G1_POLICY, "--domain", d, "--command", "fixed", "--vx", "0.5",
                                 "--state-timeout", STARVED_MACHINE_STATE_TIMEOUT_S,
                                 "--duration", "7", "--connect-timeout", "20", "--log", str(tmp_path / "log"),
                                 "--summary", str(tmp_path / "run.json")),
                         capture_output=True, text=True, timeout=60)
    sim_out, sim_err = sim.communicate(timeout=60)
    assert run.returncode == 0, run.stderr
    summary, robot = json.loads((tmp_path / "run.json").read_text()), json.loads((tmp_path / "sim.json").read_text())
    assert summary["fault"] is None and summary["mode"] == "policy" and summary["bad_crc"] == 0
    assert summary["gc_collections"] >= 5  # in the slack, every 25 steps, never a full one (off the control step)
    assert robot["bad_crc"] == 0 and robot["commands"] > 100, sim_err  # > 2 s of 50 Hz commands, starved or not
    log = np.load(tmp_path / "log.npz")
    assert (log["mode"] == 3).sum() > 150 and np.isfinite(log["obs"]).all()
    missed, steps = summary["missed_deadlines"], summary["steps"]
    if missed > STARVED_SHARE * steps:
        pytest.skip(f"the wire checks passed; the walk is not judged: other work starved the runtime ({missed} of "
                    f"{steps} deadlines missed, 0-2 on a quiet machine). It walks through the wire on a virtual clock "
                    f"in tests/robot/test_robot_lockstep.py")
    assert robot["falls"] == 0 and robot["commands"] > 200, sim_err
    assert robot["base_xy"][0] > 1.0  # ~4 s of policy at 0.5 m/s


def test_joint_name_mismatch_through_the_cli_sends_damping():
    dds = pytest.importorskip("unilab_robot.dds")
    listener = dds.DdsTransport(DdsConfig(domain_id=DOMAIN + 2), {M.TOPIC_CMD: M.GO_LOW_CMD}, publish=(),
                                subscribe=(M.TOPIC_CMD,), depth=8)
    run = subprocess.run(_unilab("robot", "run", G1_POLICY, "--robot", "go2", "--domain", str(DOMAIN + 2)),
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "do not match the go2's motors" in lines[0] and lines[0].endswith("damping sent")
    got = listener.take(M.TOPIC_CMD)
    assert got and crc_ok(got[-1])
    mc = got[-1]["motor_cmd"][:12]
    assert (mc["kp"] == 0).all() and (mc["kd"] == 1.0).all() and (mc["mode"] == 1).all()
    listener.close()


def test_without_cyclonedds_everything_imports_and_the_command_says_how_to_install():
    script = textwrap.dedent(f"""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "cyclonedds" or name.startswith("cyclonedds."):
                    raise ImportError("No module named 'cyclonedds'")
        sys.meta_path.insert(0, Block())
        import unilab_robot, unilab_robot.runtime, unilab_robot.sim, unilab_robot.messages
        import unilab_robot.robot_cli
        from trainers.cli import main
        sys.exit(main(["robot", "sim", "{G1_POLICY}"]))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and 'pip install -e ".[robot]"' in lines[0] and lines[0].startswith("unilab robot: ")
